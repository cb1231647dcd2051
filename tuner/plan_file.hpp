// A tuning plan: the problems of both families one run tunes (`swr-tune tune --plan FILE`), read
// from a JSON file (docs/tuning-at-scale.md). Each entry stands for every combination of its
// fields, and a field is a value, a list of values, or a range ({"from", "to", "times"} or
// {"from", "to", "step"}). Anything else (an unknown key, a bad shape, a key given twice, a file
// that is no regular file or too big) is refused in one line naming the file, the place and the
// value: a UsageError, before anything is compiled or measured.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "swr/attention_backward_problem.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"

namespace swr {

inline constexpr int kPlanFileVersion = 1;
inline constexpr std::size_t kPlanFileMaxBytes = 1 << 20;
inline constexpr std::size_t kPlanMaxValuesPerField = 4096;
inline constexpr std::size_t kPlanMaxProblems = 10000;

// One problem of a family whose configs are named by key, and the variants to tune for it: the
// whole space when `config_keys` is empty.
template <class Problem>
struct PlannedOf {
  Problem problem;
  std::vector<std::string> config_keys;
};
using PlannedAttention = PlannedOf<AttentionProblem>;
using PlannedAttentionBackward = PlannedOf<AttentionBackwardProblem>;
struct PlannedGemm {
  GemmProblem problem;
  std::vector<GemmConfig> configs;
};

struct TuningPlanFile {
  std::vector<PlannedAttention> attention;  // in the order of the file
  std::vector<PlannedGemm> gemm;
  int repeated = 0;  // problems the file names more than once, tuned once (their configs merged)

  std::size_t problem_count() const { return attention.size() + gemm.size(); }
};

// Reads `path` (a regular file of at most kPlanFileMaxBytes).
TuningPlanFile read_plan_file(const std::filesystem::path& path);
// The same from text; `name` stands for the file in messages.
TuningPlanFile parse_plan(std::string_view text, const std::string& name);

// The plan as a file that parse_plan reads back to the same problems: one entry per problem.
nlohmann::json plan_to_json(const TuningPlanFile& plan);

}  // namespace swr
