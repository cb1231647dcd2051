// The throughput chart: swr beside its peers per sequence length, and its gnuplot files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/attention_pass.hpp"
#include "report/bench_results.hpp"
#include "report/gnuplot.hpp"
#include "report/gpu_results.hpp"
#include "report/l2_miss_chart.hpp"

namespace swr::report {

// Throughput against the sequence length, swr beside each peer: one panel per (dtype, causal
// flag), one plot per head dim, one line per candidate. From a bench result (every candidate
// measured in one run, the forward); without one, and for the backward, swr's tuned best per shape
// from the database alone.

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
  AttentionPass pass = AttentionPass::forward;
  std::string stem;   // "throughput_f16_causal", "throughput_backward_bf16_causal"
  std::string shape;  // "f16 causal"
  std::vector<ThroughputPlot> plots;
  std::vector<RegimeSpan> regimes;  // by sequence length; empty or one: nothing to mark
};

std::vector<ThroughputPanel> throughput_panels(const BenchResults& bench);
// The TFLOP/s the tuner stored for the best variant (the pass's FLOP count over its median time).
std::vector<ThroughputPanel> throughput_panels(const GpuResults& results, AttentionPass pass);

// The gnuplot files of one throughput panel (throughput_series.hpp): a multiplot with one plot
// per head dim, S on a log axis, TFLOP/s (log when the candidates span more than a decade), swr
// in a heavy black line and each peer in its own colour.

// `subtitle` goes under the title (e.g. which batch and heads each regime uses).
ChartFiles write_throughput_chart(const ThroughputPanel& panel, const std::string& gpu_label,
                                  const std::string& subtitle,
                                  const std::filesystem::path& directory);

}  // namespace swr::report
