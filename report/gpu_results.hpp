// What the results database holds for one GPU, read once for the report: every problem (of any
// family) with its newest measurement per config, and the GPU's built-in profile (peak rate and
// bandwidth for the roofline) when its name has one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "db/results_database.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::report {

struct ProblemResults {
  db::StoredProblem problem;
  // Newest measurement per config, valid ones fastest first, failed ones last.
  std::vector<db::StoredMeasurement> measurements;
  // The best variant by the database's one rule (ResultsDatabase::best_for); none when every
  // variant failed.
  std::optional<db::StoredMeasurement> best_variant;

  const db::StoredMeasurement* best() const { return best_variant ? &*best_variant : nullptr; }
};

struct GpuResults {
  std::string name;                    // the profile name the database stores, e.g. "h200"
  std::vector<db::StoredGpu> records;  // usually one; several when the device name changed
  std::optional<GpuProfile> profile;
  // The database's order: attention (forward), attention-backward, each by shape; then gemm.
  std::vector<ProblemResults> problems;

  std::vector<const ProblemResults*> of_family(const std::string& family) const;
};

// Names of the GPUs with measurements, in the database's order.
std::vector<std::string> gpus_with_results(const db::ResultsDatabase& database);

// Everything measured on the GPU named `gpu_name` (a profile name as `swr-tune show` prints it).
// Throws UsageError, naming the GPUs the database has, when it has none of that name.
GpuResults load_gpu_results(const db::ResultsDatabase& database, const std::string& gpu_name);

// "B8 H1 S16K D128 f16 causal" for an attention forward problem, the same with " backward" for
// the backward pass, "4096x4096x4096 f16" for a GEMM, else the key.
std::string describe_problem(const db::StoredProblem& problem);
// "B8 H1 S16K D128 f16 causal": an attention shape, either pass.
std::string describe_attention_shape(const AttentionProblem& shape);

// 512 -> "512", 16384 -> "16K", 262144 -> "256K", 1048576 -> "1M".
std::string short_count(long long value);

}  // namespace swr::report
