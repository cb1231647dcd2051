// Stream-K for the last partial wave of a persistent GEMM (the wgmma kernel's `stream_k`
// persistence). With T raster tiles on U work units (CTAs, or clusters), T % U tiles would run as
// a last wave that leaves U - T % U units idle. Here the first T - T % U tiles go out whole, as
// static persistence hands them out (unit u takes u, u + U, ...); the k blocks of the remaining
// T % U tiles are laid end to end and cut into nearly equal ranges, one per unit (min(U, k blocks)
// of them, so that none is empty). A tile whose
// k blocks fall into several ranges is finished by the unit whose range holds its k block 0 (the
// "finisher"); every other unit that holds part of it (a "contributor") adds nothing to C but
// writes its fp32 partial sums to its own workspace slot and raises its flag; the finisher waits
// for the flags, adds the slots, and stores the tile.
//
// Why it cannot deadlock: a contributor's part of a tile is always the first stream-K item of its
// range (its range starts inside that tile), reached after whole tiles only, which wait for
// nothing; a unit has at most one contributor item, so one slot per unit suffices.
//
// A pure function of plain ints, compiled by NVRTC for the kernel and by the host compiler for the
// generator and its tests (tests/gemm/gemm_stream_k_test.cpp checks every k block of every tile is
// computed exactly once, for every tile count, unit count and k depth it walks).
#pragma once

#include "common/host_device.cuh"

namespace swr {
namespace gemm {

struct StreamKSchedule {
  int tiles;          // raster tiles
  int units;          // work units
  int k_blocks;       // k blocks of one tile
  int whole_tiles;    // handed out whole: tiles - tiles % units
  long long k_total;  // k blocks of the stream-K tiles, end to end
  int split_units;    // units that share them: min(units, k_total), so that no range is empty
};

SWR_HOST_DEVICE StreamKSchedule stream_k_schedule(int tiles, int units, int k_blocks) {
  StreamKSchedule s;
  s.tiles = tiles;
  s.units = units;
  s.k_blocks = k_blocks;
  s.whole_tiles = tiles - tiles % units;
  s.k_total = static_cast<long long>(tiles - s.whole_tiles) * k_blocks;
  s.split_units = s.k_total < units ? static_cast<int>(s.k_total) : units;
  return s;
}

// First k block (of k_total) of unit u's range; unit u holds [range_begin(u), range_begin(u + 1)),
// at least one k block for u < split_units (a finisher waits for every unit between it and the
// last unit of its tile), none past them.
SWR_HOST_DEVICE long long stream_k_range_begin(const StreamKSchedule& s, int unit) {
  return unit >= s.split_units ? s.k_total : s.k_total * unit / s.split_units;
}

// The unit whose range holds k block x (0 <= x < k_total): with S = split_units, the u with
// floor(u K / S) <= x < floor((u + 1) K / S), i.e. u = ceil((x + 1) S / K) - 1.
SWR_HOST_DEVICE int stream_k_unit_of(const StreamKSchedule& s, long long x) {
  return static_cast<int>(((x + 1) * s.split_units + s.k_total - 1) / s.k_total - 1);
}

// A unit's range, computed once per kernel with 64-bit divisions, kept as 32-bit offsets from the
// start of the stream-K tile its range begins in (a range is shorter than one tile, since fewer
// tiles than units share it, so both offsets are below 2 * k_blocks): the producer warpgroup, with
// few registers, walks its items with 32-bit arithmetic only.
// The finishers and last units of the (at most two) tiles the range touches are computed here too,
// so that the consumers, whose accumulators are live throughout, make no 64-bit division call.
struct StreamKRange {
  int whole_items;  // whole tiles of this unit, before its stream-K items
  int first_tile;   // raster tile holding the range's first k block
  int begin;        // range_begin(unit) - (first_tile - whole_tiles) * k_blocks
  int end;          // range_begin(unit + 1) - (first_tile - whole_tiles) * k_blocks
  int finisher[2];  // of raster tiles first_tile and first_tile + 1
  int last_unit[2];
};

SWR_HOST_DEVICE StreamKRange stream_k_range(const StreamKSchedule& s, int unit) {
  const long long begin = stream_k_range_begin(s, unit);
  const long long end = stream_k_range_begin(s, unit + 1);
  StreamKRange range;
  range.whole_items = s.whole_tiles / s.units;
  const int first = static_cast<int>(begin / s.k_blocks);
  const long long origin = static_cast<long long>(first) * s.k_blocks;
  range.first_tile = s.whole_tiles + first;
  range.begin = static_cast<int>(begin - origin);
  range.end = static_cast<int>(end - origin);
  for (int i = 0; i < 2; ++i) {
    const long long tile_begin = origin + static_cast<long long>(i) * s.k_blocks;
    const bool exists = s.k_total > 0 && tile_begin < s.k_total;
    range.finisher[i] = exists ? stream_k_unit_of(s, tile_begin) : unit;
    range.last_unit[i] = exists ? stream_k_unit_of(s, tile_begin + s.k_blocks - 1) : unit;
  }
  return range;
}

struct StreamKItem {
  int tile;     // raster tile (linear index)
  int k_begin;  // k blocks [k_begin, k_end) of it
  int k_end;
  int part;  // -1: a whole tile; 0 or 1: the range's first or second stream-K tile
};

// Item `j` of the unit whose range is `range`: false when the unit has no more work.
SWR_HOST_DEVICE bool stream_k_item(const StreamKSchedule& s, const StreamKRange& range, int unit,
                                   int j, StreamKItem& item) {
  if (j < range.whole_items) {
    item.tile = unit + j * s.units;
    item.k_begin = 0;
    item.k_end = s.k_blocks;
    item.part = -1;
    return true;
  }
  const int i = j - range.whole_items;
  if (i > 1) return false;  // a range shorter than a tile touches two tiles at most
  // Item 0 starts where the range does; item 1 at the start of the next tile.
  const int tile_begin = i * s.k_blocks;  // relative to the range's first tile
  const int start = i == 0 ? range.begin : tile_begin;
  if (start >= range.end) return false;
  const int stop = range.end < tile_begin + s.k_blocks ? range.end : tile_begin + s.k_blocks;
  item.tile = range.first_tile + i;
  item.k_begin = start - tile_begin;
  item.k_end = stop - tile_begin;
  item.part = i;
  return true;
}

// Who stores an item's tile, and who else holds part of it.
struct StreamKFixup {
  int finisher;      // the unit that stores the tile (the one holding its k block 0)
  int last_unit;     // the last unit holding part of it (== finisher: nobody helps)
  bool contributor;  // this unit writes a partial to its slot instead of storing
};

SWR_HOST_DEVICE StreamKFixup stream_k_fixup(const StreamKRange& range, const StreamKItem& item,
                                            int unit) {
  StreamKFixup fixup;
  // Selects, not an indexed load: the array stays in registers.
  fixup.finisher = item.part < 0 ? unit : item.part == 0 ? range.finisher[0] : range.finisher[1];
  fixup.last_unit = item.part < 0 ? unit : item.part == 0 ? range.last_unit[0] : range.last_unit[1];
  fixup.contributor = fixup.finisher != unit;
  return fixup;
}

}  // namespace gemm
}  // namespace swr
