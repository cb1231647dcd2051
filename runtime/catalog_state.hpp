// The state a TunedCatalog and its copies share: the source of answers and the answers given so
// far, so that a repeated question costs a hash lookup under a shared lock.
#pragma once

#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "runtime/catalog_source.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

struct AnswerKey {
  std::string gpu;
  AttentionProblem problem;

  bool operator==(const AnswerKey& other) const;
};

struct AnswerKeyHash {
  std::size_t operator()(const AnswerKey& key) const;
};

struct TunedCatalog::State {
  explicit State(std::unique_ptr<CatalogSource> answers_from) : source(std::move(answers_from)) {}

  std::unique_ptr<CatalogSource> source;
  mutable std::shared_mutex answers_mutex;
  std::unordered_map<AnswerKey, TunedChoice, AnswerKeyHash> answers;  // guarded by answers_mutex
};

// The lookup itself, without the memory: exact, else the nearest candidate, else none with why.
TunedChoice choose_tuned_kernel(const CatalogSource& source, const std::string& gpu,
                                const AttentionProblem& problem);

}  // namespace swr
