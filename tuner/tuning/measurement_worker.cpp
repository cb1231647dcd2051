#include "tuner/tuning/measurement_worker.hpp"

#include "tuner/tuning/measurement_service.hpp"
#include "tuner/tuning/variant_measurement.hpp"

namespace swr {

int run_measurement_worker() {
  return serve_measurements<VariantMeasurementBench, VariantJob>("swr measurement worker",
                                                                 job_from_measure_request);
}

}  // namespace swr
