// One point of the GEMM variant space: tile shape and warps, pipeline depth, persistence, and the
// block swizzle (the order in which output tiles are handed out). The text key is stable forever:
// the same key must always mean the same kernel.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include "swr/export.h"
#include "swr/instruction_path.hpp"

namespace swr {

// How output tiles are handed to CTAs.
enum class GemmPersistence {
  grid,          // one CTA per output tile
  static_loop,   // about one wave of CTAs, each taking every gridDim-th tile ("static")
  dynamic_loop,  // about one wave of CTAs, claiming tiles from a zeroed counter (wgmma only)
  stream_k,      // one wave: static for the whole waves, the last partial wave's k blocks split
                 // evenly over every CTA, partial sums fixed up in a scratch (wgmma only)
};

// How the two consumer warpgroups of a wgmma variant share the output tiles.
enum class GemmConsumerMode {
  cooperative,  // both split each tile (block_m / 2 rows each)
  pingpong,     // each owns alternate tiles; one's epilogue overlaps the other's mainloop
};

// The dimension whose tiles are grouped into bands by the block swizzle.
enum class SwizzleAxis {
  n,  // bands of swizzle_stride / block_n tile columns, walked row by row (the paper's swizzle)
  m,  // bands of swizzle_stride / block_m tile rows, walked column by column
};

struct SWR_API GemmConfig {
  // mma_sync: templates/gemm/gemm_kernel.cuh; wgmma: templates/gemm/sm90/ (sm_90a only).
  InstructionPath path = InstructionPath::mma_sync;
  int block_m = 128;
  int block_n = 128;
  int block_k = 32;
  // mma_sync only: warps along M; each warp owns (block_m / warps_m) x (block_n / warps_n) of C.
  int warps_m = 2;
  int warps_n = 4;
  int stages = 3;  // pipeline depth: cp.async 2..4, TMA ring 2..8
  // wgmma only: consumer mode and cluster shape (CTAs along M x along N; 2x1 multicasts B, 1x2 A,
  // 2x2 both).
  GemmConsumerMode consumer_mode = GemmConsumerMode::cooperative;
  int cluster_m = 1;
  int cluster_n = 1;
  // wgmma only: compute C^T = B^T · A^T (swr's B as the MN-major first operand, A as the K-major
  // second, the tile stored transposed). For shapes whose ragged side is M: the kernel's tile
  // width, any multiple of 16, then runs along M. block_m, block_n, the cluster and the swizzle
  // axis are those of C^T (block_m runs along swr's N); gemm_kernel_problem() swaps m and n.
  bool transposed = false;
  GemmPersistence persistence = GemmPersistence::grid;
  // Band width in elements of the swizzled axis; 0 = plain row-major order (then axis is n).
  int swizzle_stride = 0;
  SwizzleAxis swizzle_axis = SwizzleAxis::n;

  // wgmma: one producer and two consumer warpgroups.
  int warps() const { return path == InstructionPath::wgmma ? 12 : warps_m * warps_n; }
  int threads() const { return warps() * 32; }
  int warp_tile_m() const { return block_m / warps_m; }
  int warp_tile_n() const { return block_n / warps_n; }
  int cluster_size() const { return cluster_m * cluster_n; }

  // e.g. "m128n256k32w2x4s4-grid-swz0", "m128n128k64w2x2s3-static-swzn1792" (mma_sync),
  // "wgmma-m128n256k64s3-cooperative-c2x1-static-swzm512",
  // "wgmma-m128n176k64s4-cooperative-c2x2-transposed-static-swz0" (wgmma).
  std::string key() const;
  static std::optional<GemmConfig> from_key(std::string_view key);
  // mma_sync: {"block_m", "block_n", "block_k", "warps_m", "warps_n", "stages", "persistence",
  //  "swizzle_stride", "swizzle_axis"} (no "path": absent means mma_sync); wgmma: {"path",
  //  "block_m", "block_n", "block_k", "stages", "consumer_mode", "cluster_m", "cluster_n",
  //  "persistence", "swizzle_stride", "swizzle_axis"}, plus "transposed": true for a transposed
  //  one (absent otherwise). from_json throws UsageError naming a bad field.
  nlohmann::json to_json() const;
  static GemmConfig from_json(const nlohmann::json& json);

  bool operator==(const GemmConfig&) const = default;
};

SWR_API std::string_view to_string(GemmPersistence persistence);
SWR_API std::string_view to_string(SwizzleAxis axis);
SWR_API std::string_view to_string(GemmConsumerMode mode);
SWR_API std::optional<GemmConsumerMode> parse_gemm_consumer_mode(std::string_view text);
SWR_API std::optional<GemmPersistence> parse_gemm_persistence(std::string_view text);
SWR_API std::optional<SwizzleAxis> parse_swizzle_axis(std::string_view text);

}  // namespace swr
