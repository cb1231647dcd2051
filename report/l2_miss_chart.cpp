#include "report/l2_miss_chart.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "model/backward_prediction.hpp"
#include "model/closed_form_traffic.hpp"
#include "swr/attention_backward_config.hpp"

namespace swr::report {

namespace {

constexpr std::size_t kTwinPairsDrawn = 2;

// Everything of a shape but its sequence length (equal S_q and S_kv: the alignment is moot).
using ShapeFamily =
    std::tuple<int, int, int, int, std::string, bool>;  // B, H, H_kv, D, dtype, causal

ShapeFamily family_of(const AttentionProblem& problem) {
  return {problem.batch,
          problem.heads,
          problem.kv_head_count(),
          problem.head_dim,
          std::string(to_string(problem.dtype)),
          problem.causal};
}

std::string shape_text(const ShapeFamily& family) {
  const auto& [batch, heads, kv_heads, head_dim, dtype, causal] = family;
  return "B" + std::to_string(batch) + " H" + std::to_string(heads) +
         (kv_heads != heads ? "/" + std::to_string(kv_heads) + " K/V" : std::string()) + " D" +
         std::to_string(head_dim) + " " + dtype + (causal ? " causal" : " non-causal");
}

std::string stem_of(AttentionPass pass, const ShapeFamily& family) {
  const auto& [batch, heads, kv_heads, head_dim, dtype, causal] = family;
  return "l2_misses_" + std::string(stem_prefix(pass)) + "b" + std::to_string(batch) + "_h" +
         std::to_string(heads) +
         (kv_heads != heads ? "_kv" + std::to_string(kv_heads) : std::string()) + "_d" +
         std::to_string(head_dim) + "_" + dtype + (causal ? "_causal" : "_noncausal");
}

// A variant with its order left out: "m128n64w4s2-grid-head_major" (both passes' keys name the
// order as one "-cyclic" or "-sawtooth" part).
std::string twin_name(const std::string& config_key, KvOrder order) {
  std::string key = config_key;
  std::string part = "-";  // appended: GCC 12 warns falsely (-Wrestrict) on "literal" + string
  part += to_string(order);
  const std::size_t at = key.find(part);
  if (at != std::string::npos) key.erase(at, part.size());
  return key;
}

struct MeasuredMiss {
  std::string config_key;
  KvOrder order = KvOrder::cyclic;
  double median_ms = 0;
  double misses = 0;
  int blocks_per_sm = 1;

