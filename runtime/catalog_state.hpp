// The state a TunedCatalog and its copies share: the source of answers and the answers given so
// far, per family, so that a repeated question costs a hash lookup under a shared lock.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "runtime/catalog_source.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

// Equality and hash of every field of a shape (AttentionProblem has no operator==).
bool same_shape(const AttentionProblem& a, const AttentionProblem& b);
bool same_shape(const GemmProblem& a, const GemmProblem& b);
std::size_t shape_hash(const AttentionProblem& problem);
std::size_t shape_hash(const GemmProblem& problem);

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
};

// The lookup itself, without the memory: exact, else the nearest candidate, else none with why.
TunedChoice choose_tuned_kernel(const CatalogSource& source, const std::string& gpu,
                                const AttentionProblem& problem);
TunedGemmChoice choose_tuned_kernel(const CatalogSource& source, const std::string& gpu,
                                    const GemmProblem& problem);

}  // namespace swr
