// The L2-misses chart: its series from the tuner's counters, and its gnuplot files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/gnuplot.hpp"
#include "report/gpu_results.hpp"
#include "swr/attention_config.hpp"

namespace swr::report {

// L2 misses against the sequence length, cyclic against sawtooth K/V order (the Sawtooth paper's
// Figures 5 and 8), from the tuner's counters. One panel per shape family that was measured at
// two or more sequence lengths (same batch, heads, head dim, dtype, causal flag, S_q = S_kv).
//
// Lines come in twins: a variant and the same variant with the other K/V order (same tile,
// stages, persistence, swizzle), so that the order is the only difference. The two twin pairs
// measured at the most sequence lengths are drawn; without any pair, the fastest variant of
// each order per S. Each panel also has the cold-miss line (every byte of Q, K, V and O once:
// the closed-form model's compulsory sectors, the paper's 16S) and the sequence length from which
// the L2 model expects misses beyond it.

struct SeriesPoint {
  double x = 0;
  double y = 0;
};

struct L2MissSeries {
  std::string label;  // "cyclic  m128n64w4s2-grid-head_major"
  KvOrder order = KvOrder::cyclic;
  int twin_index = 0;               // twins share an index (and a colour)
  std::vector<SeriesPoint> points;  // (S, L2 sector misses)
};

struct L2MissPanel {
  std::string stem;   // file name stem, e.g. "l2_misses_b8_h1_d128_f16_noncausal"
  std::string shape;  // "B8 H1 D128 f16 non-causal"
  std::vector<L2MissSeries> series;
  std::vector<SeriesPoint> cold_misses;  // (S, compulsory sectors)
  std::optional<double> onset_seq;       // model: K/V in flight exceed the usable L2 from here
  bool twins = true;                     // false: the fastest-per-order fallback
};

std::vector<L2MissPanel> l2_miss_panels(const GpuResults& results);

// The gnuplot files of one L2-misses panel (l2_miss_series.hpp): log-log, one colour per twin
// pair, solid cyclic and dashed sawtooth, the cold-miss line in black and the model's onset of
// non-compulsory misses as a vertical marker.

ChartFiles write_l2_miss_chart(const L2MissPanel& panel, const std::string& gpu_label,
                               const std::filesystem::path& directory);

// Log-scale tics at the given values, labelled 512, 16K, 256K: `set xtics (...)`, and an x range
// a little wider than the values.
std::string sequence_tics(const std::vector<double>& values);

}  // namespace swr::report
