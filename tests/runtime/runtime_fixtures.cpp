#include "tests/runtime/runtime_fixtures.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <stdlib.h>

#include <stdexcept>

namespace swr::test {

db::GpuRecord h200_record() {
  db::GpuRecord gpu;
  gpu.name = "h200";
  gpu.arch = "sm_90a";
  gpu.sm_count = 132;
  gpu.l2_bytes = 60LL * 1024 * 1024;
  gpu.device_name = "NVIDIA H200 (SXM 141GB)";
  gpu.driver_version = "580.65";
  gpu.cuda_version = "13.0";
  return gpu;
}

db::GpuRecord with_device_name(db::GpuRecord gpu, const std::string& device_name) {
  gpu.device_name = device_name;
  return gpu;
}

AttentionProblem attention_shape(int batch, int heads, int seq, int head_dim, bool causal,
                                 DataType dtype) {
  AttentionProblem problem;
  problem.batch = batch;
  problem.heads = heads;
  problem.seq_q = seq;
  problem.seq_kv = seq;
  problem.head_dim = head_dim;
  problem.dtype = dtype;
  problem.causal = causal;
  return problem;
}

AttentionConfig config_named(const std::string& key) {
  const std::optional<AttentionConfig> config = AttentionConfig::from_key(key);
  if (!config) throw std::invalid_argument("test config key '" + key + "' does not parse");
  return *config;
}

std::string fake_source_hash(const AttentionProblem& problem, const AttentionConfig& config,
                             const std::string& arch) {
  return "fake-" + config.key() + "-d" + std::to_string(problem.head_dim) + "-" +
         std::string(to_string(problem.dtype)) + (problem.causal ? "-causal-" : "-noncausal-") +
         arch;
}

BuiltCubin FakeCubinBuilder::build(const AttentionProblem& problem, const AttentionConfig& config,
                                   const std::string& arch) const {
  BuiltCubin built;
  const std::string body =
      "\x7f"
      "ELF stand-in for " +
      fake_source_hash(problem, config, arch);
  built.cubin.assign(body.begin(), body.end());
  const auto changed_hash = changed.find(config.key());
  built.source_hash = changed_hash != changed.end() ? changed_hash->second
                                                    : fake_source_hash(problem, config, arch);
  built.toolkit_version = "13.0";
  built.registers = 96;
  return built;
}

TunedDatabase::TunedDatabase(std::filesystem::path path, db::GpuRecord gpu)
    : path_(std::move(path)), database_(path_), gpu_(database_.upsert_gpu(gpu)) {}

std::int64_t TunedDatabase::add(const AttentionProblem& problem, const std::string& config_key,
                                double median_ms, const std::string& measured_at,
                                const std::string& source_hash) {
  const AttentionConfig config = config_named(config_key);
  db::MeasurementRecord record;
  record.gpu = gpu_;
  record.problem = database_.upsert_problem(problem);
  record.config = database_.upsert_config(config);
  record.status = db::MeasurementStatus::ok;
  record.median_ms = median_ms;
  record.p95_ms = median_ms * 1.02;
  record.min_ms = median_ms * 0.99;
  record.timed_runs = 20;
  record.tflops = problem.flops() / (median_ms * 1e-3) / 1e12;
  record.l2_hit_rate = 0.5;
  record.l2_sector_misses = 1.5e6;
  record.registers = 96;
  record.blocks_per_sm = 1;
  record.method = {{"l2", "flushed"}, {"runs", 20}};
  record.source_hash = source_hash.empty()
                           ? fake_source_hash(problem, config, database_.gpu(gpu_).gpu.arch)
                           : source_hash;
  record.toolkit_version = "13.0";
  record.driver_version = "580.65";
  record.measured_at = measured_at;
  return database_.record_measurement(record);
}

std::int64_t TunedDatabase::add_failure(const AttentionProblem& problem,
                                        const std::string& config_key,
                                        const std::string& measured_at) {
  const AttentionConfig config = config_named(config_key);
  db::MeasurementRecord record;
  record.gpu = gpu_;
  record.problem = database_.upsert_problem(problem);
  record.config = database_.upsert_config(config);
  record.status = db::MeasurementStatus::wrong_result;
  record.error = "relative error 0.5 above 2e-3";
  record.method = nlohmann::json::object();
  record.source_hash = fake_source_hash(problem, config, database_.gpu(gpu_).gpu.arch);
  record.toolkit_version = "13.0";
  record.driver_version = "580.65";
  record.measured_at = measured_at;
  return database_.record_measurement(record);
}

std::string example_path() {
  const char* overridden = std::getenv("SWR_EXAMPLE_PATH");
  return overridden != nullptr && *overridden != '\0' ? overridden : SWR_EXAMPLE_PATH;
}

ProcessResult run_example(const std::vector<std::string>& arguments,
                          const std::map<std::string, std::string>& environment) {
  const char* previous = std::getenv("SWR_TUNE_PATH");
  const std::string saved = previous != nullptr ? previous : "";
  setenv("SWR_TUNE_PATH", example_path().c_str(), 1);
  ProcessResult result = run_swr_tune(arguments, environment);
  if (previous != nullptr) {
    setenv("SWR_TUNE_PATH", saved.c_str(), 1);
  } else {
    unsetenv("SWR_TUNE_PATH");
  }
  return result;
}

std::int64_t TunedDatabase::measurement_rows() const {
  SQLite::Database sqlite(path_, SQLite::OPEN_READONLY);
  return sqlite.execAndGet("SELECT COUNT(*) FROM measurements").getInt64();
}

}  // namespace swr::test
