// Shared pieces of the runtime tests: results databases on real SQLite files with measurements of
// chosen shapes (attention and GEMM), and a CubinBuilder that makes stand-in cubins without NVRTC.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "db/results_database.hpp"
#include "run_swr_tune.hpp"
#include "runtime/cubin_builder.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "tests/fixtures/problem_builders.hpp"

namespace swr::test {

// The H200 as the tuner records it for --gpu h200: 132 SMs, 60 MiB of L2 (two partitions, from
// the built-in profile).
db::GpuRecord h200_record();

using fixtures::attention_shape;

// A config by its key (the test fails loudly on a typo).
AttentionConfig config_named(const std::string& key);

GemmProblem gemm_shape(int m, int n, int k, DataType dtype = DataType::f16);
GemmConfig gemm_config_named(const std::string& key);

// What FakeCubinBuilder reports as the build of a variant: the tests record it as the measured
// source hash, so that an export finds the build unchanged.
std::string fake_source_hash(const AttentionProblem& problem, const AttentionConfig& config,
                             const std::string& arch);
// The same for a GEMM kernel binary: configs that differ only in their swizzle share it.
std::string fake_source_hash(const GemmProblem& problem, const GemmConfig& config,
                             const std::string& arch);

// The same for an attention backward module (its compiled part is its forward shape's).
std::string fake_source_hash(const AttentionBackwardProblem& problem,
                             const AttentionBackwardConfig& config, const std::string& arch);
AttentionBackwardConfig backward_config_named(const std::string& key);

// Cubins that are an ELF header and the variant's name; the source hash as above, or `changed`
// for the variants listed there (a template edited since tuning).
class FakeCubinBuilder : public CubinBuilder {
 public:
  BuiltCubin build(const AttentionProblem& problem, const AttentionConfig& config,
                   const std::string& arch) const override;
  BuiltCubin build(const GemmProblem& problem, const GemmConfig& config,
                   const std::string& arch) const override;
  BuiltCubin build(const AttentionBackwardProblem& problem, const AttentionBackwardConfig& config,
                   const std::string& arch) const override;

  std::map<std::string, std::string> changed;  // config key -> source hash it builds to now
};

// `swr-tune export --gpu h200 --out OUT` of `database`, built by `builder`;
// `allow_changed_source`: --allow-changed-source.
ExportSummary export_h200(const db::ResultsDatabase& database, const std::filesystem::path& out,
                          const CubinBuilder& builder = FakeCubinBuilder(),
                          bool allow_changed_source = false);

// A results database file with helpers to record measurements.
class TunedDatabase {
 public:
  explicit TunedDatabase(std::filesystem::path path, db::GpuRecord gpu = h200_record());

  const std::filesystem::path& path() const { return path_; }
  db::ResultsDatabase& database() { return database_; }
  db::GpuId gpu() const { return gpu_; }

  // A valid measurement; measured_at in "YYYY-MM-DDTHH:MM:SS.mmmZ" or empty for now, the source
  // hash FakeCubinBuilder's unless given.
  std::int64_t add(const AttentionProblem& problem, const std::string& config_key, double median_ms,
                   const std::string& measured_at = "", const std::string& source_hash = "");
  std::int64_t add_failure(const AttentionProblem& problem, const std::string& config_key,
                           const std::string& measured_at = "");
  // The same for a GEMM problem and config.
  std::int64_t add(const GemmProblem& problem, const std::string& config_key, double median_ms,
                   const std::string& measured_at = "", const std::string& source_hash = "");
  std::int64_t add_failure(const GemmProblem& problem, const std::string& config_key,
                           const std::string& measured_at = "");
  // The same for the attention backward of a shape.
  std::int64_t add(const AttentionBackwardProblem& problem, const std::string& config_key,
                   double median_ms, const std::string& measured_at = "",
                   const std::string& source_hash = "");
  std::int64_t add_failure(const AttentionBackwardProblem& problem, const std::string& config_key,
                           const std::string& measured_at = "");
  std::int64_t measurement_rows() const;

 private:
  template <class Problem, class Config>
  std::int64_t add_valid(const Problem& problem, const Config& config, double median_ms,
                         const std::string& measured_at, const std::string& source_hash);
  template <class Problem, class Config>
  std::int64_t add_failed(const Problem& problem, const Config& config,
                          const std::string& measured_at);

  std::filesystem::path path_;
  db::ResultsDatabase database_;
  db::GpuId gpu_;
};

// Replaces the GPU record's identity in place: another machine's row of the same GPU name.
db::GpuRecord with_device_name(db::GpuRecord gpu, const std::string& device_name);

// The example programs: $SWR_EXAMPLE_PATH (attention) and $SWR_GEMM_EXAMPLE_PATH (GEMM) when set
// (binaries run from another directory), else the ones built; empty when examples are not built.
std::string example_path();
std::string gemm_example_path();

// Runs an example program as run_swr_tune runs swr-tune (through its documented SWR_TUNE_PATH
// override, restored afterwards).
ProcessResult run_example(const std::vector<std::string>& arguments,
                          const std::map<std::string, std::string>& environment = {});
ProcessResult run_gemm_example(const std::vector<std::string>& arguments,
                               const std::map<std::string, std::string>& environment = {});

}  // namespace swr::test
