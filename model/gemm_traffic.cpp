#include "model/gemm_traffic.hpp"

#include <algorithm>
#include <vector>

#include "generator/gemm_swizzle.hpp"
#include "model/cache_models.hpp"
#include "model/model_profile.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Tile numbers and weights: A tiles (tile row x k block), then B tiles (k block x tile column),
// then C tiles; weights in sectors of the valid part (tails are zero-filled, not read).
class GemmTileMap {
 public:
  GemmTileMap(const GemmProblem& problem, const GemmConfig& config, int sector_bytes)
      : problem_(problem), config_(config), sector_bytes_(sector_bytes) {
    tiles_m_ = ceil_div(problem.m, config.block_m);
    tiles_n_ = ceil_div(problem.n, config.block_n);
    k_blocks_ = ceil_div(problem.k, config.block_k);
    element_ = static_cast<std::int64_t>(element_bytes(problem.dtype));
    b_first_ = tiles_m_ * k_blocks_;
    c_first_ = b_first_ + k_blocks_ * tiles_n_;
    count_ = c_first_ + tiles_m_ * tiles_n_;
  }
  std::int64_t count() const { return count_; }
  std::int64_t k_blocks() const { return k_blocks_; }
  std::int64_t tiles_m() const { return tiles_m_; }
  std::int64_t tiles_n() const { return tiles_n_; }
  std::int64_t a(std::int64_t tile_m, std::int64_t k) const { return tile_m * k_blocks_ + k; }
  std::int64_t b(std::int64_t k, std::int64_t tile_n) const {
    return b_first_ + k * tiles_n_ + tile_n;
  }
  std::int64_t c(std::int64_t tile_m, std::int64_t tile_n) const {
    return c_first_ + tile_m * tiles_n_ + tile_n;
  }
  std::int32_t weight(std::int64_t tile) const {
    if (tile < b_first_) {
      return static_cast<std::int32_t>(
          rows(tile / k_blocks_, config_.block_m, problem_.m) *
          row_sectors(cols(tile % k_blocks_, config_.block_k, problem_.k)));
    }
    if (tile < c_first_) {
      const std::int64_t index = tile - b_first_;
      return static_cast<std::int32_t>(
          rows(index / tiles_n_, config_.block_k, problem_.k) *
          row_sectors(cols(index % tiles_n_, config_.block_n, problem_.n)));
    }
    const std::int64_t index = tile - c_first_;
    return static_cast<std::int32_t>(
        rows(index / tiles_n_, config_.block_m, problem_.m) *
        row_sectors(cols(index % tiles_n_, config_.block_n, problem_.n)));
  }

 private:
  static std::int64_t rows(std::int64_t tile, int size, int extent) {
    return std::min<std::int64_t>(size, extent - tile * size);
  }
  static std::int64_t cols(std::int64_t tile, int size, int extent) {
    return rows(tile, size, extent);
  }
  std::int64_t row_sectors(std::int64_t columns) const {
    return ceil_div(columns * element_, sector_bytes_);
  }

  GemmProblem problem_;
  GemmConfig config_;
  std::int64_t sector_bytes_;
  std::int64_t tiles_m_ = 0, tiles_n_ = 0, k_blocks_ = 0, element_ = 2;
  std::int64_t b_first_ = 0, c_first_ = 0, count_ = 0;
};

struct Access {
  std::int64_t tile;
  int cta;
};

}  // namespace

