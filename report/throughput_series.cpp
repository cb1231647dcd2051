#include "report/throughput_series.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace swr::report {
namespace {

using PanelKey = std::tuple<std::string, bool>;  // dtype, causal

std::string stem_of(const PanelKey& key) {
  return "throughput_" + std::get<0>(key) + (std::get<1>(key) ? "_causal" : "_noncausal");
}

std::string shape_of(const PanelKey& key) {
  return std::get<0>(key) + (std::get<1>(key) ? " causal" : " non-causal");
}

void sort_points(std::vector<ThroughputSeries>& series) {
  for (ThroughputSeries& line : series) {
    std::sort(line.points.begin(), line.points.end(),
              [](const SeriesPoint& a, const SeriesPoint& b) { return a.x < b.x; });
  }
}

// "B=8 H=1" when a regime's points share the batch, "B·S=16384 H=16" when they share B*S.
std::string batch_and_heads(const std::vector<const BenchPoint*>& points) {
  std::set<long long> batches, tokens, heads;
  for (const BenchPoint* point : points) {
    batches.insert(point->batch);
    tokens.insert(static_cast<long long>(point->batch) * point->seq);
    heads.insert(point->heads);
  }
  std::string label = batches.size() == 1  ? "B=" + std::to_string(*batches.begin())
                      : tokens.size() == 1 ? "B·S=" + std::to_string(*tokens.begin())
                                           : "B varies";
  return label + (heads.size() == 1 ? " H=" + std::to_string(*heads.begin()) : "");
}

std::vector<RegimeSpan> regime_spans(const BenchResults& bench, const PanelKey& key) {
  std::map<std::string, std::vector<const BenchPoint*>> by_regime;
  for (const BenchPoint& point : bench.points) {
    if (point.family == "attention" && PanelKey{point.dtype, point.causal} == key) {
      by_regime[point.regime].push_back(&point);
    }
  }
  std::vector<RegimeSpan> spans;
  for (const auto& [regime, points] : by_regime) {
    RegimeSpan span{batch_and_heads(points), 1e300, 0};
    for (const BenchPoint* point : points) {
      span.first_seq = std::min(span.first_seq, static_cast<double>(point->seq));
      span.last_seq = std::max(span.last_seq, static_cast<double>(point->seq));
    }
    spans.push_back(span);
  }
  std::sort(spans.begin(), spans.end(),
            [](const RegimeSpan& a, const RegimeSpan& b) { return a.first_seq < b.first_seq; });
  return spans;
}

}  // namespace

std::vector<ThroughputPanel> throughput_panels(const BenchResults& bench) {
  std::vector<std::string> candidates = {"swr"};
  for (const std::string& peer : bench.peers()) candidates.push_back(peer);
  // panel -> head dim -> candidate -> points
  std::map<PanelKey, std::map<int, std::map<std::string, std::vector<SeriesPoint>>>> grouped;
  std::map<PanelKey, std::map<int, std::string>> swr_notes;
  for (const BenchPoint& point : bench.points) {
    if (point.family != "attention") continue;
    const PanelKey key{point.dtype, point.causal};
    auto& by_candidate = grouped[key][point.head_dim];
    for (const auto& [name, candidate] : point.candidates) {
      if (candidate.ok() && candidate.tflops) {
        by_candidate[name].push_back({static_cast<double>(point.seq), *candidate.tflops});
      }
    }
    const auto swr = point.candidates.find("swr");
    if (swr != point.candidates.end() && swr->second.status == "unsupported") {
      swr_notes[key][point.head_dim] = "swr: no kernel for D=" + std::to_string(point.head_dim);
    }
  }
  std::vector<ThroughputPanel> panels;
  for (const auto& [key, by_head_dim] : grouped) {
    ThroughputPanel panel{stem_of(key), shape_of(key), {}, regime_spans(bench, key)};
    for (const auto& [head_dim, by_candidate] : by_head_dim) {
      ThroughputPlot plot{head_dim, {}, swr_notes[key][head_dim]};
      for (const std::string& name : candidates) {
        const auto found = by_candidate.find(name);
        if (found == by_candidate.end()) continue;
        plot.series.push_back({name, name == "swr", found->second});
      }
      sort_points(plot.series);
      panel.plots.push_back(std::move(plot));
    }
    panels.push_back(std::move(panel));
  }
  return panels;
}

std::vector<ThroughputPanel> throughput_panels(const GpuResults& results) {
  std::map<PanelKey, std::map<int, std::map<std::pair<int, int>, std::vector<SeriesPoint>>>>
      grouped;
  for (const ProblemResults* problem : results.of_family("attention")) {
    const db::StoredMeasurement* best = problem->best();
    if (!problem->problem.attention || !best || !best->record.tflops) continue;
    const AttentionProblem& shape = *problem->problem.attention;
    if (shape.seq_q != shape.seq_kv) continue;
    const PanelKey key{std::string(to_string(shape.dtype)), shape.causal};
    grouped[key][shape.head_dim][{shape.batch, shape.heads}].push_back(
        {static_cast<double>(shape.seq_q), *best->record.tflops});
  }
  std::vector<ThroughputPanel> panels;
  for (const auto& [key, by_head_dim] : grouped) {
    ThroughputPanel panel{stem_of(key), shape_of(key), {}, {}};
    for (const auto& [head_dim, by_batch] : by_head_dim) {
      ThroughputPlot plot{head_dim, {}, ""};  // the panel's subtitle says it is swr alone
      for (const auto& [batch_heads, points] : by_batch) {
        plot.series.push_back({"swr tuned best, B" + std::to_string(batch_heads.first) + " H" +
                                   std::to_string(batch_heads.second),
                               true, points});
      }
      sort_points(plot.series);
      panel.plots.push_back(std::move(plot));
    }
    panels.push_back(std::move(panel));
  }
  return panels;
}

}  // namespace swr::report
