// LRU over whole tiles, each weighing its sector count: the fast cache model.
//
// Why whole tiles give the same answer as sectors: a CTA reads all sectors of a tile one after
// another, so between two reads of a sector s of tile X the L2 sees X's other sectors and the
// distinct sectors of the other tiles read in between. Every sector of X has the same LRU stack
// distance, (weight of X - 1) + (weight of the distinct other tiles), and hits exactly when
// weight(X) + weight(others) <= capacity: X hits or misses as a whole, and an LRU of weighted
// tiles that evicts whole tiles from the cold end decides it the same way. (Checked against the
// sector-granular replay in tests/model.)
#pragma once

#include <cstdint>
#include <vector>

namespace swr::model {

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

}  // namespace swr::model
