// GEMM kernel: C = A · B with A [M x K], B [K x N] and C [M x N] row-major, fp16 or bf16 in and
// out, fp32 accumulation. The schedule (block_swizzle.cuh) drives the math
// of one tile (gemm_mainloop.cuh). A wgmma/TMA path for sm_90a would replace Mainloop and leave
// this file and the schedule as they are.
#pragma once

#include "common/element.cuh"
#include "gemm/block_swizzle.cuh"
#include "gemm/gemm_mainloop.cuh"

namespace swr {
namespace gemm {

using swr::Element;

template <int BlockM, int BlockN, int BlockK, int WarpsM, int WarpsN, int Stages, Element Elem,
          Persistence Persist>
struct Traits {
  static constexpr int kBlockM = BlockM;
  static constexpr int kBlockN = BlockN;
  static constexpr int kBlockK = BlockK;
  static constexpr int kWarpsM = WarpsM;
  static constexpr int kWarpsN = WarpsN;
  static constexpr int kWarps = WarpsM * WarpsN;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kWarpM = BlockM / WarpsM;
  static constexpr int kWarpN = BlockN / WarpsN;
  static constexpr int kStages = Stages;
  static constexpr Element kElement = Elem;
  static constexpr Persistence kPersistence = Persist;
  // One stage holds an A tile [BlockM x BlockK] and a B tile [BlockK x BlockN] of 16-bit elements.
  // The host's resource model (generator/gemm_resource_model.cpp) says the same.
  static constexpr int kStageBytes = (BlockM * BlockK + BlockK * BlockN) * 2;
  static constexpr int kDynamicSharedBytes = Stages * kStageBytes;
  static_assert(BlockM % WarpsM == 0 && BlockN % WarpsN == 0, "warps split the tile evenly");
  static_assert(BlockK == 32 || BlockK == 64, "k tiles of 32 or 64");
  static_assert(Stages >= 2 && Stages <= 4, "cp.async pipeline depth 2..4");
};

// a, b, c: 16-bit elements. swizzle_axis, swizzle_group: block_swizzle.cuh's tile_at (a launch
// argument, so one binary serves every stride).
template <class T>
__device__ void multiply(const void* a, const void* b, void* c, int m, int n, int k,
                         int swizzle_axis, int swizzle_group) {
  extern __shared__ __align__(128) unsigned char shared_memory[];
  Mainloop<T> mainloop(shared_memory);
  const int tiles_m = (m + T::kBlockM - 1) / T::kBlockM;
  const int tiles_n = (n + T::kBlockN - 1) / T::kBlockN;
  for_each_output_tile<T::kPersistence>(
      tiles_m, tiles_n, swizzle_axis, swizzle_group, [&](TileCoord tile) {
        mainloop.compute(static_cast<const unsigned short*>(a),
                         static_cast<const unsigned short*>(b), static_cast<unsigned short*>(c),
                         tile.tile_m * T::kBlockM, tile.tile_n * T::kBlockN, m, n, k);
      });
}

}  // namespace gemm
}  // namespace swr
