// The math one warp does for its rows of a Q tile: Q·K^T into fp32 scores, masking, the online
// softmax in base 2, P·V into the fp32 output, and the normalised result. Everything lives in
// registers as mma.sync m16n8k16 fragments; shared memory is only read (K, V) or written (O).
#pragma once

#include "attention/row_statistics.cuh"
#include "common/ptx.cuh"
#include "common/swizzled_tile.cuh"

namespace swr {
namespace attention {

template <class T>
struct WarpRows {
  static constexpr int kHeadDim = T::kHeadDim;
  static constexpr int kBlockN = T::kBlockN;
  static constexpr int kRowsPerWarp = T::kBlockM / T::kWarps;
  static constexpr int kRowAtoms = kRowsPerWarp / 16;  // m16 slices per warp
  static constexpr int kScoreAtoms = kBlockN / 8;      // n8 slices of S
  static constexpr int kOutputAtoms = kHeadDim / 8;    // n8 slices of O
  static_assert(kRowsPerWarp % 16 == 0, "each warp owns whole m16 slices of Q");
  static_assert(kBlockN % 16 == 0 && kHeadDim % 16 == 0, "k16 steps");

  // Q fragments stay in registers while they cost at most 32 of them; larger ones (32 rows of
  // D=128) are re-read from the resident Q tile at every step, as FlashAttention-2 does, so that
  // the accumulators do not spill.
  static constexpr bool kQInRegisters = kRowAtoms * (kHeadDim / 16) * 4 <= 32;
  static constexpr int kHeldQSteps = kQInRegisters ? kHeadDim / 16 : 1;

  using Scores = float[kRowAtoms][kScoreAtoms][4];
  using QTile = SwizzledTile<T::kBlockM, kHeadDim>;
  using KvTile = SwizzledTile<kBlockN, kHeadDim>;

  int lane;
  int first_row;  // of this warp, within the Q tile
  // Byte offsets, within a tile, of the chunk this lane addresses in each ldmatrix (see
  // SwizzledTile::step_offset); set once by start().
  unsigned q_lane_bytes;
  unsigned key_lane_bytes;
  unsigned value_lane_bytes;
  unsigned q_fragments[kRowAtoms][kHeldQSteps][4];
  float output[kRowAtoms][kOutputAtoms][4];
  float row_max[kRowAtoms][2];  // max P is taken against (raised_max), rows group and group+8
  float row_sum[kRowAtoms][2];  // this lane's partial sums; reduced over the quad at the end

  __device__ __forceinline__ int group() const { return lane / 4; }
  __device__ __forceinline__ int quad() const { return lane % 4; }

  // Q as the A operand: rows first_row + m*16 + lane%16, k chunk 2kk + lane/16.
  __device__ __forceinline__ void load_q(unsigned q_base, int m, int kk,
                                         unsigned (&fragment)[4]) const {
    ldmatrix_x4(fragment, q_base + QTile::step_offset(q_lane_bytes, m * 16, 2 * kk));
  }

  __device__ __forceinline__ void start(const QTile& q_tile) {
    q_lane_bytes = QTile::lane_offset(first_row + lane % 16, lane / 16);
    // K as the B operand of S = Q K^T: two n8 slices of keys (lane/16), both k8 halves.
    key_lane_bytes = KvTile::lane_offset(lane % 8 + (lane / 16) * 8, (lane / 8) % 2);
    // V transposed as the B operand of O = P V: both k8 halves of keys, two n8 slices of dims.
    value_lane_bytes = KvTile::lane_offset(lane % 8 + ((lane / 8) % 2) * 8, lane / 16);
    const unsigned q_base = q_tile.shared_base();
#pragma unroll
    for (int m = 0; m < kRowAtoms; ++m) {
      if constexpr (kQInRegisters) {
#pragma unroll
        for (int kk = 0; kk < kHeadDim / 16; ++kk) load_q(q_base, m, kk, q_fragments[m][kk]);
      }
#pragma unroll
      for (int n = 0; n < kOutputAtoms; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) output[m][n][e] = 0.f;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        row_max[m][h] = negative_infinity();
        row_sum[m][h] = 0.f;
      }
    }
  }

