#include "tuner/model_ranking.hpp"

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>

#include "db/results_database.hpp"
#include "model/transfer_check.hpp"

namespace swr {
namespace {

template <class Config>
std::vector<int> registers_in_order(const std::vector<Config>& configs,
                                    const std::map<std::string, int>& by_key) {
  std::vector<int> registers;
  registers.reserve(configs.size());
  for (const Config& config : configs) {
    const auto found = by_key.find(config.key());
    registers.push_back(found == by_key.end() ? -1 : found->second);
  }
  return registers;
}

CompileSettings quiet_settings(const CompileSettings& settings, std::size_t count,
                               const std::string& arch) {
  CompileSettings quiet = settings;
  quiet.json = true;  // no per-variant lines
  quiet.out_dir.reset();
  std::cerr << "compiling " << count << " variants for " << arch
            << " to read their register counts (cached after the first run)...\n";
  return quiet;
}

void say_estimates(const std::runtime_error& error) {
  std::cerr << "cannot compile (" << error.what()
            << "): CTAs per SM come from estimated registers\n";
}

// The rows of one shape's predictions, written in one transaction.
template <class Problem>
int store_records(
    const std::filesystem::path& database, const GpuProfile& profile, const Problem& problem,
    const std::function<void(db::ResultsDatabase&, std::vector<db::PredictionRecord>&)>& fill) {
  db::ResultsDatabase results(database);
  db::GpuRecord gpu = db::GpuRecord::from_profile(profile);
  gpu.driver_version = "none";  // predicted, not run
  gpu.cuda_version = "none";
  const db::GpuId gpu_id = results.upsert_gpu(gpu);
  const db::ProblemId problem_id = results.upsert_problem(problem);
  std::vector<db::PredictionRecord> records;
  fill(results, records);
  const std::string name(kScheduleModelName);
  const std::string version(kScheduleModelVersion);
  for (db::PredictionRecord& record : records) {
    record.gpu = gpu_id;
    record.problem = problem_id;
    record.model_name.assign(name);
    record.model_version.assign(version);
  }
  results.record_predictions(records);  // the whole set or nothing, if killed while writing
  return static_cast<int>(records.size());
}

// The 1-based place of prediction `index` in `ranked` (the predicted order).
std::size_t predicted_rank(const std::vector<std::size_t>& ranked, std::size_t index) {
  return static_cast<std::size_t>(std::find(ranked.begin(), ranked.end(), index) - ranked.begin()) +
         1;
}

}  // namespace

std::vector<int> compiled_registers(const std::vector<AttentionConfig>& configs,
                                    const std::vector<CompileResult>& results) {
  std::map<std::string, int> by_key;
  for (const CompileResult& result : results) {
    if (result.kernel.ok) by_key[result.job.config.key()] = result.kernel.registers;
  }
  return registers_in_order(configs, by_key);
}

std::vector<int> compiled_registers(const std::vector<GemmConfig>& configs,
                                    const GemmCompileOutcome& outcome) {
  std::map<std::string, int> by_key;
  for (const CompiledGemmBinary& binary : outcome.binaries) {
    if (!binary.binary.kernel.ok) continue;
    for (const GemmConfig& variant : binary.variants) {
      by_key[variant.key()] = binary.binary.kernel.registers;
    }
  }
  return registers_in_order(configs, by_key);
}

std::vector<int> registers_by_compiling(const Target& target,
                                        const std::vector<AttentionConfig>& configs,
                                        const CompileSettings& settings) {
  try {
    const CompileSettings quiet = quiet_settings(settings, configs.size(), target.gpu.arch);
    return compiled_registers(configs, compile_variants(target, configs, quiet).results);
  } catch (const std::runtime_error& error) {  // NVRTC cannot be loaded
    say_estimates(error);
    return {};
  }
}

std::vector<int> registers_by_compiling(const GemmTarget& target,
                                        const std::vector<GemmConfig>& configs,
                                        const CompileSettings& settings) {
  try {
    const CompileSettings quiet = quiet_settings(settings, configs.size(), target.gpu.arch);
    return compiled_registers(configs, compile_gemm_variants(target, configs, quiet));
  } catch (const std::runtime_error& error) {
    say_estimates(error);
    return {};
  }
}

int store_predictions(const std::filesystem::path& database, const Target& target,
                      const std::vector<model::ModelPrediction>& predictions) {
  return store_records(
      database, target.gpu, target.problem,
      [&](db::ResultsDatabase& results, std::vector<db::PredictionRecord>& records) {
        for (const model::ModelPrediction& prediction : predictions) {
          if (!prediction.runnable) continue;
          db::PredictionRecord record;
          record.config = results.upsert_config(prediction.config);
          record.requested_sectors = static_cast<double>(prediction.requested_sectors);
          record.sector_misses = static_cast<double>(prediction.misses);
          record.hit_rate = prediction.hit_rate;
          record.dram_bytes = static_cast<double>(prediction.dram_bytes());
          record.predicted_ms = prediction.predicted_seconds * 1e3;
          record.predicted_tflops = prediction.predicted_tflops;
          record.sampled = prediction.sampled;
          record.note =
              prediction.note + "; time: " + prediction.time_rule +
              (prediction.calibrated_on.empty() ? "" : " (" + prediction.calibrated_on + ")");
          records.push_back(std::move(record));
        }
      });
}

int store_predictions(const std::filesystem::path& database, const GemmTarget& target,
                      const std::vector<model::GemmPrediction>& predictions) {
  return store_records(
      database, target.gpu, target.problem,
      [&](db::ResultsDatabase& results, std::vector<db::PredictionRecord>& records) {
        for (const model::GemmPrediction& prediction : predictions) {
          if (!prediction.runnable) continue;
          db::PredictionRecord record;
          record.config = results.upsert_config(prediction.config);
          record.requested_sectors = static_cast<double>(prediction.traffic.requested_sectors);
          record.sector_misses = static_cast<double>(prediction.traffic.misses);
          record.hit_rate = prediction.traffic.hit_rate;
          record.dram_bytes = static_cast<double>(prediction.traffic.dram_bytes_read +
                                                  prediction.traffic.dram_bytes_written);
          record.predicted_ms = prediction.time.seconds * 1e3;
          record.predicted_tflops = prediction.tflops;
          record.note =
              prediction.note + "; time: " + prediction.time.rule +
              (prediction.time.calibrated_on.empty() ? ""
                                                     : " (" + prediction.time.calibrated_on + ")");
          records.push_back(std::move(record));
        }
      });
}

std::size_t add_form_checks(const std::vector<model::ModelPrediction>& predictions,
                            const std::vector<std::size_t>& ranked,
                            std::vector<std::size_t>& chosen) {
  std::size_t added = 0;
  for (std::size_t index : ranked) {
    const model::ModelPrediction& prediction = predictions[index];
    if (prediction.form_calibrated) continue;
    const bool form_chosen = std::any_of(chosen.begin(), chosen.end(), [&](std::size_t other) {
      return model::same_kernel_form(predictions[other].config, prediction.config);
    });
    if (form_chosen) continue;
    chosen.push_back(index);
    ++added;
  }
  return added;
}

std::vector<std::size_t> model_top_positions(std::size_t ranked, int k) {
  const std::size_t top = std::min<std::size_t>(static_cast<std::size_t>(k), ranked);
  std::vector<std::size_t> positions(top);
  for (std::size_t i = 0; i < top; ++i) positions[i] = i;
  const std::size_t rest = ranked - top;
  const std::size_t checks = std::min<std::size_t>(kModelTopChecks, rest);
  for (std::size_t c = 1; c <= checks; ++c) {
    // Evenly over the rest: ranks at 1/(checks+1), 2/(checks+1), ... of it.
    positions.push_back(top + c * rest / (checks + 1));
  }
  return positions;
}

std::size_t add_single_cta_twins(const std::vector<model::BackwardPrediction>& predictions,
                                 const std::vector<std::size_t>& ranked, std::size_t top,
                                 std::vector<std::size_t>& chosen) {
  std::map<std::string, std::size_t> by_key;
  for (std::size_t index : ranked) by_key.emplace(predictions[index].config_key, index);
  std::size_t added = 0;
  for (std::size_t position = 0; position < std::min(top, chosen.size()); ++position) {
    const AttentionBackwardConfig& config = predictions[chosen[position]].config;
    if (!config.cta_pairs) continue;
    AttentionBackwardConfig twin = config;
    twin.cta_pairs = false;
    const auto found = by_key.find(twin.key());
    if (found == by_key.end()) continue;
    if (std::find(chosen.begin(), chosen.end(), found->second) != chosen.end()) continue;
    chosen.push_back(found->second);
    ++added;
  }
  return added;
}

std::vector<AttentionBackwardConfig> backward_model_guided_variants(
    const AttentionBackwardProblem& problem, const GpuProfile& gpu,
    const std::vector<AttentionBackwardConfig>& configs, int k,
    std::map<std::string, nlohmann::json>& selection) {
  std::vector<model::BackwardPrediction> predictions =
      model::predict_backward_space(problem, gpu, configs);
  std::vector<std::size_t> ranked;
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    if (predictions[i].runnable) ranked.push_back(i);
  }
  // As the table ranks them: by predicted time, then by predicted misses.
  std::stable_sort(ranked.begin(), ranked.end(), [&](std::size_t a, std::size_t b) {
    if (predictions[a].predicted_seconds != predictions[b].predicted_seconds) {
      return predictions[a].predicted_seconds < predictions[b].predicted_seconds;
    }
    return predictions[a].misses < predictions[b].misses;
  });
  const std::vector<std::size_t> positions = model_top_positions(ranked.size(), k);
  const std::size_t top = std::min<std::size_t>(static_cast<std::size_t>(k), ranked.size());
  const std::size_t spread_checks = positions.size() - top;
  std::vector<std::size_t> chosen;
  for (std::size_t position : positions) chosen.push_back(ranked[position]);
  const std::size_t twins = add_single_cta_twins(predictions, ranked, top, chosen);
  std::cout << "model-guided tune of " << problem.key() << " (--model-top " << k
            << "): measuring the model's " << top << " first of " << ranked.size()
            << " variants (predicted time, then predicted L2 misses), " << spread_checks
            << " spread-out checks and " << twins << " single-CTA twins of its CTA pairs\n";
  std::vector<AttentionBackwardConfig> variants;
  for (std::size_t position = 0; position < chosen.size(); ++position) {
    const model::BackwardPrediction& prediction = predictions[chosen[position]];
    const std::size_t rank = predicted_rank(ranked, chosen[position]);
    const bool check = position >= top;
    const bool twin = position >= top + spread_checks;
    const char* role = twin ? "twin " : check ? "check" : "top  ";
    std::cout << "  " << role << " #" << rank << "  " << prediction.config_key << "  predicted "
              << prediction.predicted_seconds * 1e3 << " ms, " << prediction.misses
              << " L2 misses\n";
    selection[problem.key() + "/" + prediction.config_key] = {
        {"rule", "model top K"},
        {"k", k},
        {"space", ranked.size()},
        {"predicted_rank", rank},
        {"predicted_ms", prediction.predicted_seconds * 1e3},
        {"predicted_misses", prediction.misses},
        {"check", check},
        {"single_cta_twin", twin},
        {"model", "backward schedule replay (model/backward_prediction.hpp)"}};
    variants.push_back(prediction.config);
  }
  std::cout << std::flush;
  return variants;
}

