// Where each tile of Q, K, V and O lives: a dense number for the tile caches, its weight in
// sectors (valid rows only), and its byte range for the sector-level replay. Tensors are
// [B, H, S, D] contiguous, laid out one after another in a virtual address space.
#pragma once

#include <array>
#include <cstdint>

#include "model/tile_schedule_trace.hpp"
#include "model/wavefront_interleaving.hpp"

namespace swr::model {

class TileAddressMap {
 public:
  TileAddressMap(const ScheduleShape& shape, std::int64_t row_bytes, int sector_bytes);

  std::int64_t tile_count() const { return tile_count_; }
  std::int32_t tile_number(const TileAccess& access) const {
    const Tensor& tensor = tensors_[static_cast<int>(access.tensor)];
    return static_cast<std::int32_t>(
        tensor.first_number + static_cast<std::int64_t>(access.batch_head) * tensor.tiles_per_head +
        access.tile);
  }
  std::int64_t valid_rows(const TileAccess& access) const {
    const Tensor& tensor = tensors_[static_cast<int>(access.tensor)];
    return access.tile == tensor.tiles_per_head - 1 ? tensor.last_tile_rows : tensor.rows_per_tile;
  }
  std::int32_t sectors(const TileAccess& access) const {
    return static_cast<std::int32_t>(valid_rows(access) * sectors_per_row_);
  }
  std::uint64_t first_byte(const TileAccess& access) const;
  std::int64_t byte_count(const TileAccess& access) const {
    return valid_rows(access) * row_bytes_;
  }

 private:
  struct Tensor {
    std::int64_t first_number = 0;
    std::int64_t tiles_per_head = 0;
    std::int64_t rows_per_tile = 0;
    std::int64_t last_tile_rows = 0;
    std::int64_t seq = 0;
    std::uint64_t base_byte = 0;
  };
  std::array<Tensor, 4> tensors_;
  std::int64_t tile_count_ = 0;
  std::int64_t row_bytes_;
  std::int64_t sectors_per_row_;
};

}  // namespace swr::model
