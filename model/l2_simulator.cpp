#include "model/l2_simulator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <vector>

#include "generator/resource_model.hpp"
#include "model/cache_models.hpp"
#include "model/model_profile.hpp"
#include "model/schedule_replay.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

// What one replay counted, per tensor, and how the whole problem's numbers follow from it:
// copied when the replay ran to the end, extrapolated when it was stopped early (sampled).
constexpr int kTensorCount = 4;  // Q, K, V, O in TensorKind order

// "Cold" counts come from the tick in which a tile was first touched (the whole wave reading it
// together), "warm" ones from every later read.
struct Tally {
  std::array<std::int64_t, kTensorCount> requested{};
  std::array<std::int64_t, kTensorCount> first_touch{};     // sectors of tiles touched first
  std::array<std::int64_t, kTensorCount> cold_requested{};  // requested in first-touch ticks
  std::array<double, kTensorCount> cold_misses{};           // counted misses in first-touch ticks
  std::array<double, kTensorCount> warm_misses{};
  std::array<std::int64_t, kTensorCount> cold_dram{};  // sectors read from DRAM
  std::array<std::int64_t, kTensorCount> warm_dram{};
  std::int64_t finished_tiles = 0;
};

std::int64_t get(const TensorSectors& sectors, int tensor) {
  const std::int64_t values[kTensorCount] = {sectors.q, sectors.k, sectors.v, sectors.o};
  return values[tensor];
}

void set(TensorSectors& sectors, int tensor, std::int64_t value) {
  std::int64_t* fields[kTensorCount] = {&sectors.q, &sectors.k, &sectors.v, &sectors.o};
  *fields[tensor] = value;
}

double ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0.0;
}

// Fills requested, compulsory, misses, DRAM bytes and hit rate of `result`. Sampled: per tensor,
// each compulsory sector brings as many reads and misses as a first-touched sector did in the
// sample, and the remaining reads miss at the sample's re-read rate; a tensor the sample never
// touched (O before any tile ended) misses once per byte.
void fill_result(const Tally& tally, const ClosedFormTraffic& closed_form, bool sampled,
                 int sector_bytes, SimulationResult& result) {
  result.requested = closed_form.requested;
  result.compulsory = closed_form.compulsory;
  double dram_sectors = 0;
  for (int tensor = 0; tensor < kTensorCount; ++tensor) {
    double misses = tally.cold_misses[tensor] + tally.warm_misses[tensor];
    double dram = static_cast<double>(tally.cold_dram[tensor] + tally.warm_dram[tensor]);
    if (sampled) {
      // Each first-touched sector brings its tick's reads (the wave reading it together) and
      // their misses; the other reads miss at the sampled rate of later re-reads. A tensor the
      // sample never touched (O before any tile ends) misses once per byte.
      const double compulsory = static_cast<double>(get(closed_form.compulsory, tensor));
      const double first = static_cast<double>(tally.first_touch[tensor]);
      const double cold_reads = static_cast<double>(tally.cold_requested[tensor]);
      const double warm_reads = static_cast<double>(tally.requested[tensor]) - cold_reads;
      const bool touched = first > 0;
      const double total_cold_reads = touched ? compulsory * cold_reads / first : compulsory;
      const double total_warm_reads =
          std::max(0.0, static_cast<double>(get(closed_form.requested, tensor)) - total_cold_reads);
      misses = (touched ? compulsory * tally.cold_misses[tensor] / first : compulsory) +
               total_warm_reads * ratio(tally.warm_misses[tensor], warm_reads);
      const double cold_dram = static_cast<double>(tally.cold_dram[tensor]);
      dram = tensor == static_cast<int>(TensorKind::o)
                 ? 0.0
                 : (touched ? compulsory * cold_dram / first : compulsory) +
                       total_warm_reads *
                           ratio(static_cast<double>(tally.warm_dram[tensor]), warm_reads);
    }
    set(result.misses, tensor, std::llround(misses));
    dram_sectors += dram;
  }
  result.dram_bytes_read = std::llround(dram_sectors) * sector_bytes;
  result.dram_bytes_written = closed_form.compulsory.o * sector_bytes;
  const double requested = static_cast<double>(result.requested.total());
  result.hit_rate =
      std::max(0.0, 1.0 - ratio(static_cast<double>(result.misses.total()), requested));
}