  std::string twin() const { return twin_name(config_key, order); }
};

// For one shape family: S -> the valid measurements that carry a miss count.
using MissesBySeq = std::map<int, std::vector<MeasuredMiss>>;

std::vector<SeriesPoint> series_of(const MissesBySeq& by_seq, const std::string& twin,
                                   KvOrder order) {
  std::vector<SeriesPoint> points;
  for (const auto& [seq, measured] : by_seq) {
    for (const MeasuredMiss& m : measured) {
      if (m.order == order && m.twin() == twin) {
        points.push_back({static_cast<double>(seq), m.misses});
      }
    }
  }
  return points;
}

// Twin pairs measured in both orders at two or more S, most S first, then the pair that holds
// the fastest variant at the most S.
std::vector<std::string> twins_to_draw(const MissesBySeq& by_seq) {
  std::map<std::string, int> both_orders, fastest;
  for (const auto& [seq, measured] : by_seq) {
    std::map<std::string, std::set<KvOrder>> orders;
    for (const MeasuredMiss& m : measured) orders[m.twin()].insert(m.order);
    for (const auto& [twin, seen] : orders) both_orders[twin] += seen.size() == 2 ? 1 : 0;
    const auto quickest = std::min_element(
        measured.begin(), measured.end(),
        [](const MeasuredMiss& a, const MeasuredMiss& b) { return a.median_ms < b.median_ms; });
    if (quickest != measured.end()) ++fastest[quickest->twin()];
  }
  std::vector<std::string> twins;
  for (const auto& [twin, count] : both_orders) {
    if (count >= 2) twins.push_back(twin);
  }
  std::sort(twins.begin(), twins.end(), [&](const std::string& a, const std::string& b) {
    return std::tuple(-both_orders[a], -fastest[a], a) <
           std::tuple(-both_orders[b], -fastest[b], b);
  });
  if (twins.size() > kTwinPairsDrawn) twins.resize(kTwinPairsDrawn);
  return twins;
}

std::vector<L2MissSeries> fastest_per_order(const MissesBySeq& by_seq) {
  std::vector<L2MissSeries> series;
  for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
    L2MissSeries line{"fastest " + std::string(to_string(order)) + " variant", order, 0, {}};
    for (const auto& [seq, measured] : by_seq) {
      const MeasuredMiss* quickest = nullptr;
      for (const MeasuredMiss& m : measured) {
        if (m.order == order && (!quickest || m.median_ms < quickest->median_ms)) {
          quickest = &m;
        }
      }
      if (quickest) line.points.push_back({static_cast<double>(seq), quickest->misses});
    }
    if (!line.points.empty()) series.push_back(std::move(line));
  }
  return series;
}

AttentionProblem problem_at(const ShapeFamily& family, int seq) {
  const auto& [batch, heads, kv_heads, head_dim, dtype, causal] = family;
  AttentionProblem problem;
  problem.batch = batch;
  problem.heads = heads;
  problem.kv_heads = kv_heads;
  problem.seq_q = problem.seq_kv = seq;
  problem.head_dim = head_dim;
  problem.dtype = parse_data_type(dtype).value_or(DataType::f16);
  problem.causal = causal;
  return problem;
}

// The forward's model lines: the closed form's cold misses and the sequence length from which
// the K/V in flight outgrow the usable L2.
void add_forward_model_lines(L2MissPanel& panel, const ShapeFamily& family,
                             const MissesBySeq& by_seq, const GpuResults& results) {
  const MeasuredMiss& sample = by_seq.begin()->second.front();
  const std::optional<AttentionConfig> config = AttentionConfig::from_key(sample.config_key);
  if (!config) return;
  const int sector_bytes = results.profile ? results.profile->l2_sector_bytes : 32;
  const model::TileShape tile{config->block_m, config->block_n};
  for (const auto& [seq, measured] : by_seq) {
    const model::ClosedFormTraffic traffic =
        model::closed_form_traffic(problem_at(family, seq), tile, sector_bytes);
    panel.cold_misses.push_back(
        {static_cast<double>(seq), static_cast<double>(traffic.compulsory.total())});
  }
  const std::int64_t l2_bytes =
      results.profile ? results.profile->l2_bytes : results.records.front().gpu.l2_bytes;
  const int partitions = results.profile ? std::max(results.profile->l2_partitions, 1) : 1;
  model::OnsetInputs onset;
  onset.shape = problem_at(family, by_seq.begin()->first);
  onset.block_m = config->block_m;
  onset.swizzle = config->swizzle;
  onset.head_group = config->head_group;
  onset.wave_size = results.records.front().gpu.sm_count * std::max(sample.blocks_per_sm, 1);
  onset.usable_l2_bytes = l2_bytes / partitions;
  if (const auto seq = model::non_compulsory_onset_seq(onset)) {
    panel.onset_seq = static_cast<double>(*seq);
  }
}

// The backward's cold misses: the L2 model's compulsory sectors of its schedule replay (every
// tile of Q, dO, their L and delta rows, the dQ accumulator, K and V once). The replay needs the
// GPU's profile: without one the panel has no cold-miss line. No onset marker: the forward's rule
// (K/V in flight) is not the backward's (Q and dO in flight).
void add_backward_model_lines(L2MissPanel& panel, const ShapeFamily& family,
                              const MissesBySeq& by_seq, const GpuResults& results) {
  const std::optional<AttentionBackwardConfig> config =
      AttentionBackwardConfig::from_key(by_seq.begin()->second.front().config_key);
  if (!config || !results.profile) return;
  for (const auto& [seq, measured] : by_seq) {
    const model::BackwardPrediction replay = model::predict_backward_variant(
        AttentionBackwardProblem{problem_at(family, seq)}, *results.profile, *config);
    if (!replay.runnable) continue;
    panel.cold_misses.push_back(
        {static_cast<double>(seq), static_cast<double>(replay.compulsory_misses)});
  }
}

}  // namespace

