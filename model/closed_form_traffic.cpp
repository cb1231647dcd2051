#include "model/closed_form_traffic.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "swr/usage_error.hpp"
#include "templates/attention/attention_schedule.cuh"

namespace swr::model {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

void validate_tile(TileShape tile) {
  if (tile.block_m < 1) {
    throw UsageError("block_m " + std::to_string(tile.block_m) + " must be at least 1");
  }
  if (tile.block_n < 1) {
    throw UsageError("block_n " + std::to_string(tile.block_n) + " must be at least 1");
  }
}

// Bytes per row must be whole sectors so that every tile starts on a sector (true for every
// supported head dim and element type: 128 or 256 bytes per row).
std::int64_t sectors_per_row(const AttentionProblem& problem, int sector_bytes) {
  if (sector_bytes < 1) {
    throw UsageError("sector size " + std::to_string(sector_bytes) + " must be at least 1 byte");
  }
  const std::int64_t row_bytes =
      static_cast<std::int64_t>(problem.head_dim) * element_bytes(problem.dtype);
  if (row_bytes % sector_bytes != 0) {
    throw UsageError("a row of " + std::to_string(row_bytes) + " bytes is not a whole number of " +
                     std::to_string(sector_bytes) + "-byte sectors");
  }
  return row_bytes / sector_bytes;
}

}  // namespace

std::int64_t sectors_spanned(std::int64_t first_byte, std::int64_t length_bytes, int sector_bytes) {
  if (length_bytes <= 0) return 0;
  return ceil_div(first_byte + length_bytes, sector_bytes) - first_byte / sector_bytes;
}

int kv_tiles_of_q_tile(int q_tile, int seq_q, int seq_kv, TileShape tile, bool causal,
                       int causal_shift) {
  return attention::kv_tiles_of_q_tile(causal, q_tile, tile.block_m, tile.block_n, seq_q, seq_kv,
                                       causal_shift);
}

ClosedFormTraffic closed_form_traffic(const AttentionProblem& problem, TileShape tile,
                                      int sector_bytes) {
  problem.validate();
  validate_tile(tile);
  const std::int64_t per_row = sectors_per_row(problem, sector_bytes);
  const std::int64_t pairs = static_cast<std::int64_t>(problem.batch) * problem.heads;
  const std::int64_t kv_pairs = static_cast<std::int64_t>(problem.batch) * problem.kv_head_count();
  const int q_tiles = static_cast<int>(ceil_div(problem.seq_q, tile.block_m));

  // K/V rows one (batch, head) reads: every Q tile reads rows [0, min(n_i * BN, S_kv)).
  std::int64_t kv_rows_read = 0;
  std::int64_t kv_rows_touched = problem.seq_kv;  // causal with S_kv > S_q leaves keys unread
  if (!problem.causal) {
    kv_rows_read = static_cast<std::int64_t>(q_tiles) * problem.seq_kv;
  } else {
    kv_rows_touched = 0;
    for (int q_tile = 0; q_tile < q_tiles; ++q_tile) {
      const int kv_tiles = kv_tiles_of_q_tile(q_tile, problem.seq_q, problem.seq_kv, tile,
                                              problem.causal, problem.causal_shift());
      const std::int64_t rows = std::min<std::int64_t>(
          static_cast<std::int64_t>(kv_tiles) * tile.block_n, problem.seq_kv);
      kv_rows_read += rows;
      kv_rows_touched = std::max(kv_rows_touched, rows);
    }
  }

  ClosedFormTraffic traffic;
  // Q and O: every valid row once (a partial last tile reads only its valid rows).
  traffic.requested.q = pairs * problem.seq_q * per_row;
  traffic.requested.o = traffic.requested.q;
  traffic.requested.k = pairs * kv_rows_read * per_row;
  traffic.requested.v = traffic.requested.k;
  traffic.compulsory.q = pairs * problem.seq_q * per_row;
  traffic.compulsory.o = traffic.compulsory.q;
  // The query heads of one K/V head read the same rows: each once.
  traffic.compulsory.k = kv_pairs * kv_rows_touched * per_row;
  traffic.compulsory.v = traffic.compulsory.k;
  return traffic;
}