// One L2 partition per element; each answers "how many of this tile's sectors missed".
class TileCaches {
 public:
  TileCaches(int partitions, std::int64_t partition_sectors, const TileAddressMap& map) {
    for (int p = 0; p < partitions; ++p) {
      caches_.emplace_back(partition_sectors, static_cast<std::int32_t>(map.tile_count()));
    }
  }
  std::int64_t access(int partition, std::int32_t number, std::int32_t sectors, const TileAccess&) {
    return caches_[partition].access(number, sectors) ? 0 : sectors;
  }
  bool holds(int partition, std::int32_t number, const TileAccess&) const {
    return caches_[partition].resident(number);
  }

 private:
  std::vector<TileLruCache> caches_;
};

class SectorCaches {
 public:
  SectorCaches(int partitions, const SectorCacheGeometry& geometry, const TileAddressMap& map)
      : map_(map), sector_bytes_(geometry.sector_bytes) {
    for (int p = 0; p < partitions; ++p) caches_.emplace_back(geometry);
  }
  std::int64_t access(int partition, std::int32_t, std::int32_t, const TileAccess& access) {
    const std::uint64_t first = map_.first_byte(access);
    const std::uint64_t end = first + static_cast<std::uint64_t>(map_.byte_count(access));
    std::int64_t missed = 0;
    for (std::uint64_t byte = first; byte < end; byte += sector_bytes_) {
      missed += caches_[partition].access(byte) ? 0 : 1;
    }
    return missed;
  }
  bool holds(int partition, std::int32_t, const TileAccess& access) const {
    return caches_[partition].contains(map_.first_byte(access));
  }

 private:
  const TileAddressMap& map_;
  int sector_bytes_;
  std::vector<LruSectorCache> caches_;
};

struct ReplaySetup {
  ScheduleShape shape;
  AttentionConfig config;
  int wave_size = 0;
  int cta_limit = 0;
  ProgressModel progress;
  int partitions = 1;
  double extra_per_partition = 0;  // counted misses per sector per further partition missing
  double extra_per_partition_first_touch = 0;  // the same in the tick a tile is first read
  double peer_fill_weight = 0;  // counted misses per sector filled from another partition
  std::int64_t partition_sectors = 0;
  std::int64_t max_kv_steps = 0;
};

template <class Caches>
std::int64_t replay(const ReplaySetup& setup, const TileAddressMap& map, Caches& caches,
                    Tally& tally, int& resident_ctas) {
  WavefrontInterleaving wave(setup.shape, setup.config, setup.wave_size, setup.cta_limit,
                             setup.progress);
  resident_ctas = wave.slot_count();
  const std::int64_t tiles = map.tile_count();
  std::vector<std::int64_t> first_touch_tick(tiles, -1);
  std::vector<std::int64_t> fetch_tick(setup.partitions > 1 ? tiles : 0, -1);
  std::vector<TileAccess> accesses;
  accesses.reserve(4 * static_cast<std::size_t>(resident_ctas) + 8);
  std::int64_t tick = 0;
  while (wave.next_tick(accesses)) {
    for (const TileAccess& access : accesses) {
      const int tensor = static_cast<int>(access.tensor);
      const std::int32_t number = map.tile_number(access);
      const std::int32_t sectors = map.sectors(access);
      tally.requested[tensor] += static_cast<std::int64_t>(sectors) * access.count;
      if (first_touch_tick[number] < 0) {
        first_touch_tick[number] = tick;
        tally.first_touch[tensor] += sectors;
      }
      const bool cold = first_touch_tick[number] == tick;
      if (cold) tally.cold_requested[tensor] += static_cast<std::int64_t>(sectors) * access.count;
      // Within a run, a partition's first read decides; its later reads find the tile most
      // recently used in that partition and hit (unless the tile cannot fit at all).
      const int reads = sectors > setup.partition_sectors
                            ? access.count
                            : std::min(access.count, setup.partitions);
      for (int read = 0; read < reads; ++read) {
        const int partition = (access.slot + read) % setup.partitions;
        bool peer_holds = false;
        for (int other = 0; other < setup.partitions && !peer_holds; ++other) {
          peer_holds = other != partition && caches.holds(other, number, access);
        }
        const std::int64_t missed = caches.access(partition, number, sectors, access);
        if (missed == 0) continue;
        double counted = static_cast<double>(missed);
        std::int64_t from_dram = access.tensor == TensorKind::o ? 0 : missed;
        if (setup.partitions > 1) {
          if (fetch_tick[number] == tick) {
            // Another partition is fetching it from DRAM right now.
            counted *= cold ? setup.extra_per_partition_first_touch : setup.extra_per_partition;
            from_dram = 0;
          } else if (peer_holds) {
            counted *= setup.peer_fill_weight;  // over the crossbar from the other partition
            from_dram = 0;
          } else {
            fetch_tick[number] = tick;
          }
        }
        (cold ? tally.cold_misses : tally.warm_misses)[tensor] += counted;
        (cold ? tally.cold_dram : tally.warm_dram)[tensor] += from_dram;
      }
      if (access.tensor == TensorKind::o) tally.finished_tiles += access.count;
    }
    ++tick;
    if (wave.kv_steps_done() >= setup.max_kv_steps) break;
  }
  return wave.kv_steps_done();
}

