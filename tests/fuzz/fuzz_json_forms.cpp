// The JSON forms stored in databases and manifests, which `import` reads from another machine's
// files: an attention config, a GEMM config, an attention problem, a GEMM problem. A bad config is
// a UsageError; a bad problem is std::invalid_argument or nlohmann::json's error for a missing or
// mistyped field (as swr/attention_problem.hpp and swr/gemm_problem.hpp document; their callers
// name the file). A form that reads must read back from its own JSON form to the same key.
// Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/usage_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json json = nlohmann::json::parse(data, data + size, nullptr, false);
  if (json.is_discarded()) return 0;
  try {
    const swr::AttentionConfig config = swr::AttentionConfig::from_json(json);
    if (!(swr::AttentionConfig::from_json(config.to_json()) == config)) __builtin_trap();
  } catch (const swr::UsageError&) {
  }
  try {
    const swr::GemmConfig config = swr::GemmConfig::from_json(json);
    if (!(swr::GemmConfig::from_json(config.to_json()) == config)) __builtin_trap();
  } catch (const swr::UsageError&) {
  }
  try {
    const swr::AttentionProblem problem = swr::AttentionProblem::from_json(json);
    if (swr::AttentionProblem::from_json(problem.to_json()).key() != problem.key())
      __builtin_trap();
  } catch (const std::invalid_argument&) {
  } catch (const nlohmann::json::exception&) {
  }
  try {
    const swr::GemmProblem problem = swr::GemmProblem::from_json(json);
    if (swr::GemmProblem::from_json(problem.to_json()).key() != problem.key()) __builtin_trap();
  } catch (const std::invalid_argument&) {
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
