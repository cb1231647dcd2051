// One attention tuning run: for each shape, measure every variant of the space that the database
// does not hold yet for this GPU (all of them with retune), committing each on its own, while the
// rest compile in parallel. A run stopped by Ctrl-C, --limit or --time-budget keeps what it
// measured; the same command later measures only what is missing. It ends with the result tables.
// What every family's run does alike is in tuning_run.hpp.
#pragma once

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/tuning_plan.hpp"
#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

using TuningShape = TuningShapeOf<AttentionProblem, AttentionConfig>;
using TuningPlan = TuningPlanOf<AttentionProblem, AttentionConfig>;

class TuningSession {
 public:
  // `measurer` is only asked when something needs measuring (a complete shape costs no device).
  TuningSession(TuningPlan plan, VariantMeasurer& measurer, const InterruptFlag& interrupt);
  // Prints progress and the closing tables on stdout, notices on stderr. Throws UsageError for a
  // database it cannot use, std::runtime_error when measuring is impossible (what is committed
  // stays committed).
  TuningSummary run();

 private:
  TuningPlan plan_;
  VariantMeasurer& measurer_;
  const InterruptFlag& interrupt_;
};

}  // namespace swr
