#include "model/tile_address_map.hpp"

namespace swr::model {

TileAddressMap::TileAddressMap(const ScheduleShape& shape, std::int64_t row_bytes, int sector_bytes)
    : row_bytes_(row_bytes), sectors_per_row_(row_bytes / sector_bytes) {
  constexpr std::uint64_t kAlignment = 4096;  // allocations start on a page, as cudaMalloc's do
  std::uint64_t next_base = 0;
  for (TensorKind kind : {TensorKind::q, TensorKind::k, TensorKind::v, TensorKind::o}) {
    Tensor& tensor = tensors_[static_cast<int>(kind)];
    const bool kv = kind == TensorKind::k || kind == TensorKind::v;
    tensor.seq = kv ? shape.seq_kv : shape.seq_q;
    tensor.rows_per_tile = kv ? shape.tile.block_n : shape.tile.block_m;
    tensor.tiles_per_head = kv ? shape.kv_tiles : shape.q_tiles;
    tensor.last_tile_rows = tensor.seq - (tensor.tiles_per_head - 1) * tensor.rows_per_tile;
    tensor.first_number = tile_count_;
    tile_count_ += tensor.tiles_per_head * shape.batch_heads;
    tensor.base_byte = next_base;
    const std::uint64_t bytes =
        static_cast<std::uint64_t>(shape.batch_heads) * tensor.seq * row_bytes;
    next_base = (next_base + bytes + kAlignment - 1) / kAlignment * kAlignment;
  }
}

std::uint64_t TileAddressMap::first_byte(const TileAccess& access) const {
  const Tensor& tensor = tensors_[static_cast<int>(access.tensor)];
  const std::int64_t row = static_cast<std::int64_t>(access.batch_head) * tensor.seq +
                           access.tile * tensor.rows_per_tile;
  return tensor.base_byte + static_cast<std::uint64_t>(row * row_bytes_);
}

}  // namespace swr::model
