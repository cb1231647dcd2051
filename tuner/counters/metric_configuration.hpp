// The host half of CUPTI profiling: a chip's metric list turned into a config image (which
// counters, scheduled over how many passes) and the evaluation of decoded counter data back into
// metric values. Needs no driver (no device is touched), so CI checks names and pass counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tuner/counters/cupti_library.hpp"
#include "tuner/counters/l2_metric_set.hpp"

namespace swr {

class MetricConfiguration {
 public:
  // `counter_availability` is the device's image (cuptiProfilerGetCounterAvailability); empty
  // means "none", which CUPTI accepts for chips it knows. Throws CuptiError: an unknown chip
  // (CUPTI_ERROR_INVALID_CHIP_NAME), a metric the chip lacks (INVALID_PARAMETER/METRIC_NAME).
  MetricConfiguration(const CuptiLibrary& cupti, const std::string& chip,
                      const std::vector<std::string>& metric_names,
                      const std::vector<std::uint8_t>& counter_availability = {});
  ~MetricConfiguration();
  MetricConfiguration(const MetricConfiguration&) = delete;
  MetricConfiguration& operator=(const MetricConfiguration&) = delete;

  const std::string& chip() const { return chip_; }
  const std::vector<std::string>& metric_names() const { return metric_names_; }
  // The names as C strings, in metric_names() order, for CUPTI's params structs.
  std::vector<const char*> metric_name_pointers() const;
  const std::vector<std::uint8_t>& config_image() const { return config_image_; }
  // Replay passes the counters need (every one re-runs the measured work).
  std::size_t passes() const { return passes_; }

  // The metrics' values for one range of decoded counter data, in metric_names() order.
  std::vector<double> evaluate(const std::vector<std::uint8_t>& counter_data,
                               std::size_t range_index) const;

 private:
  const CuptiLibrary& cupti_;
  std::string chip_;
  std::vector<std::string> metric_names_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  std::vector<std::uint8_t> config_image_;
  std::size_t passes_ = 0;
};

// The first of the chip's L2 metric sets (l2_metric_sets_for_chip) that CUPTI accepts, configured.
struct L2MetricConfiguration {
  L2MetricSet set;
  std::unique_ptr<MetricConfiguration> configuration;
};
// Throws CuptiError for an unknown chip, std::runtime_error naming every rejected set when none
// is accepted.
L2MetricConfiguration configure_l2_metrics(const CuptiLibrary& cupti, const std::string& chip,
                                           const std::vector<std::uint8_t>& counter_availability);

// Chip names CUPTI's host side knows ("GH100", "GB20B", ...).
std::vector<std::string> cupti_supported_chips(const CuptiLibrary& cupti);

}  // namespace swr
