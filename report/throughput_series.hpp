// Throughput against the sequence length, swr beside each peer: one panel per (dtype, causal
// flag), one plot per head dim, one line per candidate. From a bench result (every candidate
// measured in one run); without one, swr's tuned best per shape from the database alone.
#pragma once

#include <string>
#include <vector>

#include "report/bench_results.hpp"
#include "report/gpu_results.hpp"
#include "report/l2_miss_series.hpp"

namespace swr::report {

struct ThroughputSeries {
  std::string label;  // "swr", "flash2", ... or "swr tuned best, B8 H1"
  bool is_swr = false;
  std::vector<SeriesPoint> points;  // (S, TFLOP/s)
};

struct ThroughputPlot {
  int head_dim = 0;
  std::vector<ThroughputSeries> series;
  std::string note;  // e.g. "swr: no kernel for D=96"
};

// The sequence lengths one regime of the bench covers, and its batch and heads ("B=8 H=1",
// "B·S=16384 H=16"): a panel marks where the regime, and so the batch, changes.
struct RegimeSpan {
  std::string label;
  double first_seq = 0;
  double last_seq = 0;
};

struct ThroughputPanel {
  std::string stem;   // "throughput_f16_causal"
  std::string shape;  // "f16 causal"
  std::vector<ThroughputPlot> plots;
  std::vector<RegimeSpan> regimes;  // by sequence length; empty or one: nothing to mark
};

std::vector<ThroughputPanel> throughput_panels(const BenchResults& bench);
std::vector<ThroughputPanel> throughput_panels(const GpuResults& results);

}  // namespace swr::report
