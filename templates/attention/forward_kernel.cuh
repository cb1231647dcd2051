// Attention forward kernel: the schedule (attention_schedule.cuh) drives the math of one
// tile (forward_tile.cuh). A second instruction path (wgmma/TMA on sm_90a) would replace
// ForwardTile and leave this file and the schedule as they are.
#pragma once

#include "attention/attention_schedule.cuh"
#include "attention/forward_tile.cuh"
#include "common/element.cuh"

namespace swr {
namespace attention {

using swr::Element;

template <int HeadDim, int BlockM, int BlockN, int Warps, int Stages, Element Elem, bool Causal,
          KvOrder Order, Persistence Persist, TileSwizzle Swizzle, int HeadGroup, bool PlantedFault>
struct Traits {
  static constexpr int kHeadDim = HeadDim;
  static constexpr int kBlockM = BlockM;
  static constexpr int kBlockN = BlockN;
  static constexpr int kWarps = Warps;
  static constexpr int kStages = Stages;
  static constexpr int kThreads = Warps * 32;
  static constexpr Element kElement = Elem;
  static constexpr bool kCausal = Causal;
  static constexpr KvOrder kOrder = Order;
  static constexpr Persistence kPersistence = Persist;
  static constexpr TileSwizzle kSwizzle = Swizzle;
  static constexpr int kHeadGroup = HeadGroup;
  static constexpr bool kPlantedFault = PlantedFault;
  // Q tile + Stages x (K tile + V tile), 16-bit elements. The host's resource model says the same.
  static constexpr int kDynamicSharedBytes = (BlockM + 2 * Stages * BlockN) * HeadDim * 2;
  static_assert(Stages >= 1 && Stages <= 3, "K/V pipeline depth 1..3");
  static_assert(HeadGroup >= 1, "head groups hold at least one head");
};

// q, o: [batch, heads, seq_q, HeadDim]; k, v: [batch, heads, seq_kv, HeadDim]. scale_log2 is
// softmax_scale * log2(e). tile_counter (dynamic persistence only) must be 0 at launch.
// wave_size: CTAs resident at once (grid persistence: what the sawtooth order flips on).
template <class T>
__device__ void forward(const void* q, const void* k, const void* v, void* o, int batch, int heads,
                        int seq_q, int seq_kv, float scale_log2, int* tile_counter, int wave_size) {
  if constexpr (T::kPlantedFault) {
    // Test-only variant: an illegal address, so the tuner's fault isolation can be proved.
    if (threadIdx.x == 0) *reinterpret_cast<volatile int*>(static_cast<size_t>(8)) = 1;
  }
  extern __shared__ __align__(128) unsigned char shared_memory[];
  ForwardTile<T> tile(reinterpret_cast<unsigned short*>(shared_memory));

  const int q_tiles = (seq_q + T::kBlockM - 1) / T::kBlockM;
  const int batch_heads = batch * heads;
  for_each_tile<T::kPersistence>(
      q_tiles * batch_heads, tile_counter, wave_size, [&](int linear_tile, int round) {
        const TileCoord coord =
            tile_coord(T::kSwizzle, T::kHeadGroup, T::kCausal, linear_tile, q_tiles, batch_heads);
        const long long q_offset = static_cast<long long>(coord.batch_head) * seq_q * T::kHeadDim;
        const long long kv_offset = static_cast<long long>(coord.batch_head) * seq_kv * T::kHeadDim;
        tile.compute(static_cast<const unsigned short*>(q) + q_offset,
                     static_cast<const unsigned short*>(k) + kv_offset,
                     static_cast<const unsigned short*>(v) + kv_offset,
                     static_cast<unsigned short*>(o) + q_offset, coord.q_tile * T::kBlockM, seq_q,
                     seq_kv, scale_log2, [round](int step, int kv_tiles) {
                       return kv_tile_at(T::kOrder, step, kv_tiles, round);
                     });
      });
}

}  // namespace attention
}  // namespace swr
