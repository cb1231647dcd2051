#include "model/cache_models.hpp"

#include <string>

#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

// A 64-bit mixer (the finaliser of MurmurHash3): nearby lines land in unrelated sets.
std::uint64_t mix(std::uint64_t value) {
  value ^= value >> 33;
  value *= 0xff51afd7ed558ccdULL;
  value ^= value >> 33;
  value *= 0xc4ceb9fe1a85ec53ULL;
  value ^= value >> 33;
  return value;
}

}  // namespace

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

LruSectorCache::LruSectorCache(const SectorCacheGeometry& geometry) : geometry_(geometry) {
  const auto refuse = [&](const std::string& why) {
    throw UsageError("sector cache of " + std::to_string(geometry.capacity_bytes) + " bytes, " +
                     std::to_string(geometry.line_bytes) + "-byte lines, " +
                     std::to_string(geometry.sector_bytes) + "-byte sectors, " +
                     std::to_string(geometry.ways) + " ways: " + why);
  };
  if (geometry.sector_bytes < 1 || geometry.line_bytes < geometry.sector_bytes ||
      geometry.line_bytes % geometry.sector_bytes != 0 ||
      geometry.line_bytes / geometry.sector_bytes > 32) {
    refuse("a line must hold 1 to 32 whole sectors");
  }
  if (geometry.capacity_bytes < geometry.line_bytes ||
      geometry.capacity_bytes % geometry.line_bytes != 0) {
    refuse("the capacity must be a whole number of lines");
  }
  const std::int64_t line_count = geometry.capacity_bytes / geometry.line_bytes;
  if (line_count > (std::int64_t{1} << 30)) refuse("too many lines to model");
  if (geometry.ways < 0 || (geometry.ways > 0 && line_count % geometry.ways != 0)) {
    refuse("the line count must be a whole number of sets");
  }
  ways_ = geometry.ways > 0 ? geometry.ways : static_cast<int>(line_count);
  lines_.resize(line_count);
  sets_.resize(line_count / ways_);
  free_lines_.reserve(line_count);
  for (std::int64_t line = line_count - 1; line >= 0; --line) {
    free_lines_.push_back(static_cast<std::int32_t>(line));
  }
  index_.reserve(line_count);
}

std::size_t LruSectorCache::set_of(std::uint64_t line_address) const {
  return sets_.size() == 1 ? 0 : mix(line_address) % sets_.size();
}

void LruSectorCache::unlink(Set& set, std::int32_t line) {
  Line& node = lines_[line];
  if (node.newer >= 0)
    lines_[node.newer].older = node.older;
  else
    set.most_recent = node.older;
  if (node.older >= 0)
    lines_[node.older].newer = node.newer;
  else
    set.least_recent = node.newer;
}

void LruSectorCache::push_front(Set& set, std::int32_t line) {
  Line& node = lines_[line];
  node.newer = -1;
  node.older = set.most_recent;
  if (set.most_recent >= 0)
    lines_[set.most_recent].newer = line;
  else
    set.least_recent = line;
  set.most_recent = line;
}

bool LruSectorCache::access(std::uint64_t byte_address) {
  const std::uint64_t line_address = byte_address / geometry_.line_bytes;
  const std::uint32_t sector_bit =
      1u << ((byte_address % geometry_.line_bytes) / geometry_.sector_bytes);
  Set& set = sets_[set_of(line_address)];
  const auto found = index_.find(line_address);
  if (found != index_.end()) {
    const std::int32_t line = found->second;
    const bool hit = (lines_[line].valid_sectors & sector_bit) != 0;
    lines_[line].valid_sectors |= sector_bit;
    if (set.most_recent != line) {
      unlink(set, line);
      push_front(set, line);
    }
    return hit;
  }
  std::int32_t line = 0;
  if (set.used < ways_) {
    line = free_lines_.back();
    free_lines_.pop_back();
    ++set.used;
  } else {
    line = set.least_recent;
    unlink(set, line);
    index_.erase(lines_[line].line_address);
  }
  lines_[line].line_address = line_address;
  lines_[line].valid_sectors = sector_bit;
  push_front(set, line);
  index_.emplace(line_address, line);
  return false;
}

bool LruSectorCache::contains(std::uint64_t byte_address) const {
  const auto found = index_.find(byte_address / geometry_.line_bytes);
  if (found == index_.end()) return false;
  const std::uint32_t sector_bit =
      1u << ((byte_address % geometry_.line_bytes) / geometry_.sector_bytes);
  return (lines_[found->second].valid_sectors & sector_bit) != 0;
}

}  // namespace swr::model
