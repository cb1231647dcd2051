// A tuning plan file (`swr-tune tune --plan FILE`) as the tuner reads it: any text is refused with
// a UsageError naming the place, or read into problems that swr writes back and reads again to the
// same problems; nothing else may escape (no json error, no crash, no runaway expansion).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "swr/usage_error.hpp"
#include "tuner/plan_file.hpp"

namespace {

bool same_problems(const swr::TuningPlanFile& a, const swr::TuningPlanFile& b) {
  if (a.attention.size() != b.attention.size() || a.gemm.size() != b.gemm.size()) return false;
  for (std::size_t i = 0; i < a.attention.size(); ++i) {
    if (a.attention[i].problem.key() != b.attention[i].problem.key() ||
        a.attention[i].config_keys != b.attention[i].config_keys)
      return false;
  }
  for (std::size_t i = 0; i < a.gemm.size(); ++i) {
    if (a.gemm[i].problem.key() != b.gemm[i].problem.key() ||
        a.gemm[i].configs.size() != b.gemm[i].configs.size())
      return false;
    for (std::size_t c = 0; c < a.gemm[i].configs.size(); ++c) {
      if (a.gemm[i].configs[c].key() != b.gemm[i].configs[c].key()) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const swr::TuningPlanFile plan = swr::parse_plan(text, "fuzz/plan.json");
    if (plan.problem_count() == 0 || plan.problem_count() > swr::kPlanMaxProblems) {
      __builtin_trap();
    }
    const swr::TuningPlanFile again =
        swr::parse_plan(swr::plan_to_json(plan).dump(), "fuzz/rewritten.json");
    if (!same_problems(plan, again)) __builtin_trap();
  } catch (const swr::UsageError&) {
  }
  return 0;
}
