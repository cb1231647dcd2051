// The result file of bench/peer_grid.py (schema "swr-peer-grid/1"): every point of the grid with
// swr's and each peer's timing, the versions and the command that made it. Read for the report's
// throughput charts and tables; the ratios are the bench's (peer time / swr time, so above 1
// means swr is faster), their geometric mean taken per regime.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace swr::report {

inline constexpr const char* kBenchSchema = "swr-peer-grid/1";

struct BenchCandidate {
  std::string status;  // "ok", "missing", "unavailable", "unsupported", "skipped", "wrong", ...
  std::string note;
  std::optional<double> median_ms;
  std::optional<double> p95_ms;
  std::optional<double> tflops;
  std::optional<double> l2_sector_misses;
  std::string l2_source;

  bool ok() const { return status == "ok" && median_ms && *median_ms > 0; }
};

struct BenchPoint {
  std::string family;  // "attention" or "gemm"
  std::string regime;  // "short", "long", "gemm"
  std::string key;
  std::string description;
  // Attention shape (zero for GEMM points); kv_heads is heads unless the point is GQA/MQA.
  int batch = 0, heads = 0, kv_heads = 0, seq = 0, head_dim = 0;
  bool causal = false;
  // GEMM shape (zero for attention points).
  long long m = 0, n = 0, k = 0;
  std::string dtype;
  std::string swr_config;                            // empty when swr has none for this point
  std::string swr_config_source;                     // "tuned", "nearest", "default", "unsupported"
  std::map<std::string, BenchCandidate> candidates;  // "swr", "flash2", "cudnn", ...

  // swr's throughput over the peer's (peer time / swr time), when both ran.
  std::optional<double> ratio_to(const std::string& peer) const;
};

struct RegimeRatio {
  std::string regime;
  std::string peer;
  int points = 0;
  double geometric_mean = 0;
  double min = 0;
  double max = 0;
  int swr_faster = 0;  // points with a ratio above 1
};

struct BenchResults {
  std::filesystem::path path;
  nlohmann::json record;  // versions, command, times: shown as they are
  nlohmann::json method;
  std::vector<BenchPoint> points;

  // Peers in display order (flash2, cudnn, efficient, math, cublas, then any other).
  std::vector<std::string> peers() const;
  std::vector<RegimeRatio> regime_ratios() const;
  std::string regime_title(const std::string& regime) const;
};

// Throws UsageError naming the file when it cannot be read or is not a peer-grid result.
BenchResults read_bench_results(const std::filesystem::path& path);

}  // namespace swr::report