GemmTraffic simulate_gemm_l2(const GemmProblem& problem, const GemmConfig& config,
                             const GpuProfile& gpu, int resident_ctas, std::int64_t max_accesses) {
  problem.validate();
  validate_model_profile(gpu);
  if (resident_ctas < 1) {
    throw UsageError("resident CTAs " + std::to_string(resident_ctas) + " must be at least 1");
  }
  // A transposed config reads B's columns as its first operand's rows: replay the kernel's product.
  const GemmTileMap map(gemm_kernel_problem(problem, config), config, gpu.l2_sector_bytes);
  const GemmTileGrid raster = gemm_raster_grid(problem, config);
  const std::vector<HostTileCoord> order = gemm_tile_order(raster, swizzle_launch(config));
  const int cluster = config.cluster_size();
  const std::int64_t slots =
      std::min<std::int64_t>(std::max(1, resident_ctas / cluster), raster.tiles());
  const std::int64_t accesses = raster.tiles() * cluster * 2 * map.k_blocks();
  if (accesses > max_accesses) {
    throw UsageError("replaying GEMM " + problem.key() + " takes " + std::to_string(accesses) +
                     " tile reads, more than the budget of " + std::to_string(max_accesses));
  }

  const int partitions = gpu.l2_partitions;
  const std::int64_t partition_sectors = gpu.l2_bytes / partitions / gpu.l2_sector_bytes;
  std::vector<TileLruCache> caches;
  for (int p = 0; p < partitions; ++p) {
    caches.emplace_back(partition_sectors, static_cast<std::int32_t>(map.count()));
  }
  const double extra = partitions > 1 ? (gpu.l2_shared_miss_factor - 1.0) / (partitions - 1) : 0;
  const double extra_first =
      partitions > 1 ? (gpu.l2_first_touch_miss_factor - 1.0) / (partitions - 1) : 0;
  std::vector<std::int64_t> first_touch(map.count(), -1);
  std::vector<std::int64_t> fetched(map.count(), -1);
  std::vector<std::int64_t> seen(map.count() * partitions, -1);  // tick a partition read it

  GemmTraffic traffic;
  traffic.resident_ctas = static_cast<int>(slots * cluster);
  double counted = 0;
  std::int64_t from_dram = 0;
  std::int64_t tick = 0;
  std::vector<Access> reads;
  const auto replay = [&](const std::vector<Access>& tick_reads, bool write) {
    for (const Access& access : tick_reads) {
      const std::int32_t weight = map.weight(access.tile);
      if (weight <= 0) continue;
      traffic.requested_sectors += weight;
      const int partition = access.cta % partitions;
      std::int64_t& last = seen[access.tile * partitions + partition];
      if (last == tick) continue;  // this partition already read it this tick
      last = tick;
      if (first_touch[access.tile] < 0) first_touch[access.tile] = tick;
      const bool cold = first_touch[access.tile] == tick;
      bool peer_holds = false;
      for (int other = 0; other < partitions && !peer_holds; ++other) {
        peer_holds =
            other != partition && caches[other].resident(static_cast<std::int32_t>(access.tile));
      }
      if (caches[partition].access(static_cast<std::int32_t>(access.tile), weight)) continue;
      double missed = weight;
      std::int64_t dram = write ? 0 : weight;
      if (partitions > 1) {
        if (fetched[access.tile] == tick) {
          missed *= cold ? extra_first : extra;
          dram = 0;
        } else if (peer_holds) {
          missed *= gpu.l2_peer_fill_miss_weight;
          dram = 0;
        } else {
          fetched[access.tile] = tick;
        }
      }
      counted += missed;
      from_dram += dram;
    }
  };

  for (std::int64_t first = 0; first < raster.tiles(); first += slots) {
    const std::int64_t last = std::min<std::int64_t>(first + slots, raster.tiles());
    for (std::int64_t k = 0; k < map.k_blocks(); ++k, ++tick) {
      reads.clear();
      for (std::int64_t linear = first; linear < last; ++linear) {
        const int slot = static_cast<int>(linear - first);
        for (int rank = 0; rank < cluster; ++rank) {
          const HostTileCoord tile = gemm_cluster_member_tile(order[linear], config, rank);
          if (tile.tile_m >= map.tiles_m() || tile.tile_n >= map.tiles_n()) continue;
          const int cta = slot * cluster + rank;
          // A multicast operand is read by the cluster's first CTA that needs it.
          const bool a_multicast = config.cluster_n > 1 && rank / config.cluster_m > 0;
          const bool b_multicast = config.cluster_m > 1 && rank % config.cluster_m > 0;
          if (!a_multicast) reads.push_back({map.a(tile.tile_m, k), cta});
          if (!b_multicast) reads.push_back({map.b(k, tile.tile_n), cta});
        }
      }
      replay(reads, false);
    }
    reads.clear();
    for (std::int64_t linear = first; linear < last; ++linear) {
      for (int rank = 0; rank < cluster; ++rank) {
        const HostTileCoord tile = gemm_cluster_member_tile(order[linear], config, rank);
        if (tile.tile_m >= map.tiles_m() || tile.tile_n >= map.tiles_n()) continue;
        reads.push_back(
            {map.c(tile.tile_m, tile.tile_n), static_cast<int>(linear - first) * cluster + rank});
      }
    }
    replay(reads, true);
    ++tick;
  }
  for (std::int64_t tile = 0; tile < map.count(); ++tile)
    traffic.compulsory_misses += map.weight(tile);
  traffic.misses = static_cast<std::int64_t>(counted + 0.5);
  traffic.dram_bytes_read = from_dram * gpu.l2_sector_bytes;
  std::int64_t c_sectors = 0;
  for (std::int64_t m = 0; m < map.tiles_m(); ++m) {
    for (std::int64_t n = 0; n < map.tiles_n(); ++n) c_sectors += map.weight(map.c(m, n));
  }
  traffic.dram_bytes_written = c_sectors * gpu.l2_sector_bytes;
  traffic.hit_rate =
      traffic.requested_sectors > 0
          ? std::max(0.0, 1.0 - counted / static_cast<double>(traffic.requested_sectors))
          : 0.0;
  return traffic;
}

}  // namespace swr::model
