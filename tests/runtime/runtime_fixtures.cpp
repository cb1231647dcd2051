#include "tests/runtime/runtime_fixtures.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <stdlib.h>

#include <stdexcept>

#include "generator/gemm_kernel_source.hpp"
#include "generator/kernel_source.hpp"

namespace swr::test {
namespace {

// A cubin stand-in: an ELF header and what it stands for.
BuiltCubin fake_cubin(const std::string& hash, const std::string& changed_hash) {
  BuiltCubin built;
  const std::string body =
      "\x7f"
      "ELF stand-in for " +
      hash;
  built.cubin.assign(body.begin(), body.end());
  built.source_hash = changed_hash.empty() ? hash : changed_hash;
  built.toolkit_version = "13.0";
  built.registers = 96;
  return built;
}

}  // namespace

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

std::string fake_source_hash(const AttentionBackwardProblem& problem,
                             const AttentionBackwardConfig& config, const std::string& arch) {
  return "fake-" + config.key() + "-" + compiled_problem_part(problem.shape) + "-" + arch;
}

AttentionBackwardConfig backward_config_named(const std::string& key) {
  const std::optional<AttentionBackwardConfig> config = AttentionBackwardConfig::from_key(key);
  if (!config) throw std::invalid_argument("test backward config key '" + key + "' does not parse");
  return *config;
}

GemmProblem gemm_shape(int m, int n, int k, DataType dtype) {
  return GemmProblem{m, n, k, dtype};
}

GemmConfig gemm_config_named(const std::string& key) {
  const std::optional<GemmConfig> config = GemmConfig::from_key(key);
  if (!config) throw std::invalid_argument("test GEMM config key '" + key + "' does not parse");
  return *config;
}

std::string fake_source_hash(const GemmProblem& problem, const GemmConfig& config,
                             const std::string& arch) {
  return "fake-gemm-" + gemm_binary_name(problem, config) + "-" + arch;
}

ExportSummary export_h200(const db::ResultsDatabase& database, const std::filesystem::path& out,
                          const CubinBuilder& builder, bool allow_changed_source) {
  ExportOptions options;
  options.gpu = "h200";
  options.out_dir = out;
  options.allow_changed_source = allow_changed_source;
  return export_kernels(database, builder, options);
}

BuiltCubin FakeCubinBuilder::build(const AttentionProblem& problem, const AttentionConfig& config,
                                   const std::string& arch) const {
  const auto changed_hash = changed.find(config.key());
  return fake_cubin(fake_source_hash(problem, config, arch),
                    changed_hash != changed.end() ? changed_hash->second : "");
}

BuiltCubin FakeCubinBuilder::build(const GemmProblem& problem, const GemmConfig& config,
                                   const std::string& arch) const {
  const auto changed_hash = changed.find(config.key());
  return fake_cubin(fake_source_hash(problem, config, arch),
                    changed_hash != changed.end() ? changed_hash->second : "");
}

BuiltCubin FakeCubinBuilder::build(const AttentionBackwardProblem& problem,
                                   const AttentionBackwardConfig& config,
                                   const std::string& arch) const {
  const auto changed_hash = changed.find(config.key());
  return fake_cubin(fake_source_hash(problem, config, arch),
                    changed_hash != changed.end() ? changed_hash->second : "");
}

TunedDatabase::TunedDatabase(std::filesystem::path path, db::GpuRecord gpu)
    : path_(std::move(path)), database_(path_), gpu_(database_.upsert_gpu(gpu)) {}

template <class Problem, class Config>
std::int64_t TunedDatabase::add_valid(const Problem& problem, const Config& config,
                                      double median_ms, const std::string& measured_at,
                                      const std::string& source_hash) {
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

template <class Problem, class Config>
std::int64_t TunedDatabase::add_failed(const Problem& problem, const Config& config,
                                       const std::string& measured_at) {
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

std::int64_t TunedDatabase::add(const AttentionProblem& problem, const std::string& config_key,
                                double median_ms, const std::string& measured_at,
                                const std::string& source_hash) {
  return add_valid(problem, config_named(config_key), median_ms, measured_at, source_hash);
}

std::int64_t TunedDatabase::add_failure(const AttentionProblem& problem,
                                        const std::string& config_key,
                                        const std::string& measured_at) {
  return add_failed(problem, config_named(config_key), measured_at);
}

std::int64_t TunedDatabase::add(const GemmProblem& problem, const std::string& config_key,
                                double median_ms, const std::string& measured_at,
                                const std::string& source_hash) {
  return add_valid(problem, gemm_config_named(config_key), median_ms, measured_at, source_hash);
}

std::int64_t TunedDatabase::add(const AttentionBackwardProblem& problem,
                                const std::string& config_key, double median_ms,
                                const std::string& measured_at, const std::string& source_hash) {
  return add_valid(problem, backward_config_named(config_key), median_ms, measured_at, source_hash);
}

std::int64_t TunedDatabase::add_failure(const AttentionBackwardProblem& problem,
                                        const std::string& config_key,
                                        const std::string& measured_at) {
  return add_failed(problem, backward_config_named(config_key), measured_at);
}

std::int64_t TunedDatabase::add_failure(const GemmProblem& problem, const std::string& config_key,
                                        const std::string& measured_at) {
  return add_failed(problem, gemm_config_named(config_key), measured_at);
}

namespace {

std::string overridable_path(const char* variable, const char* built) {
  const char* overridden = std::getenv(variable);
  return overridden != nullptr && *overridden != '\0' ? overridden : built;
}

ProcessResult run_program(const std::string& program, const std::vector<std::string>& arguments,
                          const std::map<std::string, std::string>& environment) {
  const char* previous = std::getenv("SWR_TUNE_PATH");
  const std::string saved = previous != nullptr ? previous : "";
  setenv("SWR_TUNE_PATH", program.c_str(), 1);
  ProcessResult result = run_swr_tune(arguments, environment);
  if (previous != nullptr) {
    setenv("SWR_TUNE_PATH", saved.c_str(), 1);
  } else {
    unsetenv("SWR_TUNE_PATH");
  }
  return result;
}

}  // namespace

std::string example_path() {
  return overridable_path("SWR_EXAMPLE_PATH", SWR_EXAMPLE_PATH);
}

std::string gemm_example_path() {
  return overridable_path("SWR_GEMM_EXAMPLE_PATH", SWR_GEMM_EXAMPLE_PATH);
}

ProcessResult run_example(const std::vector<std::string>& arguments,
                          const std::map<std::string, std::string>& environment) {
  return run_program(example_path(), arguments, environment);
}

ProcessResult run_gemm_example(const std::vector<std::string>& arguments,
                               const std::map<std::string, std::string>& environment) {
  return run_program(gemm_example_path(), arguments, environment);
}

std::int64_t TunedDatabase::measurement_rows() const {
  SQLite::Database sqlite(path_, SQLite::OPEN_READONLY);
  return sqlite.execAndGet("SELECT COUNT(*) FROM measurements").getInt64();
}

}  // namespace swr::test
