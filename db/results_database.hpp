// The SQLite results database: GPUs, problems, configs, every measured variant (one transaction
// each, so a killed run loses nothing already measured), and model predictions kept apart from
// measurements. One object holds one connection: use one per thread; several processes may
// share a file (WAL mode, 10 s busy timeout).
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "db/records.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace SQLite {
class Database;
}

namespace swr::db {

class StatementCache;

enum class OpenMode {
  read_write,  // creates or migrates the file
  read_only,   // for queries: the file must exist at this build's schema version
};

struct StoredProblem {
  ProblemId id{};
  std::string family;  // "attention", "attention-backward" or "gemm"
  std::string key;
  nlohmann::json json;
  std::optional<AttentionProblem> attention;  // the shape, for both attention passes
};

// A (gpu, problem) that has measurements, for listings such as `swr-tune show`.
struct ProblemSummary {
  StoredGpu gpu;
  StoredProblem problem;
  std::optional<StoredMeasurement> best;  // none when every variant failed
  int variants_measured = 0;              // configs measured (newest measurement per config)
  int variants_failed = 0;                // of those, the ones whose newest measurement failed
};

class ResultsDatabase {
 public:
  static constexpr int kBusyTimeoutMs = 10'000;

  // read_write: check_database_writable(path), then create or migrate; WAL and foreign keys on.
  // Throws UsageError (file untouched) for a path that is not a usable results database.
  explicit ResultsDatabase(const std::filesystem::path& path, OpenMode mode = OpenMode::read_write);
  ~ResultsDatabase();
  ResultsDatabase(ResultsDatabase&&) noexcept;
  ResultsDatabase& operator=(ResultsDatabase&&) noexcept;

  const std::filesystem::path& path() const { return path_; }
  OpenMode mode() const { return mode_; }
  int schema_version() const;

  // Insert-or-find by identity. upsert_gpu also stores the record's driver and CUDA versions.
  GpuId upsert_gpu(const GpuRecord& gpu);
  // Any family's problem or config (db/problem_rows.hpp: a problems row of the family's name with
  // the problem's JSON and its family's shape row: attention_problems for both attention passes,
  // gemm_problems for GEMM; a configs row with the config's JSON). upsert_problem validates first.
  template <class Problem>
  ProblemId upsert_problem(const Problem& problem);
  template <class Config>
  ConfigId upsert_config(const Config& config);

  // Lookups that never write (for read-only use).
  std::optional<GpuId> find_gpu(const GpuRecord& gpu) const;  // by identity, versions ignored
  std::vector<StoredGpu> gpus_named(std::string_view name) const;
  template <class Problem>
  std::optional<ProblemId> find_problem(const Problem& problem) const;
  template <class Config>
  std::optional<ConfigId> find_config(const Config& config) const;
  StoredGpu gpu(GpuId id) const;
  StoredProblem problem(ProblemId id) const;

  // Commits one measured variant in its own transaction; returns the measurement's id. Throws
  // std::invalid_argument for a record that breaks the rules in records.hpp (and
  // SQLite::Exception for one the schema refuses, e.g. a malformed measured_at).
  std::int64_t record_measurement(const MeasurementRecord& record);
  // Keys of every config with a measurement of this (gpu, problem), valid or failed: what a
  // resumed run skips.
  std::set<std::string> measured_config_keys(GpuId gpu, ProblemId problem) const;
  // The best valid variant: the one definition of it, used by show, query, export, the runtime
  // and the tuner. Per config, its newest measurement says whether it is valid and which build
  // (source hash) counts; its time is the fastest valid measurement of that build (repeated runs
  // of one binary differ only by interference, which only slows a run, as when results of
  // several machines are imported). A config whose newest measurement failed never counts; equal
  // times go to the smaller config key.
  std::optional<StoredMeasurement> best_for(GpuId gpu, ProblemId problem) const;
  // The newest measurement of each config: valid ones by median time, then the failed ones.
  std::vector<StoredMeasurement> measurements_for(GpuId gpu, ProblemId problem) const;
  // Every (gpu, problem) with measurements, optionally on one GPU only.
  std::vector<ProblemSummary> problem_summaries(std::optional<GpuId> gpu = std::nullopt) const;

  // The runtime's questions (db/tuned_shape_queries.cpp). Attention shapes with a valid current
  // measurement on `gpu`, all of them or those sharing head dim, dtype and causal with `like`;
  // GEMM shapes likewise, all of them or those of one dtype.
  std::vector<std::string> gpu_names() const;  // distinct, sorted
  std::vector<TunedShape> tuned_attention_shapes(GpuId gpu) const;
  std::vector<TunedShape> tuned_attention_shapes_like(GpuId gpu,
                                                      const AttentionProblem& like) const;
  // The same of the backward pass (its problems are keyed by the forward's shape).
  std::vector<TunedShape> tuned_attention_backward_shapes(GpuId gpu) const;
  std::vector<TunedShape> tuned_attention_backward_shapes_like(GpuId gpu,
                                                               const AttentionProblem& like) const;
  std::vector<TunedGemmShape> tuned_gemm_shapes(GpuId gpu) const;
  std::vector<TunedGemmShape> tuned_gemm_shapes_like(GpuId gpu, DataType dtype) const;

  // Import (db/database_import.cpp). Every measurement of both families, oldest first, with its
  // GPU, problem and config by identity; `other_families` receives how many were left out because
  // their problem has no shape row of a family this build reads.
  std::vector<PortableMeasurement> portable_measurements(
      std::size_t* other_families = nullptr) const;
  // Adds, in one transaction, each measurement the file does not hold yet (same triple,
  // measured_at, source hash, status and median), creating GPUs, problems and configs as needed;
  // changes no row that is there. Throws UsageError for an invalid problem, and
  // std::invalid_argument for a problem and a config of different families.
  ImportCounts import_measurements(const std::vector<PortableMeasurement>& measurements);

  std::int64_t record_prediction(const PredictionRecord& record);
  // A model's predictions for one shape, all in one transaction (all stored or none); their ids.
  std::vector<std::int64_t> record_predictions(const std::vector<PredictionRecord>& records);
  // The newest prediction of each (config, model), by model name then predicted time.
  std::vector<StoredPrediction> predictions_for(GpuId gpu, ProblemId problem) const;

 private:
  void require_writable(const char* operation) const;

  std::filesystem::path path_;
  OpenMode mode_ = OpenMode::read_write;
  std::unique_ptr<SQLite::Database> database_;
  std::unique_ptr<StatementCache> statements_;  // after database_: finalized before it closes
  // As opened: read-only files may be of an older readable version (attention_shape_columns).
  int schema_version_ = 0;
};

}  // namespace swr::db
