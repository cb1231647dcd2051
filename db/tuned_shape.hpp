// A shape that has at least one valid measurement on a GPU: what the runtime's nearest-shape
// lookup and `swr-tune export` walk, per family.
#pragma once

#include "db/database_ids.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gemm_problem.hpp"

namespace swr::db {

template <class Problem>
struct TunedShapeOf {
  ProblemId id{};
  Problem problem;
};

using TunedShape = TunedShapeOf<AttentionProblem>;
using TunedGemmShape = TunedShapeOf<GemmProblem>;

}  // namespace swr::db
