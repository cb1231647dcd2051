// The GEMM measurement worker: `swr-tune __measure-gemm-worker`, started by the GEMM tuning
// session through WorkerClient. The same protocol and exit codes as the attention worker
// (measurement_worker.hpp); its requests carry "family": "gemm" (gemm_variant_job.hpp).
#pragma once

namespace swr {

inline constexpr const char* kMeasureGemmWorkerSubcommand = "__measure-gemm-worker";

int run_gemm_measurement_worker();

}  // namespace swr
