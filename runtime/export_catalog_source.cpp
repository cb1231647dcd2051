// A catalog over an export directory: the manifest and every cubin are read and checked when it
// opens, and everything is answered from memory afterwards; no database, no NVRTC.
#include <algorithm>
#include <map>

#include "runtime/catalog_source.hpp"
#include "runtime/export_directory.hpp"
#include "runtime/tuned_kernel_forms.hpp"

namespace swr {
namespace {

class ExportCatalogSource : public CatalogSource {
 public:
  explicit ExportCatalogSource(const std::filesystem::path& directory)
      : export_(load_export(directory)) {
    for (const ExportedKernel& exported : export_.manifest.kernels) {
      Entry entry;
      entry.kernel = std::make_shared<const TunedKernel>(tuned_kernel_from_export(exported));
      entry.scale = gpu_scale(exported.gpu.name, exported.gpu.sm_count, exported.gpu.l2_bytes);
      entry.cubin = export_.cubins.at(exported.cubin_file);
      cubins_[entry.kernel.get()] = entry.cubin;
      entries_.push_back(std::move(entry));
    }
  }

  std::string description() const override { return "export " + export_.directory.string(); }
  bool is_export() const override { return true; }

  std::vector<std::string> gpu_names() const override {
    std::vector<std::string> names;
    for (const Entry& entry : entries_) {
      if (std::find(names.begin(), names.end(), entry.kernel->gpu) == names.end()) {
        names.push_back(entry.kernel->gpu);
      }
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::shared_ptr<const TunedKernel> exact(const std::string& gpu,
                                           const AttentionProblem& problem) const override {
    const std::string key = problem.key();
    std::shared_ptr<const TunedKernel> fastest;
    for (const Entry& entry : entries_) {
      if (entry.kernel->gpu != gpu || entry.kernel->problem.key() != key) continue;
      if (!fastest || entry.kernel->measured.median_ms < fastest->measured.median_ms) {
        fastest = entry.kernel;
      }
    }
    return fastest;
  }

  std::vector<CandidateShape> candidates(const std::string& gpu,
                                         const AttentionProblem& like) const override {
    std::vector<CandidateShape> candidates;
    for (std::size_t index = 0; index < entries_.size(); ++index) {
      const TunedKernel& kernel = *entries_[index].kernel;
      if (kernel.gpu != gpu || kernel.problem.head_dim != like.head_dim ||
          kernel.problem.dtype != like.dtype || kernel.problem.causal != like.causal) {
        continue;
      }
      candidates.push_back(
          {kernel.problem, entries_[index].scale, 0, static_cast<std::int64_t>(index)});
    }
    return candidates;
  }

  std::shared_ptr<const TunedKernel> best(const CandidateShape& candidate) const override {
    return entries_.at(static_cast<std::size_t>(candidate.shape_handle)).kernel;
  }

  std::shared_ptr<const std::vector<char>> exported_cubin(
      const TunedKernel& kernel) const override {
    const auto found = cubins_.find(&kernel);
    return found == cubins_.end() ? nullptr : found->second;
  }

 private:
  struct Entry {
    std::shared_ptr<const TunedKernel> kernel;
    GpuScale scale;
    std::shared_ptr<const std::vector<char>> cubin;
  };

  LoadedExport export_;
  std::vector<Entry> entries_;
  // By the kernels this source hands out (they live as long as it does).
  std::map<const TunedKernel*, std::shared_ptr<const std::vector<char>>> cubins_;
};

}  // namespace

std::unique_ptr<CatalogSource> open_export_source(const std::filesystem::path& directory) {
  return std::make_unique<ExportCatalogSource>(directory);
}

}  // namespace swr
