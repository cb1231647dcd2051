// The main job, from checked inputs to exit code, whatever it tunes (one shape, --both, the GEMM
// sweep, or a plan of both families): which devices measure (device_selection.hpp: one worker
// process per device, each variant on whichever device is free), the lock on each of them while
// the run measures (gpu_lock.hpp), the part of the plan this job tunes under --shard (shard.hpp),
// and the families' sessions under one progress display whose count and ETA cover the whole run.
// When the named GPU is not here (and no --devices asked for it), it compiles what a tune would
// measure instead (attention also ranked by the L2 model) and says why nothing is timed.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "swr/gpu_profile.hpp"
#include "tuner/device_selection.hpp"
#include "tuner/plan_file.hpp"
#include "tuner/shard.hpp"
#include "tuner/tuning_request.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {

struct TuningJob {
  GpuProfile gpu;  // as named: the datasheet profile (the present device's for auto)
  std::vector<PlannedAttention> attention;
  std::vector<PlannedAttentionBackward> attention_backward;
  std::vector<PlannedGemm> gemm;
  bool gemm_sweep = false;
  std::filesystem::path sweep_out;  // empty: bench/results/gemm-sweep-<gpu>
  bool plant_fault = false;         // for tests: an attention variant that faults on purpose
  CompileSettings compile;
  TuningRequest tuning;
  std::optional<DeviceSpec> devices;  // --devices; none: $SWR_DEVICE or 0, if it is the GPU
  bool wait_for_devices = true;       // false: --no-wait
  std::optional<Shard> shard;
};

// 0 when done (failed variants are results too), 1 when compiling only and a variant failed to
// compile (or, with --no-wait, a device is busy), 130 after Ctrl-C. UsageError for devices, a
// shard or configs the rules refuse, before anything is compiled or measured.
int run_tuning_job(const TuningJob& job);

}  // namespace swr
