// Attention forward kernel (mma.sync): the schedule (attention_schedule.cuh) drives the math of
// one tile (forward_tile.cuh); the launch-argument block (attention_args.cuh) says where each
// (batch, head)'s rows lie and which K/V head it reads.
#pragma once

#include "attention/attention_args.cuh"
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
  static_assert(Stages >= 1 && Stages <= 3, "K/V pipeline depth 1..3");
  static_assert(HeadGroup >= 1, "head groups hold at least one head");
};

// q, o: [batch, heads, seq_q, HeadDim]; k, v: [batch, kv_heads, seq_kv, HeadDim], each laid out
// by its strides in `args`; query head h reads K/V head kv_head_of(h). args.tile_counter (dynamic
// persistence only) must be 0 at launch. lse: [batch, heads, seq_q] fp32, the rows' log-sum-exp
// for the backward (log_sum_exp), or null: the inference path writes nothing more.
template <class T>
__device__ void forward(const void* q, const void* k, const void* v, void* o,
                        const AttentionArgs& args, float* lse) {
  if constexpr (T::kPlantedFault) {
    // Test-only variant: an illegal address, so the tuner's fault isolation can be proved.
    if (threadIdx.x == 0) *reinterpret_cast<volatile int*>(static_cast<size_t>(8)) = 1;
  }
  extern __shared__ __align__(128) unsigned char shared_memory[];
  ForwardTile<T> tile(reinterpret_cast<unsigned short*>(shared_memory));

  const int q_tiles = (args.seq_q + T::kBlockM - 1) / T::kBlockM;
  const int batch_heads = args.batch * args.heads;
  for_each_tile<T::kPersistence>(
      q_tiles * batch_heads, args.tile_counter, args.wave_size, [&](int linear_tile, int round) {
        const TileCoord coord =
            tile_coord(T::kSwizzle, T::kHeadGroup, T::kCausal, linear_tile, q_tiles, batch_heads);
        const int batch = coord.batch_head / args.heads;
        const int head = coord.batch_head - batch * args.heads;
        const int kv_head = kv_head_of(head, args.heads, args.kv_heads);
        tile.compute(static_cast<const unsigned short*>(q) + row_offset(args.q, batch, head, 0),
                     static_cast<const unsigned short*>(k) + row_offset(args.k, batch, kv_head, 0),
                     static_cast<const unsigned short*>(v) + row_offset(args.v, batch, kv_head, 0),
                     static_cast<unsigned short*>(o) + row_offset(args.o, batch, head, 0),
                     lse == nullptr ? nullptr : lse + lse_row0(args, batch, head),
                     coord.q_tile * T::kBlockM, args, [round](int step, int kv_tiles) {
                       return kv_tile_at(T::kOrder, step, kv_tiles, round);
                     });
      });
}

}  // namespace attention
}  // namespace swr
