// The L2 figures the tuner records about one kernel (L2Counters), which CUPTI metrics give them on
// a chip and how their values combine (L2MetricSet), and the host half of CUPTI profiling that
// turns a metric list into a config image and decoded counter data back into values
// (MetricConfiguration). The host half needs no driver (no device is touched), so CI checks names
// and pass counts. Names per chip were checked with CUPTI's host API
// (tests/counters/cupti_host_test.cpp): GH100 and GB100 have dram__bytes_{read,write}; GB20B (GB10)
// has no dram__ metrics, so L2 fill sectors stand in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/counters/cupti_library.hpp"

namespace swr {

// Every figure is optional: a chip without the metric, or a process where profiling is
// unavailable, leaves it empty (stored as missing).
struct L2Counters {
  std::optional<double> l2_sectors_from_tex;        // 32-byte L2 sectors requested by L1/TEX
  std::optional<double> l2_sector_misses_from_tex;  // those that missed in L2
  std::optional<double> l2_hit_rate_percent;        // all L2 sectors, every source
  std::optional<double> dram_bytes_read;
  std::optional<double> dram_bytes_written;
  // How the DRAM figures were obtained: "dram__bytes" (the DRAM counters) or "l2_fill_sectors"
  // (GB10, no dram__ metrics: sectors filled into L2 from memory x 32 bytes); empty when none.
  std::string dram_source;

  bool empty() const {
    return !l2_sectors_from_tex && !l2_sector_misses_from_tex && !l2_hit_rate_percent &&
           !dram_bytes_read && !dram_bytes_written;
  }
};

enum class L2Figure {
  sectors_from_tex,
  sector_misses_from_tex,
  hit_rate_percent,
  dram_bytes_read,
  dram_bytes_written
};

// figure = scale * (sum of the metrics' values)
struct L2FigureFormula {
  L2Figure figure;
  std::vector<std::string> metrics;
  double scale = 1;
};

struct L2MetricSet {
  std::string name;  // "dram_bytes", "dram_op_bytes", "l2_fill_sectors", "l2_only"
  std::vector<L2FigureFormula> formulas;
  std::string dram_source;  // copied into L2Counters::dram_source; empty when no DRAM figure

  // Every metric the formulas read, each once, in first-use order: what CUPTI is asked for.
  std::vector<std::string> metric_names() const;
  // `values` are the metrics' values in metric_names() order.
  L2Counters evaluate(const std::vector<double>& values) const;
};

// The sets to try on a chip (CUPTI's chip name, e.g. "GH100", "GB20B"), most complete first; the
// session uses the first one CUPTI accepts. Unknown chips get the GH100 set first, then fallbacks
// down to the L2 figures alone.
std::vector<L2MetricSet> l2_metric_sets_for_chip(std::string_view chip);

// The host half of CUPTI profiling: a chip's metric list turned into a config image (which
// counters, scheduled over how many passes) and the evaluation of decoded counter data back into
// metric values.
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