std::vector<L2MissPanel> l2_miss_panels(const GpuResults& results, AttentionPass pass) {
  std::map<ShapeFamily, MissesBySeq> families;
  for (const ProblemResults* problem : results.of_family(family_name(pass))) {
    if (!problem->problem.attention) continue;
    const AttentionProblem& shape = *problem->problem.attention;
    if (shape.seq_q != shape.seq_kv) continue;
    for (const db::StoredMeasurement& stored : problem->measurements) {
      const db::MeasurementRecord& record = stored.record;
      if (record.status != db::MeasurementStatus::ok || !record.l2_sector_misses) continue;
      const std::optional<KvOrder> order = walk_order(pass, stored.config_key);
      if (!order) continue;
      families[family_of(shape)][shape.seq_q].push_back(
          {stored.config_key, *order, *record.median_ms, *record.l2_sector_misses,
           record.blocks_per_sm.value_or(1)});
    }
  }

  std::vector<L2MissPanel> panels;
  for (const auto& [family, by_seq] : families) {
    if (by_seq.size() < 2) continue;  // a line needs two sequence lengths
    L2MissPanel panel;
    panel.pass = pass;
    panel.stem = stem_of(pass, family);
    panel.shape = shape_text(family);
    const std::vector<std::string> twins = twins_to_draw(by_seq);
    for (std::size_t i = 0; i < twins.size(); ++i) {
      for (KvOrder order : {KvOrder::cyclic, KvOrder::sawtooth}) {
        panel.series.push_back({std::string(to_string(order)) + "  " + twins[i], order,
                                static_cast<int>(i), series_of(by_seq, twins[i], order)});
      }
    }
    if (twins.empty()) {
      panel.twins = false;
      panel.series = fastest_per_order(by_seq);
    }
    if (pass == AttentionPass::forward) {
      add_forward_model_lines(panel, family, by_seq, results);
    } else {
      add_backward_model_lines(panel, family, by_seq, results);
    }
    panels.push_back(std::move(panel));
  }
  return panels;
}

namespace {

const char* const kTwinColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};

// What each pass's cold-miss line counts (its model's compulsory sectors).
std::string cold_misses_text(AttentionPass pass) {
  return pass == AttentionPass::forward
             ? "cold misses (Q, K, V, O once)"
             : "cold misses (Q, dO, L, delta, the dQ accumulator, K, V once: the L2 model)";
}

std::string describe_onset(const L2MissPanel& panel, double low, double high) {
  if (!panel.onset_seq || *panel.onset_seq < low || *panel.onset_seq > high) return "";
  const std::string at = data_number(*panel.onset_seq);
  return "set arrow 1 from first " + at + ", graph 0 to first " + at +
         ", graph 1 nohead dt 4 lw 1.5 lc rgb 'gray40'\n"
         "set label 1 'model: K/V in flight exceed the usable L2' at first " +
         at + ", graph 0.04 left offset character 0.6, 0 tc rgb 'gray30' font ',10'\n";
}

}  // namespace

std::string sequence_tics(const std::vector<double>& values) {
  std::set<double> distinct(values.begin(), values.end());
  std::string tics = "set xtics (";
  bool first = true;
  for (double value : distinct) {
    tics += (first ? "" : ", ") + gnuplot_string(short_count(static_cast<long long>(value))) + " " +
            data_number(value);
    first = false;
  }
  tics += ")\n";
  if (!distinct.empty()) {
    tics += "set xrange [" + data_number(*distinct.begin() / 1.4) + ":" +
            data_number(*distinct.rbegin() * 1.4) + "]\n";
  }
  return tics;
}

