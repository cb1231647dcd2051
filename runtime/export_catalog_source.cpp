// A catalog over an export directory: the manifest and every cubin are read and checked when it
// opens, and everything is answered from memory afterwards; no database, no NVRTC.
#include <algorithm>
#include <map>
#include <set>
#include <type_traits>

#include "generator/kernel_source.hpp"
#include "runtime/backward_selection.hpp"
#include "runtime/catalog_source.hpp"
#include "runtime/export_directory.hpp"
#include "runtime/tuned_kernel_forms.hpp"
#include "swr/runtime_options.hpp"

namespace swr {
namespace {

// What the compiled part of a shape is: a candidate must share it with the shape asked for.
bool shares_compiled_part(const AttentionProblem& a, const AttentionProblem& b) {
  return a.head_dim == b.head_dim && a.dtype == b.dtype && a.causal == b.causal;
}
// (The GQA ratio and the causal alignment are launch arguments: shape_distance keeps them apart.)

bool shares_compiled_part(const GemmProblem& a, const GemmProblem& b) {
  return a.dtype == b.dtype;
}

bool shares_compiled_part(const AttentionBackwardProblem& a, const AttentionBackwardProblem& b) {
  return shares_compiled_part(a.shape, b.shape);
}

// Whether a kernel serves what the caller asks beside the shape: the backward's DqRequirement
// (the other families ask nothing more).
template <class Kernel>
bool serves(const Kernel&) {
  return true;
}

bool serves(const TunedAttentionBackwardKernel& kernel, DqRequirement dq) {
  return meets(kernel.config, dq);
}

// The kernels of one family, as the catalog asks for them. A shape may have several entries (the
// backward's fastest variant and its fastest deterministic one): the fastest that serves the
// caller answers for it.
template <class Kernel>
class ExportedFamily {
 public:
  using Problem = decltype(Kernel::problem);

  void add(std::shared_ptr<const Kernel> kernel, GpuScale scale) {
    entries_.push_back({std::move(kernel), scale});
  }

  bool empty() const { return entries_.empty(); }

  template <class... Filter>
  std::shared_ptr<const Kernel> exact(const std::string& gpu, const Problem& problem,
                                      const Filter&... filter) const {
    return fastest(gpu, problem.key(), filter...);
  }

  // One per tuned shape on GPUs named `gpu` that shares the compiled part of `like`.
  std::vector<Candidate<Problem>> candidates(const std::string& gpu, const Problem& like) const {
    std::vector<Candidate<Problem>> candidates;
    std::set<std::string> shapes;
    for (std::size_t index = 0; index < entries_.size(); ++index) {
      const Kernel& kernel = *entries_[index].kernel;
      if (kernel.gpu != gpu || !shares_compiled_part(kernel.problem, like)) continue;
      if (!shapes.insert(kernel.problem.key()).second) continue;
      candidates.push_back(
          {kernel.problem, entries_[index].scale, 0, static_cast<std::int64_t>(index)});
    }
    return candidates;
  }

  template <class... Filter>
  std::shared_ptr<const Kernel> best(const Candidate<Problem>& candidate,
                                     const Filter&... filter) const {
    const Kernel& kernel = *entries_.at(static_cast<std::size_t>(candidate.shape_handle)).kernel;
    return fastest(kernel.gpu, kernel.problem.key(), filter...);
  }

  void add_gpu_names(std::vector<std::string>& names) const {
    for (const Entry& entry : entries_) names.push_back(entry.kernel->gpu);
  }

 private:
  struct Entry {
    std::shared_ptr<const Kernel> kernel;
    GpuScale scale;
  };

  template <class... Filter>
  std::shared_ptr<const Kernel> fastest(const std::string& gpu, const std::string& key,
                                        const Filter&... filter) const {
    std::shared_ptr<const Kernel> fastest;
    for (const Entry& entry : entries_) {
      const Kernel& kernel = *entry.kernel;
      if (kernel.gpu != gpu || kernel.problem.key() != key || !serves(kernel, filter...)) continue;
      if (!fastest || kernel.measured.median_ms < fastest->measured.median_ms) {
        fastest = entry.kernel;
      }
    }
    return fastest;
  }

  std::vector<Entry> entries_;
};

class ExportCatalogSource : public CatalogSource {
 public:
  explicit ExportCatalogSource(const std::filesystem::path& directory)
      : export_(load_export(directory)) {
    for (const ExportedKernel& exported : export_.manifest.kernels) {
      attention_.add(keep(tuned_kernel_from_export(exported), exported), scale_of(exported));
    }
    for (const ExportedGemmKernel& exported : export_.manifest.gemm_kernels) {
      gemm_.add(keep(tuned_kernel_from_export(exported), exported), scale_of(exported));
    }
    for (const ExportedBackwardKernel& exported : export_.manifest.backward_kernels) {
      backward_.add(keep(tuned_kernel_from_export(exported), exported), scale_of(exported));
    }
  }

