// One point of the attention backward's variant space: which K/V tile a CTA owns, how many Q rows
// it takes a step, in which order it walks the Q tiles, how CTAs take tiles, and how dQ is
// summed. The text key is stable forever, as the forward's: the same key is the same kernel.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "swr/attention_config.hpp"
#include "swr/export.h"
#include "swr/instruction_path.hpp"

namespace swr {

// How the K/V tiles' shares of dQ are summed into its fp32 accumulator: `atomic` (fp32 atomics,
// in whatever order CTAs reach them) or `deterministic` (each Q tile's shares in K/V-tile order,
// one CTA after another: the same dQ bit for bit on every run).
enum class DqAccumulation { atomic, deterministic };

SWR_API std::string_view to_string(DqAccumulation accumulation);
SWR_API std::optional<DqAccumulation> parse_dq_accumulation(std::string_view text);

// How the warp-specialized kernel's two consumer warpgroups meet for dQ = dS K, which reads both
// ones' rows of dS^T: `lockstep` (a barrier each step, then the step's dQ) or `lagged` (each
// computes the last step's dQ, whose dS^T both stored a step ago: no barrier, so they drift apart
// and one's exponentials can run beside the other's products).
enum class ConsumerSync { lockstep, lagged };
SWR_API std::string_view to_string(ConsumerSync sync);
SWR_API std::optional<ConsumerSync> parse_consumer_sync(std::string_view text);

struct SWR_API AttentionBackwardConfig {
  int block_m = 64;   // Q rows per step of the walk
  int block_n = 128;  // K/V rows a CTA owns (its dK and dV stay in registers)
  int warps = 8;      // mma_sync: each warp owns block_n / warps K/V rows (2x above head dim 128)
  int stages = 2;     // Q/dO pipeline depth, 1..3
  // The walk over the Q tiles (of the query heads of the CTA's K/V head): cyclic, or sawtooth
  // (reversed on every other tile a CTA takes: the Q tiles read last are read first next).
  KvOrder order = KvOrder::cyclic;
  Persistence persistence = Persistence::grid;
  TileSwizzle swizzle = TileSwizzle::head_major;  // over (batch, K/V head) x K/V tiles
  int head_group = 1;                             // head_groups: (batch, K/V head) pairs a group
  DqAccumulation dq = DqAccumulation::atomic;
  // `lagged` only where pairs_kv_warpgroups().
  ConsumerSync consumers = ConsumerSync::lockstep;
  // CTA pairs: a cluster of two CTAs owns two neighbouring K/V tiles of a head and walks the same
  // Q tiles, each loading half of every step's Q and dO for both (TMA multicast). Only where
  // pairs_kv_warpgroups(), with grid persistence and atomic dQ.
  bool cta_pairs = false;
  // Who adds a step's dQ into the accumulator in that kernel: its dQ writer warp, one bulk
  // reduction a consumer warpgroup's part from shared memory (false), or each consumer thread
  // from its registers by 16-byte vector reductions, with no hand-over (true). Only where
  // pairs_kv_warpgroups(), with atomic dQ.
  bool dq_from_registers = false;
  InstructionPath path = InstructionPath::mma_sync;
  // Test-only: the main kernel writes through a null pointer (fault isolation). Never enumerated.
  bool planted_fault = false;

  int threads() const { return warps * 32; }
  // wgmma with 12 warps: a producer warpgroup (TMA loads, dQ's bulk reductions) and two consumer
  // warpgroups (templates/attention/backward/sm90/backward_kernel_ws.cuh); its launch takes tensor
  // maps of Q, K, V and dO. wgmma with 8 warps: two warpgroups that stage their own tiles.
  bool warp_specialized() const { return path == InstructionPath::wgmma && warps == 12; }
  // The warp-specialized kernel for wide heads (block_n 64): its two consumer warpgroups split a
  // step's products (one forms P^T and dV, the other dS^T and dK) rather than the K/V rows
  // (templates/attention/backward/sm90/backward_kernel_ws_wide.cuh).
  bool splits_products() const { return warp_specialized() && block_n == 64; }
  // The warp-specialized kernel whose two consumer warpgroups own 64 K/V rows each: the one whose
  // consumers may lag (ConsumerSync).
  bool pairs_kv_warpgroups() const { return warp_specialized() && !splits_products(); }
  // Where cta_pairs may be set: that kernel, taking a grid's tiles, adding dQ atomically.
  bool may_pair_ctas() const {
    return pairs_kv_warpgroups() && persistence == Persistence::grid &&
           dq == DqAccumulation::atomic;
  }
  // Where dq_from_registers may be set.
  bool may_add_dq_from_registers() const {
    return pairs_kv_warpgroups() && dq == DqAccumulation::atomic;
  }
  // The warp-specialized kernels keep the dQ accumulator in their wgmma fragments' order
  // (DqFragmentLayout, read by the postprocess a part of a Q tile at a time); the others by row.
  bool dq_in_fragments() const { return warp_specialized(); }
  // CTAs a cluster (and a unit of the backward's schedule: backward_tile_unit).
  int cluster_ctas() const { return cta_pairs ? 2 : 1; }

  // e.g. "bwd-m64n128w8s2-sawtooth-grid-head_major", "bwd-m64n64w4s2-cyclic-static-groups4-det",
  // "bwd-wgmma-m64n128w12s2-cyclic-dynamic-head_major-lag", "bwd-wgmma-m80n128w12s2-cyclic-grid-
  // head_major-pair" ("-pair": CTA pairs; "-lag": lagged consumers; "-red": dQ added from the
  // consumers' registers; "-det": deterministic dQ;
  // test-only variants end in "-fault").
  std::string key() const;
  static std::optional<AttentionBackwardConfig> from_key(std::string_view key);
  nlohmann::json to_json() const;
  // UsageError naming a bad field.
  static AttentionBackwardConfig from_json(const nlohmann::json& json);

  bool operator==(const AttentionBackwardConfig&) const = default;
};

}  // namespace swr
