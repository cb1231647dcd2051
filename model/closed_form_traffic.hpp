// L2 sector traffic of the attention forward kernel counted from its tile schedule, without a
// cache: the paper's §3.2-3.3 model, generalised to B, H, S_q != S_kv, D, element size, tile
// sizes, causal masking and trailing partial tiles.
//
// Notation: P = B*H (batch, head) pairs, P_kv = B*H_kv (batch, K/V head) pairs (P_kv = P but for
// GQA/MQA), R = D*E bytes per row, C = sector bytes, BM x BN = tile, q_tiles = ceil(S_q/BM),
// kv_tiles = ceil(S_kv/BN).
// The kernel (templates/attention/forward_tile.cuh) reads each Q tile once, then for each step the
// K tile and the V tile of that step, and writes the O tile once. Rows past the end of a sequence
// are zero-filled in shared memory, not read, so a partial tile costs only its valid rows.
//
//   Q = O = P * sum_i span(rows of Q tile i)                       = P * S_q*R/C  (R % C == 0)
//   K = V = P * sum_i sum_{j < n_i} span(rows of K tile j)   (every query head reads its K/V head)
//     non-causal: n_i = kv_tiles                                    -> P * q_tiles * S_kv*R/C
//     causal (keys up to the one the tile's last row sees, shift s = 0 top-left, S_kv - S_q
//     bottom-right):
//       n_i = min(kv_tiles, max(0, ceil((min((i+1)*BM, S_q) + s) / BN)))
//                                                                   -> ~ P * S_q*S_kv*R/(2*BM*C)
//   compulsory (cold) misses = every byte of Q, K, V, O the kernel touches, once
//                            = (2*P*S_q + 2*P_kv*S_kv)*R/C (causal: only the keys some query
//                              sees, min(S_kv, max_i n_i * BN) rows of each K and V head)
//
// For the paper's case (B = H = 1, D = 64, fp16, C = 32 so R/C = 4, S_q = S_kv = S, BM = BN = T,
// S a multiple of T): non-causal M = 8S + 8S^2/T = 8S(1 + S/T); causal K+V = 8*T*n(n+1)/2 with
// n = S/T, so M = 8S(S/(2T) + 3/2), which the paper approximates as 8S(S/(2T) + 1/2): the two
// differ by 8S, a relative 2T/S (0.5% at S = 32K, T = 80). Cold misses: 4*S*R/C = 16S.
#pragma once

#include <cstdint>
#include <optional>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::model {

struct TileShape {
  int block_m = 0;  // Q rows per tile
  int block_n = 0;  // K/V rows per step
};

// Sector counts per tensor.
struct TensorSectors {
  std::int64_t q = 0, k = 0, v = 0, o = 0;
  std::int64_t total() const { return q + k + v + o; }
  std::int64_t reads() const { return q + k + v; }
  bool operator==(const TensorSectors&) const = default;
};

struct ClosedFormTraffic {
  TensorSectors requested;   // sectors the kernel asks the L2 for (lts__t_sectors_srcunit_tex)
  TensorSectors compulsory;  // each byte once: the misses of an L2 that holds everything
};

// Sectors that bytes [first_byte, first_byte + length_bytes) of a sector-aligned buffer touch.
std::int64_t sectors_spanned(std::int64_t first_byte, std::int64_t length_bytes, int sector_bytes);

// K/V tiles a Q tile reads: all of them, or for causal the ones up to the last key its last valid
// row sees (row i sees keys j <= i + causal_shift).
int kv_tiles_of_q_tile(int q_tile, int seq_q, int seq_kv, TileShape tile, bool causal,
                       int causal_shift);

// Exact counts. Throws UsageError for a non-positive tile or sector size or an invalid problem.
ClosedFormTraffic closed_form_traffic(const AttentionProblem& problem, TileShape tile,
                                      int sector_bytes);
ClosedFormTraffic closed_form_traffic(const AttentionProblem& problem,
                                      const AttentionConfig& config, const GpuProfile& gpu);

// The paper's approximation for one (batch, head) with square tiles of T rows:
// M = 2*(D*E/C)*S*(1 + S/T) non-causal, 2*(D*E/C)*S*(S/(2T) + 1/2) causal.
double paper_sector_estimate(double seq, int head_dim, int element_bytes, int sector_bytes,
                             double tile, bool causal);

// When non-compulsory misses must appear. The heads in flight are those the CTAs resident at once
// (a wave of `wave_size` consecutive tiles in swizzle order) read together: one head when a wave
// covers less than one head's q tiles (head_major), up to `wave_size` heads (heads_interleaved),
// the heads of a group (head_groups). Consecutive query heads share a K/V head (GQA), so they read
// ceil(heads_in_flight / group) K/V heads. A K/V tile is reused one Q tile later (cyclic order),
// after the K/V of every K/V head in flight and the wave's Q and O tiles went through the L2:
//   bytes_in_flight(S) = kv_heads_in_flight(S) * 2*S*R + wave_size * 2*BM*R
// and misses beyond the compulsory ones appear once that exceeds the usable L2 (fully associative
// LRU; a real L2's hashing and replacement start to miss somewhat earlier).
struct OnsetInputs {
  AttentionProblem shape;  // batch, heads, kv_heads, head_dim, dtype; sequence lengths ignored
  int block_m = 128;
  TileSwizzle swizzle = TileSwizzle::head_major;
  int head_group = 1;
  int wave_size = 1;  // CTAs resident at once
  std::int64_t usable_l2_bytes = 0;
};

int heads_in_flight(const OnsetInputs& inputs, std::int64_t seq);
int kv_heads_in_flight(const OnsetInputs& inputs, std::int64_t seq);
std::int64_t bytes_in_flight(const OnsetInputs& inputs, std::int64_t seq);

// Smallest S = S_q = S_kv whose bytes in flight exceed the usable L2; nullopt when no S the
// kernel accepts (B*H*S < 2^31) gets there.
std::optional<std::int64_t> non_compulsory_onset_seq(const OnsetInputs& inputs);

}  // namespace swr::model