  std::string description() const override { return "export " + export_.directory.string(); }
  bool is_export() const override { return true; }

  std::vector<std::string> gpu_names() const override {
    std::vector<std::string> names;
    attention_.add_gpu_names(names);
    gemm_.add_gpu_names(names);
    backward_.add_gpu_names(names);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }

  std::shared_ptr<const TunedKernel> exact(const std::string& gpu,
                                           const AttentionProblem& problem) const override {
    return attention_.exact(gpu, problem);
  }
  std::vector<CandidateShape> candidates(const std::string& gpu,
                                         const AttentionProblem& like) const override {
    return attention_.candidates(gpu, like);
  }
  std::shared_ptr<const TunedKernel> best(const CandidateShape& candidate) const override {
    return attention_.best(candidate);
  }

  std::shared_ptr<const TunedGemmKernel> exact(const std::string& gpu,
                                               const GemmProblem& problem) const override {
    return gemm_.exact(gpu, problem);
  }
  std::vector<GemmCandidateShape> candidates(const std::string& gpu,
                                             const GemmProblem& like) const override {
    return gemm_.candidates(gpu, like);
  }
  std::shared_ptr<const TunedGemmKernel> best(const GemmCandidateShape& candidate) const override {
    return gemm_.best(candidate);
  }

  std::shared_ptr<const TunedAttentionBackwardKernel> exact(const std::string& gpu,
                                                            const AttentionBackwardProblem& problem,
                                                            DqRequirement dq) const override {
    return backward_.exact(gpu, problem, dq);
  }
  std::vector<BackwardCandidateShape> candidates(
      const std::string& gpu, const AttentionBackwardProblem& like) const override {
    return backward_.candidates(gpu, like);
  }
  std::shared_ptr<const TunedAttentionBackwardKernel> best(const BackwardCandidateShape& candidate,
                                                           DqRequirement dq) const override {
    return backward_.best(candidate, dq);
  }
  bool holds_backward_kernels() const override { return !backward_.empty(); }

  std::shared_ptr<const std::vector<char>> exported_cubin(
      const TunedKernelBase& kernel) const override {
    if (const auto legacy = legacy_entries_.find(&kernel); legacy != legacy_entries_.end()) {
      throw KernelRefused("cannot launch " + kernel.config_key + " from " + description() +
                          ": it was exported by a build whose attention kernels take another "
                          "argument list (entry \"" +
                          legacy->second + "\", manifest version " +
                          std::to_string(export_.manifest.schema_version) + "; this build's is \"" +
                          kAttentionEntryName + "\"): export it again with this build");
    }
    const auto found = cubins_.find(&kernel);
    return found == cubins_.end() ? nullptr : found->second;
  }

 private:
  static GpuScale scale_of(const ExportedKernelBase& exported) {
    return gpu_scale(exported.gpu.name, exported.gpu.sm_count, exported.gpu.l2_bytes);
  }

  // The kernel, shared, with its cubin remembered under its address (and its entry, when that is
  // not the launch ABI of this build's kernels of the family).
  template <class Kernel>
  std::shared_ptr<const Kernel> keep(Kernel kernel, const ExportedKernelBase& exported) {
    auto shared = std::make_shared<const Kernel>(std::move(kernel));
    cubins_[shared.get()] = export_.cubins.at(exported.cubin_file);
    if constexpr (std::is_same_v<Kernel, TunedKernel>) {
      // Entries without the log-sum-exp still launch (for inference: AttentionKernelModule).
      if (exported.entry != kAttentionEntryName && exported.entry != kAttentionEntryWithoutLse) {
        legacy_entries_[shared.get()] = exported.entry;
      }
    }
    return shared;
  }

  LoadedExport export_;
  ExportedFamily<TunedKernel> attention_;
  ExportedFamily<TunedGemmKernel> gemm_;
  ExportedFamily<TunedAttentionBackwardKernel> backward_;
  // By the kernels this source hands out (they live as long as it does).
  std::map<const TunedKernelBase*, std::shared_ptr<const std::vector<char>>> cubins_;
  std::map<const TunedKernelBase*, std::string> legacy_entries_;
};

}  // namespace

std::unique_ptr<CatalogSource> open_export_source(const std::filesystem::path& directory) {
  return std::make_unique<ExportCatalogSource>(directory);
}

}  // namespace swr
