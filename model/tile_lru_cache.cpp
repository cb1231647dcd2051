#include "model/tile_lru_cache.hpp"

namespace swr::model {

TileLruCache::TileLruCache(std::int64_t capacity_sectors, std::int32_t tile_count)
    : capacity_(capacity_sectors), links_(tile_count) {}

void TileLruCache::unlink(std::int32_t tile) {
  const Links& links = links_[tile];
  if (links.newer != kNone)
    links_[links.newer].older = links.older;
  else
    most_recent_ = links.older;
  if (links.older != kNone)
    links_[links.older].newer = links.newer;
  else
    least_recent_ = links.newer;
}

void TileLruCache::push_front(std::int32_t tile) {
  links_[tile].newer = kNone;
  links_[tile].older = most_recent_;
  if (most_recent_ != kNone)
    links_[most_recent_].newer = tile;
  else
    least_recent_ = tile;
  most_recent_ = tile;
}

bool TileLruCache::access(std::int32_t tile, std::int32_t weight) {
  // The common case in lock-step: the CTA before this one just read the same tile.
  if (tile == most_recent_) return true;
  if (links_[tile].weight > 0) {
    unlink(tile);
    push_front(tile);
    return true;
  }
  if (weight > capacity_) return false;
  links_[tile].weight = weight;
  resident_sectors_ += weight;
  push_front(tile);
  while (resident_sectors_ > capacity_) {
    const std::int32_t victim = least_recent_;
    unlink(victim);
    resident_sectors_ -= links_[victim].weight;
    links_[victim].weight = 0;
  }
  return false;
}

}  // namespace swr::model
