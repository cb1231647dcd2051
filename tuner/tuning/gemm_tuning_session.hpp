// One GEMM tuning run: for each shape, measure cuBLAS (the baseline, in the same run) and every
// variant the database does not hold yet for this GPU (all with retune), each committed on its
// own; then the table of the fastest variants with their ratio to cuBLAS. Resumable like the
// attention session: what every family's run does alike is in tuning_run.hpp.
#pragma once

#include <memory>
#include <vector>

#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/tuning_plan.hpp"
#include "tuner/tuning/variant_record.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {

class ProgressDisplay;
class NvrtcCompiler;
class TuningRun;
template <class Config>
struct PendingVariant;

using GemmTuningShape = TuningShapeOf<GemmProblem, GemmConfig>;
using GemmTuningPlan = TuningPlanOf<GemmProblem, GemmConfig>;

struct GemmTuningSummary : TuningSummary {
  std::vector<GemmBaseline> baselines;  // per shape, in plan order (empty note: not measured)
};

class GemmTuningSession {
 public:
  GemmTuningSession(GemmTuningPlan plan, GemmVariantMeasurer& measurer,
                    const InterruptFlag& interrupt);
  // One measurer per device (plan.device_names names them): each measures cuBLAS on a shape
  // before its first variant of that shape, and its variants are compared with that.
  GemmTuningSession(GemmTuningPlan plan, std::vector<GemmVariantMeasurer*> measurers,
                    const InterruptFlag& interrupt);
  ~GemmTuningSession();

  // As TuningSession::find_missing: what the run sets out to do, the number of variants it lacks.
  int find_missing();
  // Prints progress and the closing tables on stdout, notices on stderr. `progress`: the display
  // of a whole run of several sessions.
  GemmTuningSummary run(ProgressDisplay* progress = nullptr);

 private:
  // Per device, per shape: its cuBLAS time, measured before its first variant of the shape.
  using DeviceBaselines = std::vector<std::vector<std::optional<GemmBaseline>>>;
  // Compiles `pending` and measures it on the devices, each committed on its own; the L2 counters
  // only with `collect_counters`.
  void measure_pending(const NvrtcCompiler& compiler,
                       std::vector<PendingVariant<GemmConfig>>& pending, bool collect_counters,
                       DeviceBaselines& baselines);

  GemmTuningPlan plan_;
  std::vector<GemmVariantMeasurer*> measurers_;
  const InterruptFlag& interrupt_;
  GemmTuningSummary summary_;
  std::unique_ptr<TuningRun> run_;
  std::vector<PendingVariant<GemmConfig>> pending_;
};

}  // namespace swr
