// Which CUPTI metrics give the L2 figures on a chip, and how their values combine into L2Counters.
// Names per chip were checked with CUPTI's host API (tests/counters/cupti_host_test.cpp): GH100 and
// GB100 have dram__bytes_{read,write}; GB20B (GB10) has no dram__ metrics, so L2 fill sectors stand
// in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tuner/counters/l2_counters.hpp"

namespace swr {

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

}  // namespace swr