std::int64_t total_kv_steps(const ScheduleShape& shape) {
  std::int64_t steps = 0;
  for (int q_tile = 0; q_tile < shape.q_tiles; ++q_tile) steps += kv_steps_of(shape, q_tile);
  return steps * shape.batch_heads;
}

std::string mib(std::int64_t bytes) {
  const double value = static_cast<double>(bytes) / (1024.0 * 1024.0);
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g MiB", value);
  return text;
}

void require_option(const char* name, std::int64_t value, std::int64_t low, std::int64_t high) {
  if (value < low || value > high) {
    throw UsageError(std::string("simulation option ") + name + " " + std::to_string(value) +
                     " is out of range (allowed: " + std::to_string(low) + " to " +
                     std::to_string(high) + ")");
  }
}

// Ticks without reads (a long start skew) are not counted by the step budget: bound the skew.
void validate_options(const SimulationOptions& options) {
  require_option("skew_steps", options.progress.skew_steps, 0, 1'000'000);
  require_option("wave_size", options.wave_size, 0, 1 << 20);
  require_option("cta_limit", options.cta_limit, 0, 1 << 20);
  require_option("ways", options.ways, 0, 1 << 16);
  require_option("max_kv_steps", options.max_kv_steps, 1, std::int64_t{1} << 50);
}

}  // namespace

const char* to_string(CacheGranularity granularity) {
  switch (granularity) {
    case CacheGranularity::tile:
      return "tile";
    case CacheGranularity::sector:
      return "sector";
    case CacheGranularity::line:
      return "line";
  }
  return "?";
}

