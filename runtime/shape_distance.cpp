#include "swr/shape_distance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "swr/gpu_profile.hpp"

namespace swr {

GpuScale gpu_scale(std::string_view gpu_name, int sm_count, std::int64_t l2_bytes) {
  GpuScale scale;
  scale.sm_count = sm_count;
  scale.l2_bytes = l2_bytes;
  if (const std::optional<GpuProfile> profile = find_gpu_profile(gpu_name)) {
    scale.l2_partitions = std::max(1, profile->l2_partitions);
  }
  return scale;
}

ShapeFeatures shape_features(const AttentionProblem& problem, const GpuScale& gpu) {
  if (gpu.sm_count < 1 || gpu.l2_bytes < 1 || gpu.l2_partitions < 1) {
    throw std::invalid_argument("shape_features: a GPU scale needs SMs, L2 bytes and partitions");
  }
  const double pairs = static_cast<double>(problem.batch) * problem.heads;
  const double tiles_per_head = std::ceil(static_cast<double>(problem.seq_q) / kDistanceTileRows);
  ShapeFeatures features;
  features.q_tiles = tiles_per_head * pairs;
  // A wave of sm_count consecutive tiles (head-major order) covers this many heads' K/V; the query
  // heads of one K/V head share it.
  features.heads_per_wave = std::clamp(std::ceil(gpu.sm_count / tiles_per_head), 1.0, pairs);
  features.kv_working_set_bytes =
      problem.kv_bytes_per_head() *
      std::ceil(features.heads_per_wave / problem.query_heads_per_kv_head());
  const double shared_l2 = static_cast<double>(gpu.l2_bytes) / gpu.l2_partitions;
  features.l2_fraction = features.kv_working_set_bytes / shared_l2;
  features.waves = features.q_tiles / gpu.sm_count;
  features.fits_l2 = features.l2_fraction <= 1.0;
  return features;
}

std::optional<double> shape_distance(const AttentionProblem& wanted, const AttentionProblem& tuned,
                                     const GpuScale& gpu) {
  if (wanted.head_dim != tuned.head_dim || wanted.dtype != tuned.dtype ||
      wanted.causal != tuned.causal ||
      wanted.query_heads_per_kv_head() != tuned.query_heads_per_kv_head() ||
      wanted.effective_causal_align() != tuned.effective_causal_align()) {
    return std::nullopt;
  }
  const ShapeFeatures a = shape_features(wanted, gpu);
  const ShapeFeatures b = shape_features(tuned, gpu);
  double distance = std::abs(std::log2(a.l2_fraction) - std::log2(b.l2_fraction)) +
                    std::abs(std::log2(a.waves) - std::log2(b.waves));
  if (a.fits_l2 != b.fits_l2) distance += kL2CrossingPenalty;
  return distance;
}

std::optional<double> shape_distance(const GemmProblem& wanted, const GemmProblem& tuned) {
  if (wanted.dtype != tuned.dtype) return std::nullopt;
  double squares = 0;
  for (const auto& [a, b] :
       {std::pair{wanted.m, tuned.m}, std::pair{wanted.n, tuned.n}, std::pair{wanted.k, tuned.k}}) {
    const double difference = std::log2(static_cast<double>(a)) - std::log2(static_cast<double>(b));
    squares += difference * difference;
  }
  return std::sqrt(squares);
}

}  // namespace swr
