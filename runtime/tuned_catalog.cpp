#include "swr/tuned_catalog.hpp"

#include <algorithm>
#include <functional>
#include <limits>

#include "runtime/catalog_source.hpp"

namespace swr {
namespace {

// What is compiled into a kernel, so that no shape without it can stand in.
std::string compiled_part_text(const AttentionProblem& problem) {
  std::string text = "head dim " + std::to_string(problem.head_dim) + ", " +
                     std::string(to_string(problem.dtype)) + ", " +
                     (problem.causal ? "causal" : "non-causal");
  if (problem.effective_causal_align() == CausalAlignment::bottom_right) text += " bottom-right";
  if (problem.query_heads_per_kv_head() != 1) {
    text += ", " + std::to_string(problem.query_heads_per_kv_head()) + " query heads per K/V head";
  }
  return text;
}

std::string compiled_part_text(const AttentionBackwardProblem& problem) {
  return "the backward of " + compiled_part_text(problem.shape);
}

std::string compiled_part_text(const GemmProblem& problem) {
  return "GEMM " + std::string(to_string(problem.dtype));
}

std::optional<double> candidate_distance(const AttentionProblem& wanted,
                                         const CandidateShape& candidate) {
  return shape_distance(wanted, candidate.problem, candidate.scale);
}

std::optional<double> candidate_distance(const AttentionBackwardProblem& wanted,
                                         const BackwardCandidateShape& candidate) {
  return shape_distance(wanted.shape, candidate.problem.shape, candidate.scale);
}

std::optional<double> candidate_distance(const GemmProblem& wanted,
                                         const GemmCandidateShape& candidate) {
  return shape_distance(wanted, candidate.problem);
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

void combine(std::size_t& seed, std::size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
}

// Exact, else the nearest candidate, else none with why: the same for every family (`filter`: what
// the backward's variants must meet, passed on to the source).
template <class Kernel, class Problem, class... Filter>
TunedChoiceOf<Kernel> choose(const CatalogSource& source, const std::string& gpu,
                             const Problem& problem, const Filter&... filter) {
  TunedChoiceOf<Kernel> choice;
  if (std::shared_ptr<const Kernel> exact = source.exact(gpu, problem, filter...)) {
    choice.match = MatchKind::exact;
    choice.kernel = std::move(exact);
    return choice;
  }
  const auto candidates = source.candidates(gpu, problem);
  const Candidate<Problem>* nearest = nullptr;
  double nearest_distance = std::numeric_limits<double>::infinity();
  std::string nearest_key;
  for (const Candidate<Problem>& candidate : candidates) {
    const std::optional<double> distance = candidate_distance(problem, candidate);
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
    if (std::shared_ptr<const Kernel> kernel = source.best(*nearest, filter...)) {
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

template <class Kernel, class Problem, class Answers, class... Filter>
TunedChoiceOf<Kernel> remembered_choice(const CatalogSource& source, Answers& answers,
                                        std::string_view gpu, const Problem& problem,
                                        const Filter&... filter) {
  problem.validate();
  AnswerKey<Problem> key{std::string(gpu), problem};
  if (auto known = answers.find(key)) return *std::move(known);
  TunedChoiceOf<Kernel> choice = choose_tuned_kernel(source, key.gpu, problem, filter...);
  return answers.remember(std::move(key), std::move(choice));
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

bool same_shape(const AttentionProblem& a, const AttentionProblem& b) {
  return a.batch == b.batch && a.heads == b.heads && a.seq_q == b.seq_q && a.seq_kv == b.seq_kv &&
         a.head_dim == b.head_dim && a.dtype == b.dtype && a.causal == b.causal &&
         a.kv_head_count() == b.kv_head_count() &&
         a.effective_causal_align() == b.effective_causal_align();
}

bool same_shape(const GemmProblem& a, const GemmProblem& b) {
  return a == b;
}

std::size_t shape_hash(const AttentionProblem& p) {
  std::size_t seed = 0;
  for (int value :
       {p.batch, p.heads, p.seq_q, p.seq_kv, p.head_dim, static_cast<int>(p.dtype),
        p.causal ? 1 : 0, p.kv_head_count(), static_cast<int>(p.effective_causal_align())}) {
    combine(seed, std::hash<int>()(value));
  }
  return seed;
}

bool same_shape(const AttentionBackwardProblem& a, const AttentionBackwardProblem& b) {
  return same_shape(a.shape, b.shape);
}

std::size_t shape_hash(const AttentionBackwardProblem& problem) {
  return shape_hash(problem.shape) ^ 0x62776400u;  // not the forward's key
}

std::size_t shape_hash(const GemmProblem& p) {
  std::size_t seed = 0;
  for (int value : {p.m, p.n, p.k, static_cast<int>(p.dtype)}) {
    combine(seed, std::hash<int>()(value));
  }
  return seed;
}

TunedChoice choose_tuned_kernel(const CatalogSource& source, const std::string& gpu,
                                const AttentionProblem& problem) {
  return choose<TunedKernel>(source, gpu, problem);
}

TunedGemmChoice choose_tuned_kernel(const CatalogSource& source, const std::string& gpu,
                                    const GemmProblem& problem) {
  return choose<TunedGemmKernel>(source, gpu, problem);
}

TunedBackwardChoice choose_tuned_kernel(const CatalogSource& source, const std::string& gpu,
                                        const AttentionBackwardProblem& problem, DqRequirement dq) {
  TunedBackwardChoice choice = choose<TunedAttentionBackwardKernel>(source, gpu, problem, dq);
  if (!choice && !source.holds_backward_kernels()) {
    choice.why_none = source.description() +
                      " holds no backward kernels (exported with another --family, or by a build "
                      "before manifest version 5): export the results database the backward was "
                      "tuned into again";
  } else if (!choice && dq == DqRequirement::deterministic) {
    choice.why_none +=
        "; deterministic dQ was asked for (torch.use_deterministic_algorithms): "
        "tune the backward space, whose variants ending in -det are deterministic";
    if (source.is_export()) {
      choice.why_none +=
          " (an export carries a shape's fastest deterministic variant where one "
          "was measured valid)";
    }
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
  return remembered_choice<TunedKernel>(*state_->source, state_->attention_answers, gpu, problem);
}

TunedGemmChoice TunedCatalog::best(std::string_view gpu, const GemmProblem& problem) const {
  return remembered_choice<TunedGemmKernel>(*state_->source, state_->gemm_answers, gpu, problem);
}

TunedBackwardChoice TunedCatalog::best(std::string_view gpu,
                                       const AttentionBackwardProblem& problem,
                                       DqRequirement dq) const {
  auto& answers = dq == DqRequirement::deterministic ? state_->deterministic_backward_answers
                                                     : state_->backward_answers;
  return remembered_choice<TunedAttentionBackwardKernel>(*state_->source, answers, gpu, problem,
                                                         dq);
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
  state_->attention_answers.clear();
  state_->gemm_answers.clear();
  state_->backward_answers.clear();
  state_->deterministic_backward_answers.clear();
}

}  // namespace swr