SimulationResult simulate_l2(const AttentionProblem& problem, const AttentionConfig& config,
                             const GpuProfile& gpu, const SimulationOptions& options) {
  validate_model_profile(gpu);
  validate_options(options);
  const ClosedFormTraffic closed_form = closed_form_traffic(problem, config, gpu);
  if (config.swizzle == TileSwizzle::head_groups && config.head_group < 1) {
    throw UsageError("head_group " + std::to_string(config.head_group) + " must be at least 1");
  }
  int wave_size = options.wave_size;
  if (wave_size <= 0) {
    const ResourceUse use = attention_resource_use(problem, config, gpu);
    if (!use.does_not_fit.empty()) {
      throw UsageError("variant " + config.key() + " does not run on " + gpu.name + ": " +
                       use.does_not_fit);
    }
    wave_size = gpu.sm_count * use.blocks_per_sm;
  }

  ReplaySetup setup;
  setup.shape = ScheduleShape::of(problem, TileShape{config.block_m, config.block_n});
  setup.config = config;
  setup.wave_size = wave_size;
  setup.cta_limit = options.cta_limit;
  setup.progress = options.progress;
  setup.partitions = options.model_partitions ? gpu.l2_partitions : 1;
  const double first_touch_factor =
      options.first_touch_miss_factor.value_or(gpu.l2_first_touch_miss_factor);
  setup.extra_per_partition =
      setup.partitions > 1 ? (gpu.l2_shared_miss_factor - 1.0) / (setup.partitions - 1) : 0.0;
  setup.extra_per_partition_first_touch =
      setup.partitions > 1 ? (first_touch_factor - 1.0) / (setup.partitions - 1) : 0.0;
  setup.peer_fill_weight = gpu.l2_peer_fill_miss_weight;
  setup.max_kv_steps = options.max_kv_steps;

  const std::int64_t row_bytes =
      static_cast<std::int64_t>(problem.head_dim) * element_bytes(problem.dtype);
  const TileAddressMap map(setup.shape, row_bytes, gpu.l2_sector_bytes);
  const std::int64_t partition_bytes = gpu.l2_bytes / setup.partitions;
  setup.partition_sectors = partition_bytes / gpu.l2_sector_bytes;

  SimulationResult result;
  result.wave_size = wave_size;
  result.partitions = setup.partitions;
  result.partition_bytes = partition_bytes;
  result.kv_steps_total = total_kv_steps(setup.shape);

  // Per tile: first-touch and fetch ticks, plus each partition's tile LRU links.
  const std::int64_t bytes_per_tile = 16 + (options.granularity == CacheGranularity::tile
                                                ? setup.partitions * TileLruCache::kBytesPerTile
                                                : 0);
  const std::int64_t tile_memory = map.tile_count() * bytes_per_tile;
  if (map.tile_count() > std::numeric_limits<std::int32_t>::max() ||
      tile_memory > options.max_memory_bytes) {
    throw UsageError("simulating " + problem.key() + " with " + config.key() + " needs " +
                     mib(tile_memory) + " for " + std::to_string(map.tile_count()) +
                     " tiles, more than the budget of " + mib(options.max_memory_bytes));
  }

  Tally tally;
  if (options.granularity == CacheGranularity::tile) {
    TileCaches caches(setup.partitions, partition_bytes / gpu.l2_sector_bytes, map);
    result.kv_steps_simulated = replay(setup, map, caches, tally, result.resident_ctas);
  } else {
    if (closed_form.requested.total() > options.max_sector_accesses) {
      throw UsageError(std::string(to_string(options.granularity)) + "-granularity replay of " +
                       std::to_string(closed_form.requested.total()) +
                       " sector accesses exceeds the budget of " +
                       std::to_string(options.max_sector_accesses) + "; use tile granularity");
    }
    SectorCacheGeometry geometry;
    geometry.capacity_bytes = partition_bytes;
    geometry.sector_bytes = gpu.l2_sector_bytes;
    geometry.line_bytes =
        options.granularity == CacheGranularity::line ? options.line_bytes : gpu.l2_sector_bytes;
    geometry.ways = options.ways;
    // A line, its hash-index entry and its set share: about 64 bytes.
    const std::int64_t cache_memory =
        setup.partitions * (partition_bytes / std::max(geometry.line_bytes, 1)) * 64;
    if (cache_memory + tile_memory > options.max_memory_bytes) {
      throw UsageError("a " + std::string(to_string(options.granularity)) +
                       "-granularity cache of " + mib(gpu.l2_bytes) + " needs " +
                       mib(cache_memory) + ", more than the budget of " +
                       mib(options.max_memory_bytes));
    }
    SectorCaches caches(setup.partitions, geometry, map);
    result.kv_steps_simulated = replay(setup, map, caches, tally, result.resident_ctas);
  }
  result.sampled = result.kv_steps_simulated < result.kv_steps_total;
  fill_result(tally, closed_form, result.sampled, gpu.l2_sector_bytes, result);

  result.note = std::string(to_string(options.granularity)) + "-granularity LRU";
  if (options.ways > 0 && options.granularity != CacheGranularity::tile) {
    result.note += ", " + std::to_string(options.ways) + "-way";
  }
  if (setup.partitions > 1) {
    result.note += ", " + std::to_string(setup.partitions) + " partitions of " +
                   mib(partition_bytes) + " each holding its own copy of shared data";
  } else {
    result.note += " of " + mib(partition_bytes);
  }
  result.note += ", " + std::to_string(wave_size) + " CTAs resident";
  if (options.progress.skew_steps > 0) {
    result.note += ", start skew " + std::to_string(options.progress.skew_steps) + " steps";
  }
  if (result.sampled) {
    char share[32];
    std::snprintf(share, sizeof(share), "%.1f%%",
                  100.0 * static_cast<double>(result.kv_steps_simulated) /
                      static_cast<double>(result.kv_steps_total));
    result.note += "; sampled: replayed the first " + std::to_string(result.kv_steps_simulated) +
                   " of " + std::to_string(result.kv_steps_total) + " K/V steps (" + share +
                   "), extrapolated misses per first touch and per re-read";
    if (tally.finished_tiles < result.resident_ctas) {
      result.note +=
          " (the sample ended before every resident CTA finished a Q tile, so it saw "
          "no re-reads across Q tiles: the misses are a lower bound)";
    }
  }
  if (config.block_m > problem.seq_q || config.block_n > problem.seq_kv) {
    result.note += "; tile " + std::to_string(config.block_m) + "x" +
                   std::to_string(config.block_n) +
                   " exceeds the sequence: only valid rows are read";
  }
  return result;
}

}  // namespace swr::model
