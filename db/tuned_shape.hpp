// An attention shape that has at least one valid measurement on a GPU: what the runtime's
// nearest-shape lookup and `swr-tune export` walk.
#pragma once

#include "db/database_ids.hpp"
#include "swr/attention_problem.hpp"

namespace swr::db {

struct TunedShape {
  ProblemId id{};
  AttentionProblem problem;
};

}  // namespace swr::db
