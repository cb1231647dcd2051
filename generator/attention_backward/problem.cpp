#include <nlohmann/json.hpp>

#include "swr/attention_backward_problem.hpp"

namespace swr {

void AttentionBackwardProblem::validate() const {
  shape.validate();
}

std::string AttentionBackwardProblem::key() const {
  return kAttentionBackwardKeyPrefix + shape.key();
}

double AttentionBackwardProblem::flops() const {
  return kBackwardFlopsFactor * shape.flops();
}

nlohmann::json AttentionBackwardProblem::to_json() const {
  return shape.to_json();
}

AttentionBackwardProblem AttentionBackwardProblem::from_json(const nlohmann::json& json) {
  return {AttentionProblem::from_json(json)};
}

}  // namespace swr
