#include "swr/tuned_catalog.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <mutex>

#include "runtime/catalog_state.hpp"

namespace swr {
namespace {

std::string compiled_part_text(const AttentionProblem& problem) {
  return "head dim " + std::to_string(problem.head_dim) + ", " +
         std::string(to_string(problem.dtype)) + ", " + (problem.causal ? "causal" : "non-causal");
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

constexpr std::size_t kMaximumRememberedAnswers = 1 << 16;

void combine(std::size_t& seed, std::size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
}

}  // namespace

std::string_view to_string(MatchKind kind) {
  switch (kind) {
    case MatchKind::exact:
      return "exact";
    case MatchKind::nearest:
      return "nearest";
    case MatchKind::none:
      return "none";
  }
  return "unknown";
}

bool AnswerKey::operator==(const AnswerKey& other) const {
  const AttentionProblem& a = problem;
  const AttentionProblem& b = other.problem;
  return gpu == other.gpu && a.batch == b.batch && a.heads == b.heads && a.seq_q == b.seq_q &&
         a.seq_kv == b.seq_kv && a.head_dim == b.head_dim && a.dtype == b.dtype &&
         a.causal == b.causal;
}

std::size_t AnswerKeyHash::operator()(const AnswerKey& key) const {
  const AttentionProblem& p = key.problem;
  std::size_t seed = std::hash<std::string>()(key.gpu);
  for (int value : {p.batch, p.heads, p.seq_q, p.seq_kv, p.head_dim, static_cast<int>(p.dtype),
                    p.causal ? 1 : 0}) {
    combine(seed, std::hash<int>()(value));
  }
  return seed;
}

TunedChoice choose_tuned_kernel(const CatalogSource& source, const std::string& gpu,
                                const AttentionProblem& problem) {
  TunedChoice choice;
  if (std::shared_ptr<const TunedKernel> exact = source.exact(gpu, problem)) {
    choice.match = MatchKind::exact;
    choice.kernel = std::move(exact);
    return choice;
  }
  const CandidateShape* nearest = nullptr;
  double nearest_distance = std::numeric_limits<double>::infinity();
  std::string nearest_key;
  const std::vector<CandidateShape> candidates = source.candidates(gpu, problem);
  for (const CandidateShape& candidate : candidates) {
    const std::optional<double> distance =
        shape_distance(problem, candidate.problem, candidate.scale);
    if (!distance) continue;
    // Equal distances go to the smaller shape key: the same answer from every file.
    const std::string key = candidate.problem.key();
    if (*distance < nearest_distance || (*distance == nearest_distance && key < nearest_key)) {
      nearest = &candidate;
      nearest_distance = *distance;
      nearest_key = key;
    }
  }
  if (nearest != nullptr) {
    if (std::shared_ptr<const TunedKernel> kernel = source.best(*nearest)) {
      choice.match = MatchKind::nearest;
      choice.kernel = std::move(kernel);
      choice.distance = nearest_distance;
      return choice;
    }
  }
  const std::vector<std::string> gpus = source.gpu_names();
  if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) {
    choice.why_none = "no results for GPU '" + gpu + "' in " + source.description() +
                      " (it holds: " + joined(gpus) + ")";
  } else {
    choice.why_none = "nothing tuned on " + gpu + " with " + compiled_part_text(problem) + " in " +
                      source.description() +
                      " (these are compiled into a kernel, so no other shape can stand in)";
  }
  return choice;
}

TunedCatalog TunedCatalog::open_database(const std::filesystem::path& path) {
  return TunedCatalog(std::make_shared<State>(open_database_source(path)));
}

TunedCatalog TunedCatalog::open_export(const std::filesystem::path& directory_or_manifest) {
  return TunedCatalog(std::make_shared<State>(open_export_source(directory_or_manifest)));
}

TunedCatalog TunedCatalog::open(const std::filesystem::path& path) {
  if (std::filesystem::is_directory(path) || path.filename() == "manifest.json") {
    return open_export(path);
  }
  return open_database(path);
}

TunedChoice TunedCatalog::best(std::string_view gpu, const AttentionProblem& problem) const {
  problem.validate();
  AnswerKey key{std::string(gpu), problem};
  {
    std::shared_lock lock(state_->answers_mutex);
    if (auto known = state_->answers.find(key); known != state_->answers.end()) {
      return known->second;
    }
  }
  TunedChoice choice = choose_tuned_kernel(*state_->source, key.gpu, problem);
  std::unique_lock lock(state_->answers_mutex);
  // A program that asks for ever new shapes must not grow without bound: start over instead.
  if (state_->answers.size() >= kMaximumRememberedAnswers) state_->answers.clear();
  // Another thread may have answered meanwhile: both answers are the same.
  return state_->answers.emplace(std::move(key), std::move(choice)).first->second;
}

std::vector<std::string> TunedCatalog::gpu_names() const {
  return state_->source->gpu_names();
}

std::string TunedCatalog::description() const {
  return state_->source->description();
}

bool TunedCatalog::is_export() const {
  return state_->source->is_export();
}

void TunedCatalog::forget_answers() const {
  std::unique_lock lock(state_->answers_mutex);
  state_->answers.clear();
}

}  // namespace swr
