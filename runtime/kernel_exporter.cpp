#include "runtime/kernel_exporter.hpp"

#include <chrono>
#include <ctime>
#include <map>

#include "generator/gemm_kernel_source.hpp"
#include "generator/kernel_source.hpp"
#include "runtime/export_directory.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];  // room for any int the compiler imagines in each field
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(millis));
  return text;
}

std::string short_hash(const std::string& hash) {
  return hash.substr(0, 12);
}

// What differs between the families when an entry is made.
AttentionConfig config_of(const ExportSelection& selection) {
  return AttentionConfig::from_json(selection.best.config_json);
}

GemmConfig config_of(const GemmExportSelection& selection) {
  return GemmConfig::from_json(selection.best.config_json);
}

KernelSource source_of(const AttentionProblem& problem, const AttentionConfig& config) {
  return render_attention_kernel(problem, config);
}

KernelSource source_of(const GemmProblem& problem, const GemmConfig& config) {
  return render_gemm_kernel(problem, config);
}

// The fastest valid variant of every shape of one family tuned on `gpus`, by shape key: the
// fastest GPU row wins when several rows of this name tuned a shape.
template <class Problem, class TunedShapes>
std::vector<ExportSelectionOf<Problem>> select_family(const db::ResultsDatabase& database,
                                                      const std::vector<db::StoredGpu>& gpus,
                                                      const TunedShapes& tuned_shapes) {
  std::map<std::string, ExportSelectionOf<Problem>> by_shape;
  for (const db::StoredGpu& stored : gpus) {
    for (const db::TunedShapeOf<Problem>& shape : tuned_shapes(stored.id)) {
      std::optional<db::StoredMeasurement> best = database.best_for(stored.id, shape.id);
      if (!best) continue;
      const std::string key = shape.problem.key();
      auto existing = by_shape.find(key);
      if (existing == by_shape.end() ||
          *best->record.median_ms < *existing->second.best.record.median_ms) {
        by_shape.insert_or_assign(
            key, ExportSelectionOf<Problem>{stored.gpu, shape.problem, std::move(*best)});
      }
    }
  }
  std::vector<ExportSelectionOf<Problem>> selections;
  for (auto& [key, selection] : by_shape) selections.push_back(std::move(selection));
  return selections;
}

// Builds the entries of both families into one summary and one set of cubins.
class ExportAssembler {
 public:
  ExportAssembler(const CubinBuilder& builder, ExportSummary& summary)
      : builder_(builder), summary_(summary) {}

  template <class Kernel, class Problem>
  Kernel entry(const ExportSelectionOf<Problem>& selection) {
    const auto config = config_of(selection);
    const BuiltCubin built = builder_.build(selection.problem, config, selection.gpu.arch);
    if (built.from_cache) ++summary_.from_cache;
    const std::string& measured_hash = selection.best.record.source_hash;
    if (built.source_hash != measured_hash) {
      const std::string variant = selection.problem.key() + " " + config.key();
      summary_.changed_sources.push_back(variant);
      if (first_change_.empty()) {
        first_change_ = variant + ": measured build " + short_hash(measured_hash) +
                        ", this build " + short_hash(built.source_hash);
      }
    }
    const KernelSource source = source_of(selection.problem, config);
    Kernel kernel;
    kernel.gpu = selection.gpu;
    kernel.problem = selection.problem;
    kernel.config = config;
    kernel.entry = source.entry;
    kernel.block_threads = config.threads();
    kernel.dynamic_shared_bytes = source.dynamic_shared_bytes;
    kernel.arch = selection.gpu.arch;
    kernel.cubin_file = exported_cubin_name(selection.problem, config, kernel.arch);
    kernel.cubin_bytes = built.cubin.size();
    kernel.cubin_sha256 = cubin_sha256(built.cubin);
    kernel.registers = built.registers;
    kernel.compiled_source_hash = built.source_hash;
    kernel.toolkit_version = built.toolkit_version;
    kernel.measured = selection.best.record;
    cubins_.emplace(kernel.cubin_file, built.cubin);
    return kernel;
  }

  const std::map<std::string, std::vector<char>>& cubins() const { return cubins_; }
  const std::string& first_change() const { return first_change_; }

 private:
  const CubinBuilder& builder_;
  ExportSummary& summary_;
  std::map<std::string, std::vector<char>> cubins_;
  std::string first_change_;
};

}  // namespace

std::string exported_cubin_name(const AttentionProblem& problem, const AttentionConfig& config,
                                const std::string& arch) {
  std::string name = config.key();
  name += "-d" + std::to_string(problem.head_dim);
  name += "-";
  name += to_string(problem.dtype);
  name += problem.causal ? "-causal-" : "-noncausal-";
  name += arch;
  name += ".cubin";
  return name;
}

std::string exported_cubin_name(const GemmProblem& problem, const GemmConfig& config,
                                const std::string& arch) {
  return "gemm-" + gemm_binary_name(problem, config) + "-" + arch + ".cubin";
}

ExportSelections select_exports(const db::ResultsDatabase& database, const std::string& gpu,
                                ExportFamilies families) {
  const std::vector<db::StoredGpu> gpus = database.gpus_named(gpu);
  if (gpus.empty()) {
    std::string names;
    for (const std::string& name : database.gpu_names())
      names += (names.empty() ? "" : ", ") + name;
    throw UsageError("bad --gpu '" + gpu + "': no results for it in " + database.path().string() +
                     " (allowed: " + (names.empty() ? "none, the database is empty" : names) + ")");
  }
  ExportSelections selections;
  if (families.attention) {
    selections.attention = select_family<AttentionProblem>(
        database, gpus, [&](db::GpuId id) { return database.tuned_attention_shapes(id); });
  }
  if (families.gemm) {
    selections.gemm = select_family<GemmProblem>(
        database, gpus, [&](db::GpuId id) { return database.tuned_gemm_shapes(id); });
  }
  if (selections.size() == 0) {
    const std::string which = families.attention && families.gemm ? ""
                              : families.gemm                     ? " of the gemm family"
                                                                  : " of the attention family";
    throw UsageError("bad --gpu '" + gpu + "': nothing" + which +
                     " tuned on it has a valid result in " + database.path().string());
  }
  return selections;
}

ExportSummary export_kernels(const db::ResultsDatabase& database, const CubinBuilder& builder,
                             const ExportOptions& options) {
  check_export_target(options.out_dir, options.gpu, options.replace_other_gpu);
  const ExportSelections selections = select_exports(database, options.gpu, options.families);

  ExportSummary summary;
  summary.manifest.swr_version = SWR_VERSION;
  summary.manifest.created_at = utc_now();
  summary.manifest.gpu = options.gpu;
  ExportAssembler assembler(builder, summary);
  for (const ExportSelection& selection : selections.attention) {
    summary.manifest.kernels.push_back(assembler.entry<ExportedKernel>(selection));
  }
  for (const GemmExportSelection& selection : selections.gemm) {
    summary.manifest.gemm_kernels.push_back(assembler.entry<ExportedGemmKernel>(selection));
  }
  if (!summary.changed_sources.empty() && !options.allow_changed_source) {
    throw UsageError(std::to_string(summary.changed_sources.size()) + " of " +
                     std::to_string(selections.size()) +
                     " best variants were measured with another build than this one compiles (" +
                     assembler.first_change() +
                     "): the templates or NVRTC changed since tuning; re-tune them, or pass "
                     "--allow-changed-source to export them with the old build's figures");
  }
  summary.cubin_files = assembler.cubins().size();
  write_export(options.out_dir, summary.manifest, assembler.cubins());
  return summary;
}

}  // namespace swr
