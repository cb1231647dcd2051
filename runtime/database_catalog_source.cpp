// A catalog over a results database, opened read-only. One SQLite connection serves every thread
// in turn; the catalog keeps the answers, so the file is asked once per (GPU, shape).
#include <map>
#include <mutex>

#include "db/results_database.hpp"
#include "runtime/backward_selection.hpp"
#include "runtime/catalog_source.hpp"
#include "runtime/tuned_kernel_forms.hpp"

namespace swr {
namespace {

class DatabaseCatalogSource : public CatalogSource {
 public:
  explicit DatabaseCatalogSource(const std::filesystem::path& path)
      : database_(path, db::OpenMode::read_only) {}

  std::string description() const override {
    return "results database " + database_.path().string();
  }
  bool is_export() const override { return false; }

  std::vector<std::string> gpu_names() const override {
    std::lock_guard lock(mutex_);
    return database_.gpu_names();
  }

  std::shared_ptr<const TunedKernel> exact(const std::string& gpu,
                                           const AttentionProblem& problem) const override {
    return exact_of<TunedKernel>(gpu, problem);
  }

  std::vector<CandidateShape> candidates(const std::string& gpu,
                                         const AttentionProblem& like) const override {
    return candidates_of<AttentionProblem>(
        gpu, [&](db::GpuId id) { return database_.tuned_attention_shapes_like(id, like); });
  }

  std::shared_ptr<const TunedKernel> best(const CandidateShape& candidate) const override {
    return best_of<TunedKernel>(candidate);
  }

  std::shared_ptr<const TunedGemmKernel> exact(const std::string& gpu,
                                               const GemmProblem& problem) const override {
    return exact_of<TunedGemmKernel>(gpu, problem);
  }

  std::vector<GemmCandidateShape> candidates(const std::string& gpu,
                                             const GemmProblem& like) const override {
    return candidates_of<GemmProblem>(
        gpu, [&](db::GpuId id) { return database_.tuned_gemm_shapes_like(id, like.dtype); });
  }

  std::shared_ptr<const TunedGemmKernel> best(const GemmCandidateShape& candidate) const override {
    return best_of<TunedGemmKernel>(candidate);
  }

  std::shared_ptr<const TunedAttentionBackwardKernel> exact(const std::string& gpu,
                                                            const AttentionBackwardProblem& problem,
                                                            DqRequirement dq) const override {
    return exact_of<TunedAttentionBackwardKernel>(gpu, problem, dq);
  }

  std::vector<BackwardCandidateShape> candidates(
      const std::string& gpu, const AttentionBackwardProblem& like) const override {
    return candidates_of<AttentionBackwardProblem>(gpu, [&](db::GpuId id) {
      std::vector<db::TunedShapeOf<AttentionBackwardProblem>> shapes;
      for (const db::TunedShape& shape :
           database_.tuned_attention_backward_shapes_like(id, like.shape)) {
        shapes.push_back({shape.id, AttentionBackwardProblem{shape.problem}});
      }
      return shapes;
    });
  }

  std::shared_ptr<const TunedAttentionBackwardKernel> best(const BackwardCandidateShape& candidate,
                                                           DqRequirement dq) const override {
    return best_of<TunedAttentionBackwardKernel>(candidate, dq);
  }

 private:
  // The fastest of the GPU rows of that name that tuned exactly `problem`.
  template <class Kernel, class Problem>
  std::shared_ptr<const Kernel> exact_of(const std::string& gpu, const Problem& problem,
                                         DqRequirement dq = DqRequirement::any) const {
    std::lock_guard lock(mutex_);
    const std::optional<db::ProblemId> problem_id = database_.find_problem(problem);
    if (!problem_id) return nullptr;
    std::shared_ptr<const Kernel> fastest;
    for (const db::StoredGpu& stored : gpus_named(gpu)) {
      std::shared_ptr<const Kernel> kernel = best_locked<Kernel>(stored, problem, *problem_id, dq);
      if (kernel && (!fastest || kernel->measured.median_ms < fastest->measured.median_ms)) {
        fastest = std::move(kernel);
      }
    }
    return fastest;
  }

  template <class Problem, class TunedShapes>
  std::vector<Candidate<Problem>> candidates_of(const std::string& gpu,
                                                const TunedShapes& tuned_shapes) const {
    std::lock_guard lock(mutex_);
    std::vector<Candidate<Problem>> candidates;
    for (const db::StoredGpu& stored : gpus_named(gpu)) {
      const GpuScale scale = gpu_scale(stored.gpu.name, stored.gpu.sm_count, stored.gpu.l2_bytes);
      for (const db::TunedShapeOf<Problem>& shape : tuned_shapes(stored.id)) {
        candidates.push_back({shape.problem, scale, raw(stored.id), raw(shape.id)});
      }
    }
    return candidates;
  }

  template <class Kernel, class Problem>
  std::shared_ptr<const Kernel> best_of(const Candidate<Problem>& candidate,
                                        DqRequirement dq = DqRequirement::any) const {
    std::lock_guard lock(mutex_);
    for (const auto& [name, gpus] : gpus_by_name_) {
      for (const db::StoredGpu& stored : gpus) {
        if (raw(stored.id) != candidate.gpu_handle) continue;
        return best_locked<Kernel>(stored, candidate.problem, db::ProblemId{candidate.shape_handle},
                                   dq);
      }
    }
    return nullptr;
  }

  // The GPU rows of a name, read once: they only grow while tuning, and a catalog that should
  // see new ones is reopened (or told to forget its answers, which does not need new GPUs).
  const std::vector<db::StoredGpu>& gpus_named(const std::string& name) const {
    auto known = gpus_by_name_.find(name);
    if (known == gpus_by_name_.end()) {
      known = gpus_by_name_.emplace(name, database_.gpus_named(name)).first;
    }
    return known->second;
  }

  // The best valid variant that meets `dq` (the backward's requirement; the other families ask
  // for any).
  template <class Kernel, class Problem>
  std::shared_ptr<const Kernel> best_locked(const db::StoredGpu& gpu, const Problem& problem,
                                            db::ProblemId problem_id, DqRequirement dq) const {
    const std::optional<db::StoredMeasurement> best =
        best_measurement_meeting(database_, gpu.id, problem_id, dq);
    if (!best) return nullptr;
    return std::make_shared<const Kernel>(tuned_kernel_from_database(gpu.gpu, problem, *best));
  }

  mutable std::mutex mutex_;  // one connection: one question at a time
  const db::ResultsDatabase database_;
  mutable std::map<std::string, std::vector<db::StoredGpu>> gpus_by_name_;
};

}  // namespace

std::unique_ptr<CatalogSource> open_database_source(const std::filesystem::path& path) {
  return std::make_unique<DatabaseCatalogSource>(path);
}

}  // namespace swr