  // S = Q K^T for this warp's rows and the kBlockN keys of the tile.
  __device__ __forceinline__ void scores(const QTile& q_tile, const KvTile& k_tile,
                                         Scores& s) const {
    const unsigned q_base = q_tile.shared_base();
    const unsigned k_base = k_tile.shared_base();
#pragma unroll
    for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
      for (int n = 0; n < kScoreAtoms; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[m][n][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      unsigned q_step[kRowAtoms][4];
#pragma unroll
      for (int m = 0; m < kRowAtoms; ++m) {
#pragma unroll
        for (int r = 0; r < 4; ++r) q_step[m][r] = q_fragments[m][kQInRegisters ? kk : 0][r];
        if constexpr (!kQInRegisters) load_q(q_base, m, kk, q_step[m]);
      }
#pragma unroll
      for (int np = 0; np < kBlockN / 16; ++np) {
        unsigned key[4];  // two n8 slices of keys, both k8 halves
        ldmatrix_x4(key, k_base + KvTile::step_offset(key_lane_bytes, np * 16, 2 * kk));
#pragma unroll
        for (int m = 0; m < kRowAtoms; ++m) {
          mma_16x8x16<T::kElement>(s[m][2 * np], q_step[m], key[0], key[1]);
          mma_16x8x16<T::kElement>(s[m][2 * np + 1], q_step[m], key[2], key[3]);
        }
      }
    }
  }

  // -inf for keys at or past seq_kv and, for causal, keys past the row's diagonal: row i sees
  // keys j <= i + causal_shift (0: top-left aligned; seq_kv - seq_q: bottom-right).
  __device__ __forceinline__ void mask(Scores& s, int q_row0, int kv_col0, int seq_kv,
                                       int causal_shift) const {
    const bool tail = kv_col0 + kBlockN > seq_kv;
    const bool diagonal = T::kCausal && kv_col0 + kBlockN - 1 > q_row0 + first_row + causal_shift;
    if (!tail && !diagonal) return;
#pragma unroll
    for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
      for (int n = 0; n < kScoreAtoms; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = q_row0 + first_row + m * 16 + group() + (e / 2) * 8;
          const int col = kv_col0 + n * 8 + 2 * quad() + (e % 2);
          if (col >= seq_kv || (T::kCausal && col > row + causal_shift))
            s[m][n][e] = negative_infinity();
        }
  }

  // Online softmax: the max raised if the tile passes it (raised_max), what was accumulated
  // rescaled, S becomes P = 2^(S·c - max). Once a row's max has settled it rarely moves, so the
  // warp skips the output rescale (an exact multiply by 1) unless some lane's max changed.
  __device__ __forceinline__ void softmax(Scores& s, float scale_log2) {
    float rescale[kRowAtoms][2];
    bool max_moved = false;
#pragma unroll
    for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float tile_max = negative_infinity();
#pragma unroll
        for (int n = 0; n < kScoreAtoms; ++n)
          tile_max = fmaxf(tile_max, fmaxf(s[m][n][2 * h], s[m][n][2 * h + 1]));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        const float new_max = raised_max(row_max[m][h], tile_max * scale_log2);
        max_moved |= new_max != row_max[m][h];
        // A row with no visible key yet keeps max = -inf; subtract 0 then, not -inf (NaN).
        const float reference = new_max == negative_infinity() ? 0.f : new_max;
        rescale[m][h] = exp2f(row_max[m][h] - reference);
        row_max[m][h] = new_max;
        float sum = 0.f;
#pragma unroll
        for (int n = 0; n < kScoreAtoms; ++n)
#pragma unroll
          for (int e = 2 * h; e < 2 * h + 2; ++e) {
            const float p = exp2f(s[m][n][e] * scale_log2 - reference);
            s[m][n][e] = p;
            sum += p;
          }
        row_sum[m][h] = row_sum[m][h] * rescale[m][h] + sum;
      }
    if (__any_sync(0xffffffffu, max_moved)) {
#pragma unroll
      for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
        for (int n = 0; n < kOutputAtoms; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) output[m][n][e] *= rescale[m][e / 2];
    }
  }

  // O += P V: two n8 slices of P are one k16 A fragment; V is read transposed.
  __device__ __forceinline__ void accumulate(const Scores& p, const KvTile& v_tile) {
    const unsigned v_base = v_tile.shared_base();
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      unsigned a[kRowAtoms][4];
#pragma unroll
      for (int m = 0; m < kRowAtoms; ++m) {
        a[m][0] = pack_pair<T::kElement>(p[m][2 * kk][0], p[m][2 * kk][1]);
        a[m][1] = pack_pair<T::kElement>(p[m][2 * kk][2], p[m][2 * kk][3]);
        a[m][2] = pack_pair<T::kElement>(p[m][2 * kk + 1][0], p[m][2 * kk + 1][1]);
        a[m][3] = pack_pair<T::kElement>(p[m][2 * kk + 1][2], p[m][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < kHeadDim / 16; ++dp) {
        unsigned value[4];  // two n8 slices of head dims, both k8 halves of the keys
        ldmatrix_x4_transposed(value,
                               v_base + KvTile::step_offset(value_lane_bytes, kk * 16, 2 * dp));
#pragma unroll
        for (int m = 0; m < kRowAtoms; ++m) {
          mma_16x8x16<T::kElement>(output[m][2 * dp], a[m], value[0], value[1]);
          mma_16x8x16<T::kElement>(output[m][2 * dp + 1], a[m], value[2], value[3]);
        }
      }
    }
  }

  // The natural log-sum-exp of each of this warp's rows, ln(sum_j exp(S_ij * scale)), which the
  // backward recomputes P from; +inf for a row that saw no key (its P is 0 everywhere). lse_rows:
  // row 0 of the (batch, head); rows at or past seq_q are not written.
  __device__ __forceinline__ void store_lse(float* lse_rows, int q_row0, int seq_q) const {
#pragma unroll
    for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float sum = row_sum[m][h];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const int row = q_row0 + first_row + m * 16 + group() + h * 8;
        if (quad() == 0 && row < seq_q) lse_rows[row] = log_sum_exp(row_max[m][h], sum);
      }
  }

  // O / l as 16-bit values into `tile` (this warp's rows).
  template <int Rows>
  __device__ __forceinline__ void store_normalised(const SwizzledTile<Rows, kHeadDim>& tile) const {
#pragma unroll
    for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float sum = row_sum[m][h];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const float inverse = sum > 0.f ? 1.f / sum : 0.f;
        const int row = first_row + m * 16 + group() + h * 8;
#pragma unroll
        for (int n = 0; n < kOutputAtoms; ++n)
          *reinterpret_cast<unsigned*>(tile.element(row, n * 8 + 2 * quad())) =
              pack_pair<T::kElement>(output[m][n][2 * h] * inverse,
                                     output[m][n][2 * h + 1] * inverse);
      }
  }
};

}  // namespace attention
}  // namespace swr
