// One point of the attention variant space: "which tile, in which order, on how many CTAs".
// The text key is stable forever: the same key must always mean the same kernel.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include "swr/export.h"
#include "swr/instruction_path.hpp"

namespace swr {

// Direction in which a CTA walks the K/V tiles of successive Q tiles.
enum class KvOrder {
  cyclic,    // every Q tile scans K/V tiles 0..n-1
  sawtooth,  // the scan direction flips on each successive Q tile of a CTA (paper Algorithm 4)
};

// How Q tiles are handed to CTAs.
enum class Persistence {
  grid,         // one CTA per Q tile
  static_loop,  // ~#SM x occupancy CTAs in a grid-stride loop (paper Algorithm 2)
  dynamic,      // CTAs claim tiles from an atomic counter
};

// How the linear tile index maps onto (batch, head, q-tile).
enum class TileSwizzle {
  head_major,         // all q-tiles of one (batch, head) are consecutive
  heads_interleaved,  // consecutive tiles walk the (batch, head) pairs first
  head_groups,        // groups of `head_group` (batch, head) pairs, q-tiles interleaved in a group
};

// L2 eviction priority of the wgmma path's K/V loads (TMA cache hint).
enum class KvCacheHint { none, evict_last };

struct SWR_API AttentionConfig {
  int block_m = 128;  // Q rows per tile
  int block_n = 64;   // K/V rows per pipeline step
  int warps = 8;      // mma_sync: each warp owns block_m / warps Q rows
  int stages = 2;     // K/V pipeline depth: 1..3 (cp.async), 1..4 (TMA ring)
  KvOrder order = KvOrder::cyclic;
  Persistence persistence = Persistence::grid;
  TileSwizzle swizzle = TileSwizzle::head_major;
  int head_group = 1;  // only for head_groups: (batch, head) pairs per group
  // Test-only: the kernel writes through a null pointer, to prove fault isolation. Never
  // enumerated.
  bool planted_fault = false;
  // Test-only: the wgmma kernel's producer loads nothing, so its consumers wait forever on an
  // mbarrier (a hang, to prove the tuner records it as a timeout and goes on). Never enumerated;
  // the wgmma path only.
  bool planted_hang = false;

  // mma_sync: warps own Q rows (block_m / warps each), K/V arrive by cp.async.
  // wgmma (sm_90a, templates/attention/sm90): one TMA producer warpgroup and block_m / 64 consumer
  // warpgroups (2 or 3), so warps = 4 * (1 + block_m / 64).
  InstructionPath path = InstructionPath::mma_sync;
  // wgmma only: softmax of step j overlaps the PV wgmma of step j-1 inside a warpgroup; the two
  // consumer warpgroups take turns issuing wgmma (2 warpgroups only); L2 hint of K/V loads;
  // P reaches the PV wgmma through shared memory (SS form; 8 KiB per 64 keys of block_n per
  // consumer warpgroup) instead of registers (RS form).
  bool overlap = false;
  bool pingpong = false;
  KvCacheHint kv_cache_hint = KvCacheHint::none;
  bool p_in_smem = false;

  int threads() const { return warps * 32; }
  int rows_per_warp() const { return block_m / warps; }
  bool is_wgmma() const { return path == InstructionPath::wgmma; }
  int consumer_warpgroups() const { return block_m / 64; }
  // The producer warpgroup plus one consumer warpgroup per 64 Q rows.
  static int wgmma_warps(int block_m) { return 4 * (1 + block_m / 64); }

  // e.g. "m128n64w8s2-sawtooth-static-groups4" (mma_sync),
  // "wgmma-m128n128s2-ov-pp-evl-psm-cyclic-grid-head_major" (wgmma; ov/pp/evl/psm only when on);
  // test-only variants end in "-fault" or "-hang".
  std::string key() const;
  static std::optional<AttentionConfig> from_key(std::string_view key);
  nlohmann::json to_json() const;
  static AttentionConfig from_json(const nlohmann::json& json);

  bool operator==(const AttentionConfig&) const = default;
};

SWR_API std::string_view to_string(KvOrder order);
SWR_API std::string_view to_string(Persistence persistence);
SWR_API std::string_view to_string(TileSwizzle swizzle);
SWR_API std::string_view to_string(KvCacheHint hint);
SWR_API std::optional<KvCacheHint> parse_kv_cache_hint(std::string_view text);
SWR_API std::optional<KvOrder> parse_kv_order(std::string_view text);
SWR_API std::optional<Persistence> parse_persistence(std::string_view text);
SWR_API std::optional<TileSwizzle> parse_tile_swizzle(std::string_view text);

}  // namespace swr
