// The inside of a TunedCatalog: where its answers come from (a CatalogSource: a results database
// or an export directory), and the answers given so far (its State). The catalog asks a source
// for the exact shape first, then for the shapes that could stand in for it, and picks the
// nearest itself (swr/shape_distance.hpp), so both sources answer alike. Each family (attention,
// its backward, GEMM) has its own three questions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "swr/shape_distance.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

// A tuned shape that shares what is compiled into a kernel with the one asked for.
template <class Problem>
struct Candidate {
  Problem problem;
  GpuScale scale;  // of the GPU it was tuned on
  // What the source needs to fetch its best kernel (row ids, an index): opaque to the catalog.
  std::int64_t gpu_handle = 0;
  std::int64_t shape_handle = 0;
};

using CandidateShape = Candidate<AttentionProblem>;
using GemmCandidateShape = Candidate<GemmProblem>;
using BackwardCandidateShape = Candidate<AttentionBackwardProblem>;

// Implementations guard their own state: the catalog calls them from any thread.
class CatalogSource {
 public:
  virtual ~CatalogSource() = default;

  virtual std::string description() const = 0;
  virtual bool is_export() const = 0;
  virtual std::vector<std::string> gpu_names() const = 0;

  // The best kernel of exactly `problem` on the GPUs named `gpu` (the fastest when several GPUs
  // of that name tuned it), or null.
  virtual std::shared_ptr<const TunedKernel> exact(const std::string& gpu,
                                                   const AttentionProblem& problem) const = 0;
  // Tuned shapes on GPUs named `gpu` with the head dim, dtype and causal mode of `like`.
  virtual std::vector<CandidateShape> candidates(const std::string& gpu,
                                                 const AttentionProblem& like) const = 0;
  virtual std::shared_ptr<const TunedKernel> best(const CandidateShape& candidate) const = 0;

  // The same for the GEMM family; candidates share the dtype of `like`.
  virtual std::shared_ptr<const TunedGemmKernel> exact(const std::string& gpu,
                                                       const GemmProblem& problem) const = 0;
  virtual std::vector<GemmCandidateShape> candidates(const std::string& gpu,
                                                     const GemmProblem& like) const = 0;
  virtual std::shared_ptr<const TunedGemmKernel> best(
      const GemmCandidateShape& candidate) const = 0;

  // The same for the attention backward, keeping only variants that meet `dq`; candidates share
  // the forward shape's compiled part. A source without backward kernels answers none.
  virtual std::shared_ptr<const TunedAttentionBackwardKernel> exact(
      const std::string& gpu, const AttentionBackwardProblem& problem, DqRequirement dq) const = 0;
  virtual std::vector<BackwardCandidateShape> candidates(
      const std::string& gpu, const AttentionBackwardProblem& like) const = 0;
  virtual std::shared_ptr<const TunedAttentionBackwardKernel> best(
      const BackwardCandidateShape& candidate, DqRequirement dq) const = 0;

  // False where the source certainly has no backward kernel (an export made without them), so
  // that a refusal can say so rather than blame the shape.
  virtual bool holds_backward_kernels() const { return true; }

  // The cubin an export holds for a kernel this source handed out; null for a database.
  virtual std::shared_ptr<const std::vector<char>> exported_cubin(
      const TunedKernelBase& kernel) const {
    (void)kernel;
    return nullptr;
  }
};

std::unique_ptr<CatalogSource> open_database_source(const std::filesystem::path& path);
std::unique_ptr<CatalogSource> open_export_source(const std::filesystem::path& directory);

// The state a TunedCatalog and its copies share: the source of answers and the answers given so
// far, per family, so that a repeated question costs a hash lookup under a shared lock.
// Equality and hash of every field of a shape (AttentionProblem has no operator==).
bool same_shape(const AttentionProblem& a, const AttentionProblem& b);
bool same_shape(const GemmProblem& a, const GemmProblem& b);
bool same_shape(const AttentionBackwardProblem& a, const AttentionBackwardProblem& b);
std::size_t shape_hash(const AttentionProblem& problem);
std::size_t shape_hash(const GemmProblem& problem);
std::size_t shape_hash(const AttentionBackwardProblem& problem);

template <class Problem>
struct AnswerKey {
  std::string gpu;
  Problem problem;

  bool operator==(const AnswerKey& other) const {
    return gpu == other.gpu && same_shape(problem, other.problem);
  }
};

template <class Problem>
struct AnswerKeyHash {
  std::size_t operator()(const AnswerKey<Problem>& key) const {
    const std::size_t seed = std::hash<std::string>()(key.gpu);
    return seed ^ (shape_hash(key.problem) + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
  }
};

// The answers of one family. A program that asks for ever new shapes must not grow them without
// bound: past kMaximum they start over.
template <class Problem, class Choice>
class RememberedAnswers {
 public:
  static constexpr std::size_t kMaximum = 1 << 16;

  std::optional<Choice> find(const AnswerKey<Problem>& key) const {
    std::shared_lock lock(mutex_);
    if (auto known = answers_.find(key); known != answers_.end()) return known->second;
    return std::nullopt;
  }

  // Another thread may have answered meanwhile: both answers are the same, the first one stays.
  Choice remember(AnswerKey<Problem> key, Choice choice) {
    std::unique_lock lock(mutex_);
    if (answers_.size() >= kMaximum) answers_.clear();
    return answers_.emplace(std::move(key), std::move(choice)).first->second;
  }

  void clear() {
    std::unique_lock lock(mutex_);
    answers_.clear();
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<AnswerKey<Problem>, Choice, AnswerKeyHash<Problem>> answers_;
};

struct TunedCatalog::State {
  explicit State(std::unique_ptr<CatalogSource> answers_from) : source(std::move(answers_from)) {}

  std::unique_ptr<CatalogSource> source;
  RememberedAnswers<AttentionProblem, TunedChoice> attention_answers;
  RememberedAnswers<GemmProblem, TunedGemmChoice> gemm_answers;
  RememberedAnswers<AttentionBackwardProblem, TunedBackwardChoice> backward_answers;
  RememberedAnswers<AttentionBackwardProblem, TunedBackwardChoice> deterministic_backward_answers;
};

// The lookup itself, without the memory: exact, else the nearest candidate, else none with why.
TunedChoice choose_tuned_kernel(const CatalogSource& source, const std::string& gpu,
                                const AttentionProblem& problem);
TunedGemmChoice choose_tuned_kernel(const CatalogSource& source, const std::string& gpu,
                                    const GemmProblem& problem);
TunedBackwardChoice choose_tuned_kernel(const CatalogSource& source, const std::string& gpu,
                                        const AttentionBackwardProblem& problem, DqRequirement dq);

}  // namespace swr
