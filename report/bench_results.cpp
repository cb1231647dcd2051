#include "report/bench_results.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "swr/usage_error.hpp"

namespace swr::report {
namespace {

const std::vector<std::string> kPeerOrder = {"flash2", "cudnn", "efficient", "math", "cublas"};

std::optional<double> number(const nlohmann::json& json, const char* name) {
  if (!json.contains(name) || !json[name].is_number()) return std::nullopt;
  return json[name].get<double>();
}

std::string text(const nlohmann::json& json, const char* name) {
  if (!json.contains(name) || !json[name].is_string()) return {};
  return json[name].get<std::string>();
}

BenchCandidate parse_candidate(const nlohmann::json& json) {
  BenchCandidate candidate;
  candidate.status = json.at("status").get<std::string>();
  candidate.note = text(json, "note");
  candidate.median_ms = number(json, "median_ms");
  candidate.p95_ms = number(json, "p95_ms");
  candidate.tflops = number(json, "tflops");
  candidate.l2_sector_misses = number(json, "l2_sector_misses");
  candidate.l2_source = text(json, "l2_source");
  return candidate;
}

BenchPoint parse_point(const nlohmann::json& json) {
  BenchPoint point;
  point.family = json.at("family").get<std::string>();
  point.regime = json.at("regime").get<std::string>();
  point.key = json.at("key").get<std::string>();
  point.description = text(json, "describe");
  if (point.description.empty()) point.description = point.key;
  point.dtype = json.at("dtype").get<std::string>();
  if (point.family == "attention") {
    point.batch = json.at("batch").get<int>();
    point.heads = json.at("heads").get<int>();
    point.kv_heads = json.contains("kv_heads") ? json.at("kv_heads").get<int>() : point.heads;
    point.seq = json.at("seq").get<int>();
    point.head_dim = json.at("head_dim").get<int>();
    point.causal = json.at("causal").get<bool>();
  } else {
    point.m = json.at("m").get<long long>();
    point.n = json.at("n").get<long long>();
    point.k = json.at("k").get<long long>();
  }
  point.swr_config = text(json, "swr_config");
  point.swr_config_source = text(json, "swr_config_source");
  for (const auto& [name, candidate] : json.at("candidates").items()) {
    point.candidates[name] = parse_candidate(candidate);
  }
  return point;
}

}  // namespace

std::optional<double> BenchPoint::ratio_to(const std::string& peer) const {
  const auto swr = candidates.find("swr");
  const auto other = candidates.find(peer);
  if (swr == candidates.end() || other == candidates.end()) return std::nullopt;
  if (!swr->second.ok() || !other->second.ok()) return std::nullopt;
  return *other->second.median_ms / *swr->second.median_ms;
}

std::vector<std::string> BenchResults::peers() const {
  std::set<std::string> seen;
  for (const BenchPoint& point : points) {
    for (const auto& [name, candidate] : point.candidates) {
      if (name != "swr") seen.insert(name);
    }
  }
  std::vector<std::string> ordered;
  for (const std::string& name : kPeerOrder) {
    if (seen.erase(name) > 0) ordered.push_back(name);
  }
  ordered.insert(ordered.end(), seen.begin(), seen.end());
  return ordered;
}

std::vector<RegimeRatio> BenchResults::regime_ratios() const {
  std::vector<std::string> regimes;
  for (const BenchPoint& point : points) {
    if (std::find(regimes.begin(), regimes.end(), point.regime) == regimes.end()) {
      regimes.push_back(point.regime);
    }
  }
  std::vector<RegimeRatio> rows;
  for (const std::string& regime : regimes) {
    for (const std::string& peer : peers()) {
      RegimeRatio row{regime, peer};
      double log_sum = 0;
      for (const BenchPoint& point : points) {
        if (point.regime != regime) continue;
        const std::optional<double> ratio = point.ratio_to(peer);
        if (!ratio) continue;
        row.min = row.points == 0 ? *ratio : std::min(row.min, *ratio);
        row.max = row.points == 0 ? *ratio : std::max(row.max, *ratio);
        log_sum += std::log(*ratio);
        row.swr_faster += *ratio > 1.0 ? 1 : 0;
        ++row.points;
      }
      if (row.points == 0) continue;
      row.geometric_mean = std::exp(log_sum / row.points);
      rows.push_back(row);
    }
  }
  return rows;
}

std::string BenchResults::regime_title(const std::string& regime) const {
  if (method.contains("regimes") && method["regimes"].contains(regime) &&
      method["regimes"][regime].is_string()) {
    return method["regimes"][regime].get<std::string>();
  }
  return regime;
}

BenchResults read_bench_results(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw UsageError("cannot read bench results " + path.string() +
                     ": allowed the results.json that bench/peer_grid.py writes");
  }
  BenchResults results;
  results.path = path;
  try {
    const nlohmann::json document = nlohmann::json::parse(in);
    if (document.value("schema", std::string()) != kBenchSchema) {
      throw std::invalid_argument(std::string("schema is not ") + kBenchSchema);
    }
    results.record = document.value("record", nlohmann::json::object());
    results.method = document.value("method", nlohmann::json::object());
    for (const nlohmann::json& point : document.at("points")) {
      results.points.push_back(parse_point(point));
    }
  } catch (const std::exception& error) {
    throw UsageError(path.string() + " is not a bench/peer_grid.py result (" + error.what() +
                     "): allowed the results.json it writes");
  }
  return results;
}

}  // namespace swr::report
