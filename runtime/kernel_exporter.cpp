#include "runtime/kernel_exporter.hpp"

#include <chrono>
#include <ctime>
#include <map>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "generator/gemm_kernel_source.hpp"
#include "generator/kernel_source.hpp"
#include "runtime/backward_selection.hpp"
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

AttentionBackwardConfig config_of(const BackwardExportSelection& selection) {
  return AttentionBackwardConfig::from_json(selection.best.config_json);
}

KernelSource source_of(const AttentionProblem& problem, const AttentionConfig& config) {
  return render_attention_kernel(problem, config);
}

KernelSource source_of(const GemmProblem& problem, const GemmConfig& config) {
  return render_gemm_kernel(problem, config);
}

KernelSource source_of(const AttentionBackwardProblem& problem,
                       const AttentionBackwardConfig& config) {
  return render_attention_backward_kernel(problem, config);
}

// The fastest valid variant that meets `dq` of every shape of one family tuned on `gpus`, by
// shape key: the fastest GPU row wins when several rows of this name tuned a shape.
template <class Problem, class TunedShapes>
std::map<std::string, ExportSelectionOf<Problem>> select_family(
    const db::ResultsDatabase& database, const std::vector<db::StoredGpu>& gpus,
    const TunedShapes& tuned_shapes, DqRequirement dq = DqRequirement::any) {
  std::map<std::string, ExportSelectionOf<Problem>> by_shape;
  for (const db::StoredGpu& stored : gpus) {
    for (const db::TunedShapeOf<Problem>& shape : tuned_shapes(stored.id)) {
      std::optional<db::StoredMeasurement> best =
          best_measurement_meeting(database, stored.id, shape.id, dq);
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
  return by_shape;
}

template <class Problem>
std::vector<ExportSelectionOf<Problem>> in_key_order(
    std::map<std::string, ExportSelectionOf<Problem>> by_shape) {
  std::vector<ExportSelectionOf<Problem>> selections;
  for (auto& [key, selection] : by_shape) selections.push_back(std::move(selection));
  return selections;
}

// The backward's selections: each shape's fastest variant, and its fastest deterministic one
// where the fastest is not deterministic.
std::vector<BackwardExportSelection> select_backward(const db::ResultsDatabase& database,
                                                     const std::vector<db::StoredGpu>& gpus) {
  const auto tuned_shapes = [&](db::GpuId id) {
    std::vector<db::TunedShapeOf<AttentionBackwardProblem>> shapes;
    for (const db::TunedShape& shape : database.tuned_attention_backward_shapes(id)) {
      shapes.push_back({shape.id, AttentionBackwardProblem{shape.problem}});
    }
    return shapes;
  };
  auto fastest = select_family<AttentionBackwardProblem>(database, gpus, tuned_shapes);
  auto deterministic = select_family<AttentionBackwardProblem>(database, gpus, tuned_shapes,
                                                               DqRequirement::deterministic);
  std::vector<BackwardExportSelection> selections;
  for (auto& [key, selection] : fastest) {
    const bool serves_deterministic = meets(config_of(selection), DqRequirement::deterministic);
    selections.push_back(std::move(selection));
    const auto other = deterministic.find(key);
    if (!serves_deterministic && other != deterministic.end()) {
      selections.push_back(std::move(other->second));
    }
  }
  return selections;
}

// "" when every family is asked for, else " of the <names> family".
std::string families_asked(const ExportFamilies& families) {
  if (families.attention && families.attention_backward && families.gemm) return "";
  std::string names;
  for (const auto& [asked, name] :
       {std::pair{families.attention, kAttentionFamilyName},
        std::pair{families.attention_backward, kAttentionBackwardFamilyName},
        std::pair{families.gemm, kGemmFamilyName}}) {
    if (asked) names += (names.empty() ? "" : " or ") + std::string(name);
  }
  return " of the " + names + " family";
}

// Builds the entries of every family into one summary and one set of cubins.
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

namespace {

// A variant's file: its config key and the compiled part of its shape.
std::string variant_cubin_name(const std::string& config_key, const AttentionProblem& shape,
                               const std::string& arch) {
  std::string name = config_key;
  name += "-d" + std::to_string(shape.head_dim);
  name += "-";
  name += to_string(shape.dtype);
  name += shape.causal ? "-causal-" : "-noncausal-";
  name += arch;
  name += ".cubin";
  return name;
}

}  // namespace

std::string exported_cubin_name(const AttentionProblem& problem, const AttentionConfig& config,
                                const std::string& arch) {
  return variant_cubin_name(config.key(), problem, arch);
}

std::string exported_cubin_name(const AttentionBackwardProblem& problem,
                                const AttentionBackwardConfig& config, const std::string& arch) {
  return variant_cubin_name(config.key(), problem.shape, arch);
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
    selections.attention = in_key_order(select_family<AttentionProblem>(
        database, gpus, [&](db::GpuId id) { return database.tuned_attention_shapes(id); }));
  }
  if (families.attention_backward) selections.backward = select_backward(database, gpus);
  if (families.gemm) {
    selections.gemm = in_key_order(select_family<GemmProblem>(
        database, gpus, [&](db::GpuId id) { return database.tuned_gemm_shapes(id); }));
  }
  if (selections.size() == 0) {
    throw UsageError("bad --gpu '" + gpu + "': nothing" + families_asked(families) +
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
  for (const BackwardExportSelection& selection : selections.backward) {
    summary.manifest.backward_kernels.push_back(assembler.entry<ExportedBackwardKernel>(selection));
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