std::vector<AttentionConfig> model_guided_variants(
    const Target& target, const std::vector<AttentionConfig>& configs, int k,
    const CompileSettings& settings, std::map<std::string, nlohmann::json>& selection) {
  const model::TimeModel* time_model = model::embedded_time_model();
  std::vector<model::ModelPrediction> predictions =
      model::predict_space(target.problem, target.gpu, configs, {}, settings.jobs,
                           registers_by_compiling(target, configs, settings));
  model::apply_time_model(predictions, target.problem, target.gpu, time_model);
  std::vector<std::size_t> ranked;
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    if (predictions[i].runnable) ranked.push_back(i);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&](std::size_t a, std::size_t b) {
    return predictions[a].predicted_seconds < predictions[b].predicted_seconds;
  });
  const std::vector<std::size_t> positions = model_top_positions(ranked.size(), k);
  const std::size_t top = std::min<std::size_t>(static_cast<std::size_t>(k), ranked.size());
  const std::size_t spread_checks = positions.size() - top;
  std::vector<std::size_t> chosen;
  for (std::size_t position : positions) chosen.push_back(ranked[position]);
  const std::size_t form_checks = add_form_checks(predictions, ranked, chosen);
  const std::size_t checks = spread_checks + form_checks;
  const std::string calibration =
      time_model ? "time model calibrated on " + time_model->calibration().gpu + " (" +
                       time_model->calibration().checked_on + ")"
                 : std::string("no time model calibration embedded: roofline times");
  std::cout << "model-guided tune of " << target.problem.key() << " (--model-top " << k
            << "): measuring the model's " << top << " fastest-predicted of " << ranked.size()
            << " variants, " << spread_checks << " spread-out checks and " << form_checks
            << " of kernel forms the time model has no measurement of; the other "
            << ranked.size() - top - checks << " are not measured (" << calibration << ")\n";
  std::vector<AttentionConfig> variants;
  for (std::size_t position = 0; position < chosen.size(); ++position) {
    const model::ModelPrediction& prediction = predictions[chosen[position]];
    const std::size_t rank = predicted_rank(ranked, chosen[position]);
    const bool check = position >= top;
    const bool form_check = position >= top + spread_checks;
    const char* role = form_check ? "form " : check ? "check" : "top  ";
    std::cout << "  " << role << " #" << rank << "  " << prediction.config_key << "  predicted "
              << prediction.predicted_seconds * 1e3 << " ms"
              << (form_check ? " (its form's time borrowed: " + prediction.time_rule + ")" : "")
              << "\n";
    selection[target.problem.key() + "/" + prediction.config_key] = {
        {"rule", "model top K"},
        {"k", k},
        {"space", ranked.size()},
        {"predicted_rank", rank},
        {"predicted_ms", prediction.predicted_seconds * 1e3},
        {"check", check},
        {"form_check", form_check},
        {"model", std::string(kScheduleModelName) + " v" + kScheduleModelVersion},
        {"calibration", calibration}};
    variants.push_back(prediction.config);
  }
  std::cout << std::flush;
  return variants;
}

std::string prediction_accuracy_text(const std::string& family) {
  return "these times are PREDICTIONS, not measurements; " +
         model::transfer_accuracy_text(model::embedded_transfer_check(), family);
}

}  // namespace swr
