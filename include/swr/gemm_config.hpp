// One point of the GEMM variant space: tile shape and warps, pipeline depth, persistence, and the
// block swizzle (the order in which output tiles are handed out). The text key is stable forever:
// the same key must always mean the same kernel.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include "swr/export.h"

namespace swr {

// How output tiles are handed to CTAs.
enum class GemmPersistence {
  grid,         // one CTA per output tile
  static_loop,  // about one wave of CTAs, each taking every gridDim-th tile ("static")
};

// The dimension whose tiles are grouped into bands by the block swizzle.
enum class SwizzleAxis {
  n,  // bands of swizzle_stride / block_n tile columns, walked row by row (the paper's swizzle)
  m,  // bands of swizzle_stride / block_m tile rows, walked column by column
};

struct SWR_API GemmConfig {
  int block_m = 128;
  int block_n = 128;
  int block_k = 32;
  int warps_m = 2;  // warps along M; each warp owns (block_m / warps_m) x (block_n / warps_n) of C
  int warps_n = 4;
  int stages = 3;  // cp.async pipeline depth, 2..4
  GemmPersistence persistence = GemmPersistence::grid;
  // Band width in elements of the swizzled axis; 0 = plain row-major order (then axis is n).
  int swizzle_stride = 0;
  SwizzleAxis swizzle_axis = SwizzleAxis::n;

  int warps() const { return warps_m * warps_n; }
  int threads() const { return warps() * 32; }
  int warp_tile_m() const { return block_m / warps_m; }
  int warp_tile_n() const { return block_n / warps_n; }

  // e.g. "m128n256k32w2x4s4-grid-swz0", "m128n128k64w2x2s3-static-swzn1792"
  std::string key() const;
  static std::optional<GemmConfig> from_key(std::string_view key);
  // {"block_m", "block_n", "block_k", "warps_m", "warps_n", "stages", "persistence",
  //  "swizzle_stride", "swizzle_axis"}; from_json throws UsageError naming a bad field.
  nlohmann::json to_json() const;
  static GemmConfig from_json(const nlohmann::json& json);

  bool operator==(const GemmConfig&) const = default;
};

SWR_API std::string_view to_string(GemmPersistence persistence);
SWR_API std::string_view to_string(SwizzleAxis axis);
SWR_API std::optional<GemmPersistence> parse_gemm_persistence(std::string_view text);
SWR_API std::optional<SwizzleAxis> parse_swizzle_axis(std::string_view text);

}  // namespace swr
