// The L2 cache models the schedule simulator replays tile reads through: a fast LRU over whole
// weighted tiles, and an exact, slow address-level LRU of sectors it is checked against.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace swr::model {

// LRU over whole tiles, each weighing its sector count: the fast cache model.
//
// Why whole tiles give the same answer as sectors: a CTA reads all sectors of a tile one after
// another, so between two reads of a sector s of tile X the L2 sees X's other sectors and the
// distinct sectors of the other tiles read in between. Every sector of X has the same LRU stack
// distance, (weight of X - 1) + (weight of the distinct other tiles), and hits exactly when
// weight(X) + weight(others) <= capacity: X hits or misses as a whole, and an LRU of weighted
// tiles that evicts whole tiles from the cold end decides it the same way. (Checked against the
// sector-granular replay in tests/model.)
class TileLruCache {
 public:
  // Tiles are numbered 0..tile_count-1.
  TileLruCache(std::int64_t capacity_sectors, std::int32_t tile_count);

  // Reads (or writes) every sector of `tile`, which weighs `weight` sectors. True when the whole
  // tile was resident (all hits), false when none of it was (all misses). A tile larger than the
  // cache never stays.
  bool access(std::int32_t tile, std::int32_t weight);

  bool resident(std::int32_t tile) const { return links_[tile].weight > 0; }
  std::int64_t resident_sectors() const { return resident_sectors_; }
  std::int64_t capacity_sectors() const { return capacity_; }

  // Bytes of bookkeeping per tile, for memory budgets.
  static constexpr std::int64_t kBytesPerTile = 3 * sizeof(std::int32_t);

 private:
  // One cache line holds a tile's links and weight together.
  struct Links {
    std::int32_t newer = -1;  // towards most_recent_
    std::int32_t older = -1;  // towards least_recent_
    std::int32_t weight = 0;  // 0 when not resident
  };

  void unlink(std::int32_t tile);
  void push_front(std::int32_t tile);

  static constexpr std::int32_t kNone = -1;
  std::int64_t capacity_;
  std::int64_t resident_sectors_ = 0;
  std::int32_t most_recent_ = kNone;
  std::int32_t least_recent_ = kNone;
  std::vector<Links> links_;
};

// An address-level LRU cache of sectors: the exact, slow model the tile model is checked against,
// and the one to use for set associativity or line-granular allocation.
//
// Lines of `line_bytes` hold `line_bytes / sector_bytes` sectors, each valid or not (NVIDIA's L2
// tags 128-byte lines and fills 32-byte sectors). With line_bytes == sector_bytes it is a plain
// sector LRU. Replacement is LRU over lines, within a set when `ways` > 0; sets are picked by a
// hash of the line address (GPUs hash addresses across slices and sets), so that strided tiles do
// not all land in one set.
struct SectorCacheGeometry {
  std::int64_t capacity_bytes = 0;
  int sector_bytes = 32;
  int line_bytes = 32;  // sector_bytes: sector granularity; e.g. 128: line granularity
  int ways = 0;         // 0: fully associative
};

class LruSectorCache {
 public:
  // Throws UsageError for sizes that do not divide into whole lines, sets and sectors.
  explicit LruSectorCache(const SectorCacheGeometry& geometry);

  // One sector-sized access at `byte_address` (read or write; writes allocate). True on a hit.
  bool access(std::uint64_t byte_address);
  // Whether the sector at `byte_address` is resident, without touching the LRU order.
  bool contains(std::uint64_t byte_address) const;

  std::int64_t line_count() const { return static_cast<std::int64_t>(lines_.size()); }

 private:
  struct Line {
    std::uint64_t line_address = 0;
    std::uint32_t valid_sectors = 0;  // bit per sector
    std::int32_t newer = -1;
    std::int32_t older = -1;
  };
  struct Set {
    std::int32_t most_recent = -1;
    std::int32_t least_recent = -1;
    std::int32_t used = 0;
  };

  void unlink(Set& set, std::int32_t line);
  void push_front(Set& set, std::int32_t line);
  std::size_t set_of(std::uint64_t line_address) const;

  SectorCacheGeometry geometry_;
  int ways_;
  std::vector<Line> lines_;
  std::vector<Set> sets_;
  std::vector<std::int32_t> free_lines_;
  std::unordered_map<std::uint64_t, std::int32_t> index_;
};

}  // namespace swr::model
