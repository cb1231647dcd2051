// An address-level LRU cache of sectors: the exact, slow model the tile model is checked against,
// and the one to use for set associativity or line-granular allocation.
//
// Lines of `line_bytes` hold `line_bytes / sector_bytes` sectors, each valid or not (NVIDIA's L2
// tags 128-byte lines and fills 32-byte sectors). With line_bytes == sector_bytes it is a plain
// sector LRU. Replacement is LRU over lines, within a set when `ways` > 0; sets are picked by a
// hash of the line address (GPUs hash addresses across slices and sets), so that strided tiles do
// not all land in one set.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace swr::model {

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
