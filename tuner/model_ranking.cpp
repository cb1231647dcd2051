#include "tuner/model_ranking.hpp"

#include <iostream>
#include <map>

#include "db/results_database.hpp"

namespace swr {

std::vector<int> compiled_registers(const std::vector<AttentionConfig>& configs,
                                    const std::vector<CompileResult>& results) {
  std::map<std::string, int> by_key;
  for (const CompileResult& result : results) {
    if (result.kernel.ok) by_key[result.job.config.key()] = result.kernel.registers;
  }
  std::vector<int> registers;
  registers.reserve(configs.size());
  for (const AttentionConfig& config : configs) {
    const auto found = by_key.find(config.key());
    registers.push_back(found == by_key.end() ? -1 : found->second);
  }
  return registers;
}

std::vector<int> registers_by_compiling(const Target& target,
                                        const std::vector<AttentionConfig>& configs,
                                        const CompileSettings& settings) {
  CompileSettings quiet = settings;
  quiet.json = true;  // no per-variant lines
  quiet.out_dir.reset();
  std::cerr << "compiling " << configs.size() << " variants for " << target.gpu.arch
            << " to read their register counts (cached after the first run)...\n";
  try {
    return compiled_registers(configs, compile_variants(target, configs, quiet).results);
  } catch (const std::runtime_error& error) {  // NVRTC cannot be loaded
    std::cerr << "cannot compile (" << error.what()
              << "): CTAs per SM come from estimated registers\n";
    return {};
  }
}

int store_predictions(const std::filesystem::path& database, const Target& target,
                      const std::vector<model::ModelPrediction>& predictions) {
  db::ResultsDatabase results(database);
  db::GpuRecord gpu = db::GpuRecord::from_profile(target.gpu);
  gpu.driver_version = "none";  // predicted, not run
  gpu.cuda_version = "none";
  const db::GpuId gpu_id = results.upsert_gpu(gpu);
  const db::ProblemId problem_id = results.upsert_problem(target.problem);
  std::vector<db::PredictionRecord> records;
  for (const model::ModelPrediction& prediction : predictions) {
    if (!prediction.runnable) continue;
    db::PredictionRecord record;
    record.gpu = gpu_id;
    record.problem = problem_id;
    record.config = results.upsert_config(prediction.config);
    record.model_name = kScheduleModelName;
    record.model_version = kScheduleModelVersion;
    record.requested_sectors = static_cast<double>(prediction.requested_sectors);
    record.sector_misses = static_cast<double>(prediction.misses);
    record.hit_rate = prediction.hit_rate;
    record.dram_bytes = static_cast<double>(prediction.dram_bytes());
    record.predicted_ms = prediction.predicted_seconds * 1e3;
    record.predicted_tflops = prediction.predicted_tflops;
    record.sampled = prediction.sampled;
    record.note = prediction.note;
    records.push_back(std::move(record));
  }
  results.record_predictions(records);  // the whole set or nothing, if killed while writing
  return static_cast<int>(records.size());
}

}  // namespace swr
