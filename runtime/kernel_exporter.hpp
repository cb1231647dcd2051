// `swr-tune export`: the best variant of every shape tuned on a GPU, attention, its backward and
// GEMM, compiled again for that GPU's arch (through the cubin cache), written as cubins plus
// manifest.json. The
// export refuses a variant whose build changed since it was measured (a template or NVRTC change
// gives another source hash), unless told to take it with the old figures.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "db/results_database.hpp"
#include "runtime/cubin_builder.hpp"
#include "runtime/export_manifest.hpp"

namespace swr {

// One shape to export: the fastest valid variant of a tuned shape (the fastest GPU row of that
// name when several tuned it).
template <class Problem>
struct ExportSelectionOf {
  db::GpuRecord gpu;
  Problem problem;
  db::StoredMeasurement best;
};

using ExportSelection = ExportSelectionOf<AttentionProblem>;
using GemmExportSelection = ExportSelectionOf<GemmProblem>;
using BackwardExportSelection = ExportSelectionOf<AttentionBackwardProblem>;

struct ExportSelections {
  std::vector<ExportSelection> attention;  // by shape key
  std::vector<GemmExportSelection> gemm;   // by shape key
  // By shape key: the fastest valid variant, then, where it is not deterministic, the fastest
  // valid deterministic one if any (best_measurement_meeting), so that an export serves a caller
  // that asks for deterministic dQ as the database does.
  std::vector<BackwardExportSelection> backward;

  std::size_t size() const { return attention.size() + gemm.size() + backward.size(); }
};

// Which families an export takes (`swr-tune export --family`): all unless one is named.
struct ExportFamilies {
  bool attention = true;
  bool attention_backward = true;
  bool gemm = true;
};

// Throws UsageError when no GPU of that name has a valid result of the families asked for.
ExportSelections select_exports(const db::ResultsDatabase& database, const std::string& gpu,
                                ExportFamilies families = {});

struct ExportOptions {
  std::string gpu;
  ExportFamilies families;
  std::filesystem::path out_dir;
  // Export variants whose build changed since tuning (their measured figures are of the old one).
  bool allow_changed_source = false;
  // Replace an export of another GPU in out_dir (--force); without it that is refused.
  bool replace_other_gpu = false;
};

struct ExportSummary {
  ExportManifest manifest;
  std::size_t cubin_files = 0;
  std::size_t from_cache = 0;
  std::vector<std::string> changed_sources;  // "problem config" of builds that changed
};

// Checks the target and compiles everything before writing anything: bad input (UsageError) or
// a failed compile (std::runtime_error) leave the directory untouched.
ExportSummary export_kernels(const db::ResultsDatabase& database, const CubinBuilder& builder,
                             const ExportOptions& options);

// "<config key>-d128-f16-causal-sm_90a.cubin": one file per variant, compiled part and arch, so
// shapes that share a kernel share its file.
std::string exported_cubin_name(const AttentionProblem& problem, const AttentionConfig& config,
                                const std::string& arch);
// "gemm-m128n256k64w2x4s3-grid_f16-sm_90a.cubin": one file per kernel binary (the config without
// its swizzle, which is a launch argument), dtype and arch.
std::string exported_cubin_name(const GemmProblem& problem, const GemmConfig& config,
                                const std::string& arch);
// "bwd-m64n128w8s2-cyclic-grid-head_major-d128-f16-causal-sm_90a.cubin": a module per variant,
// compiled part and arch, as the forward's (a backward config's key starts with "bwd-", a
// forward's never does).
std::string exported_cubin_name(const AttentionBackwardProblem& problem,
                                const AttentionBackwardConfig& config, const std::string& arch);

}  // namespace swr
