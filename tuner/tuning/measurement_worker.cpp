#include "tuner/tuning/measurement_worker.hpp"

#include "tuner/tuning/attention_measurement_bench.hpp"
#include "tuner/tuning/gemm_measurement_bench.hpp"
#include "tuner/tuning/gemm_variant_job.hpp"
#include "tuner/tuning/measurement_service.hpp"

namespace swr {

int run_measurement_worker() {
  return serve_measurements<AttentionMeasurementBench, VariantJob>("swr measurement worker",
                                                                   job_from_measure_request);
}

int run_gemm_measurement_worker() {
  return serve_measurements<GemmMeasurementBench, GemmVariantJob>("swr GEMM measurement worker",
                                                                  gemm_job_from_measure_request);
}

}  // namespace swr