ClosedFormTraffic closed_form_traffic(const AttentionProblem& problem,
                                      const AttentionConfig& config, const GpuProfile& gpu) {
  return closed_form_traffic(problem, TileShape{config.block_m, config.block_n},
                             gpu.l2_sector_bytes);
}

double paper_sector_estimate(double seq, int head_dim, int element_bytes, int sector_bytes,
                             double tile, bool causal) {
  const double per_row = static_cast<double>(head_dim) * element_bytes / sector_bytes;
  return causal ? 2 * per_row * seq * (seq / (2 * tile) + 0.5)
                : 2 * per_row * seq * (1 + seq / tile);
}

int heads_in_flight(const OnsetInputs& inputs, std::int64_t seq) {
  const std::int64_t pairs = static_cast<std::int64_t>(inputs.shape.batch) * inputs.shape.heads;
  const std::int64_t q_tiles = ceil_div(seq, inputs.block_m);
  const std::int64_t wave = inputs.wave_size;
  std::int64_t heads = 1;
  switch (inputs.swizzle) {
    case TileSwizzle::head_major:
      heads = ceil_div(wave, q_tiles);
      break;
    case TileSwizzle::heads_interleaved:
      heads = wave;
      break;
    case TileSwizzle::head_groups: {
      const std::int64_t group = std::clamp<std::int64_t>(inputs.head_group, 1, pairs);
      heads =
          wave <= group * q_tiles ? std::min(wave, group) : group * ceil_div(wave, group * q_tiles);
      break;
    }
  }
  return static_cast<int>(std::clamp<std::int64_t>(heads, 1, pairs));
}

int kv_heads_in_flight(const OnsetInputs& inputs, std::int64_t seq) {
  const int group = std::max(1, inputs.shape.query_heads_per_kv_head());
  return static_cast<int>(ceil_div(heads_in_flight(inputs, seq), group));
}

std::int64_t bytes_in_flight(const OnsetInputs& inputs, std::int64_t seq) {
  const std::int64_t row_bytes =
      static_cast<std::int64_t>(inputs.shape.head_dim) * element_bytes(inputs.shape.dtype);
  const std::int64_t pairs = static_cast<std::int64_t>(inputs.shape.batch) * inputs.shape.heads;
  const std::int64_t kv = kv_heads_in_flight(inputs, seq) * 2 * seq * row_bytes;
  // Q and O tiles of the wave, at most all of Q and O.
  const std::int64_t tiles_in_wave =
      std::min<std::int64_t>(inputs.wave_size, pairs * ceil_div(seq, inputs.block_m));
  const std::int64_t q_and_o =
      std::min(tiles_in_wave * inputs.block_m, pairs * seq) * 2 * row_bytes;
  return kv + q_and_o;
}

std::optional<std::int64_t> non_compulsory_onset_seq(const OnsetInputs& inputs) {
  if (inputs.block_m < 1 || inputs.wave_size < 1 || inputs.usable_l2_bytes < 1) {
    throw UsageError("onset needs block_m, wave_size and usable L2 bytes of at least 1 (got " +
                     std::to_string(inputs.block_m) + ", " + std::to_string(inputs.wave_size) +
                     ", " + std::to_string(inputs.usable_l2_bytes) + ")");
  }
  const std::int64_t pairs = static_cast<std::int64_t>(inputs.shape.batch) * inputs.shape.heads;
  const std::int64_t row_bytes =
      static_cast<std::int64_t>(inputs.shape.head_dim) * element_bytes(inputs.shape.dtype);
  const std::int64_t accepted =
      std::numeric_limits<std::int32_t>::max() / std::max<std::int64_t>(pairs, 1);
  // One head's K/V alone exceeds the L2 past usable / (2R): no need to look further.
  const std::int64_t last = std::min(accepted, inputs.usable_l2_bytes / (2 * row_bytes) + 1);
  // heads_in_flight jumps as S changes the q-tile count, so the bytes in flight are not monotone
  // in S: scan row by row (a few million steps at most).
  for (std::int64_t seq = 1; seq <= last; ++seq) {
    if (bytes_in_flight(inputs, seq) > inputs.usable_l2_bytes) return seq;
  }
  return std::nullopt;
}

}  // namespace swr::model