ChartFiles write_l2_miss_chart(const L2MissPanel& panel, const std::string& gpu_label,
                               const std::filesystem::path& directory) {
  const std::string walk = walk_name(panel.pass);
  ChartFiles files;
  files.title = "L2 misses vs sequence length, attention " + std::string(pass_name(panel.pass)) +
                ": " + panel.shape;
  files.png = panel.stem + ".png";
  files.script = panel.stem + ".gp";
  files.data = panel.stem + ".dat";
  files.caption =
      (panel.twins ? "Each colour is one variant in both " + walk +
                         " orders (solid: cyclic, dashed: sawtooth); "
                   : "The fastest variant of each " + walk + " order at each S; ") +
      "misses are the tuner's CUPTI counter lts__t_sectors_srcunit_tex_lookup_miss.sum over " +
      counted_span(panel.pass) + ", L2 flushed before every pass." +
      (panel.cold_misses.empty() ? std::string()
                                 : " Black dotted: " + cold_misses_text(panel.pass) + ".");

  std::vector<std::vector<std::vector<std::optional<double>>>> blocks;
  std::vector<double> seqs;
  for (const L2MissSeries& series : panel.series) {
    std::vector<std::vector<std::optional<double>>> rows;
    for (const SeriesPoint& point : series.points) {
      rows.push_back({point.x, point.y});
      seqs.push_back(point.x);
    }
    blocks.push_back(std::move(rows));
  }
  std::vector<std::string> comment = {files.title + " on " + gpu_label,
                                      "columns: sequence length S, L2 sector misses"};
  for (std::size_t i = 0; i < panel.series.size(); ++i) {
    comment.push_back("index " + std::to_string(i) + ": " + panel.series[i].label);
  }
  if (!panel.cold_misses.empty()) {
    std::vector<std::vector<std::optional<double>>> cold;
    for (const SeriesPoint& point : panel.cold_misses) cold.push_back({point.x, point.y});
    blocks.push_back(std::move(cold));
    comment.push_back("index " + std::to_string(panel.series.size()) + ": " +
                      cold_misses_text(panel.pass));
  }
  write_text_file(directory / files.data, data_blocks(comment, blocks));

  const auto [low, high] = std::minmax_element(seqs.begin(), seqs.end());
  std::string script = png_terminal(files.png, 1100, 700) + chart_style();
  script += "set title " +
            gnuplot_string("Attention " + std::string(pass_name(panel.pass)) +
                           ": L2 misses vs sequence length, cyclic vs sawtooth " + walk + "\n" +
                           panel.shape + " on " + gpu_label) +
            "\n";
  script += "set xlabel 'sequence length S = S_q = S_kv (tokens, log scale)'\n";
  script += "set ylabel 'L2 sector misses (32-byte sectors, log scale)'\n";
  script += "set logscale xy\nset format y '%.0s%c'\n";
  script += sequence_tics(seqs);
  script += "set key top left Left reverse\n";
  if (!seqs.empty()) script += describe_onset(panel, *low, *high);
  std::vector<std::string> plots;
  for (std::size_t i = 0; i < panel.series.size(); ++i) {
    const L2MissSeries& series = panel.series[i];
    const bool sawtooth = series.order == KvOrder::sawtooth;
    const std::string colour =
        panel.twins ? kTwinColours[series.twin_index % 4] : (sawtooth ? "#ff7f0e" : "#1f77b4");
    plots.push_back(gnuplot_string(files.data) + " index " + std::to_string(i) +
                    " using 1:2 with linespoints lw 2.2 ps 1.3 pt " + (sawtooth ? "5" : "7") +
                    " dt " + (sawtooth ? "2" : "1") + " lc rgb '" + colour + "' title " +
                    gnuplot_string(series.label));
  }
  if (!panel.cold_misses.empty()) {
    plots.push_back(gnuplot_string(files.data) + " index " + std::to_string(panel.series.size()) +
                    " using 1:2 with lines lw 2 dt 3 lc rgb 'black' title " +
                    gnuplot_string(cold_misses_text(panel.pass)));
  }
  script += "plot \\\n";
  for (std::size_t i = 0; i < plots.size(); ++i) {
    script += "  " + plots[i] + (i + 1 < plots.size() ? ", \\\n" : "\n");
  }
  write_text_file(directory / files.script, script);
  return files;
}

}  // namespace swr::report
