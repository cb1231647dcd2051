// The L2-misses chart: its series from the tuner's counters, and its gnuplot files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/attention_pass.hpp"
#include "report/gnuplot.hpp"
#include "report/gpu_results.hpp"
#include "swr/attention_config.hpp"

namespace swr::report {

// L2 misses against the sequence length, cyclic against sawtooth walk order (the Sawtooth paper's
// Figures 5 and 8), from the tuner's counters, for one attention pass: the forward's K/V order or
// the backward's Q walk. One panel per shape family that was measured at two or more sequence
// lengths (same batch, heads, head dim, dtype, causal flag, S_q = S_kv).
//
// Lines come in twins: a variant and the same variant with the other order (same tile, stages,
// persistence, swizzle, and for the backward the same dQ accumulation), so that the order is the
// only difference. The two twin pairs measured at the most sequence lengths are drawn; without
// any pair, the fastest variant of each order per S. Each panel also has the cold-miss line: for
// the forward every byte of Q, K, V and O once (the closed-form model's compulsory sectors, the
// paper's 16S) and the sequence length from which the L2 model expects misses beyond it; for the
// backward the compulsory sectors of the L2 model's replay (model/backward_prediction.hpp), drawn
// when the GPU has a built-in profile.

struct SeriesPoint {
  double x = 0;
  double y = 0;
};

struct L2MissSeries {
  std::string label;                // "cyclic  m128n64w4s2-grid-head_major"
  KvOrder order = KvOrder::cyclic;  // the forward's K/V order or the backward's Q walk
  int twin_index = 0;               // twins share an index (and a colour)
  std::vector<SeriesPoint> points;  // (S, L2 sector misses)
};

struct L2MissPanel {
  AttentionPass pass = AttentionPass::forward;
  std::string stem;   // "l2_misses_b8_h1_d128_f16_noncausal", "l2_misses_backward_b8_..."
  std::string shape;  // "B8 H1 D128 f16 non-causal"
  std::vector<L2MissSeries> series;
  std::vector<SeriesPoint> cold_misses;  // (S, compulsory sectors); may be empty (backward)
  std::optional<double> onset_seq;       // model: K/V in flight exceed the usable L2 from here
  bool twins = true;                     // false: the fastest-per-order fallback
};

std::vector<L2MissPanel> l2_miss_panels(const GpuResults& results, AttentionPass pass);

// The gnuplot files of one L2-misses panel (l2_miss_series.hpp): log-log, one colour per twin
// pair, solid cyclic and dashed sawtooth, the cold-miss line (when there is one) in black and the
// model's onset of non-compulsory misses (when there is one) as a vertical marker.

ChartFiles write_l2_miss_chart(const L2MissPanel& panel, const std::string& gpu_label,
                               const std::filesystem::path& directory);

// Log-scale tics at the given values, labelled 512, 16K, 256K: `set xtics (...)`, and an x range
// a little wider than the values.
std::string sequence_tics(const std::vector<double>& values);

}  // namespace swr::report
