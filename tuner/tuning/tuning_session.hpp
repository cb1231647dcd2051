// One attention tuning run: for each shape, measure every variant of the space that the database
// does not hold yet for this GPU (all of them with retune), committing each on its own, while the
// rest compile in parallel. With several measurers (one per device of the run) the variants are
// spread over them (device_pool.hpp). A run stopped by Ctrl-C, --limit or --time-budget keeps
// what it measured; the same command later measures only what is missing. It ends with the result
// tables. What every family's run does alike is in tuning_run.hpp.
#pragma once

#include <memory>
#include <vector>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/tuning_plan.hpp"
#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

class ProgressDisplay;
class NvrtcCompiler;
class TuningRun;
template <class Config>
struct PendingVariant;

using TuningShape = TuningShapeOf<AttentionProblem, AttentionConfig>;
using TuningPlan = TuningPlanOf<AttentionProblem, AttentionConfig>;

class TuningSession {
 public:
  // Measurers are only asked when something needs measuring (a complete shape costs no device).
  TuningSession(TuningPlan plan, VariantMeasurer& measurer, const InterruptFlag& interrupt);
  // One measurer per device (plan.device_names names them).
  TuningSession(TuningPlan plan, std::vector<VariantMeasurer*> measurers,
                const InterruptFlag& interrupt);
  ~TuningSession();

  // Opens the database and says what the run sets out to do; returns how many variants it lacks.
  // run() calls it when it was not called.
  int find_missing();
  // Prints progress and the closing tables on stdout, notices on stderr. `progress`: the display
  // of a whole run of several sessions (it counts their variants too). Throws UsageError for a
  // database it cannot use, std::runtime_error when measuring is impossible (what is committed
  // stays committed).
  TuningSummary run(ProgressDisplay* progress = nullptr);

 private:
  // Compiles `pending` and measures it on the devices, each committed on its own; the L2 counters
  // only with `collect_counters`.
  void measure_pending(const NvrtcCompiler& compiler,
                       std::vector<PendingVariant<AttentionConfig>>& pending,
                       bool collect_counters);

  TuningPlan plan_;
  std::vector<VariantMeasurer*> measurers_;
  const InterruptFlag& interrupt_;
  TuningSummary summary_;
  std::unique_ptr<TuningRun> run_;
  std::vector<PendingVariant<AttentionConfig>> pending_;
};

}  // namespace swr
