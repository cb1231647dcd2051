// One GEMM tuning run: for each shape, measure cuBLAS (the baseline, in the same run) and every
// variant the database does not hold yet for this GPU (all with retune), each committed on its
// own; then the table of the fastest variants with their ratio to cuBLAS. Resumable like the
// attention session: what every family's run does alike is in tuning_run.hpp.
#pragma once

#include <vector>

#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/tuning_plan.hpp"
#include "tuner/tuning/variant_record.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {

using GemmTuningShape = TuningShapeOf<GemmProblem, GemmConfig>;
using GemmTuningPlan = TuningPlanOf<GemmProblem, GemmConfig>;

struct GemmTuningSummary : TuningSummary {
  std::vector<GemmBaseline> baselines;  // per shape, in plan order (empty note: not measured)
};

class GemmTuningSession {
 public:
  GemmTuningSession(GemmTuningPlan plan, GemmVariantMeasurer& measurer,
                    const InterruptFlag& interrupt);
  // Prints progress and the closing tables on stdout, notices on stderr.
  GemmTuningSummary run();

 private:
  GemmTuningPlan plan_;
  GemmVariantMeasurer& measurer_;
  const InterruptFlag& interrupt_;
};

}  // namespace swr
