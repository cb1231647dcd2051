// The math one warp of the mma.sync backward does for its K/V rows at one step of the walk, every
// product an mma.sync m16n8k16 on fragments that ldmatrix reads from the shared tiles (the
// forward's access patterns, warp_rows.cuh, with the roles of Q and K/V swapped):
//   S^T = K Q^T and dP^T = V dO^T    for the warp's K/V rows x the step's Q rows
//   P^T = 2^(S^T * scale * log2(e) - L * log2(e)), dS^T = P^T o (dP^T - delta)
//   dV += P^T dO and dK += dS^T Q    P^T and dS^T packed from the accumulators, in registers
//   dS^T to shared memory; then, once every warp's is there, dQ's part of this warp:
//   dQ = dS K                         dS read transposed from the shared dS^T tile
// Above head dim 128 two warps share 16 K/V rows (kDSplit): both compute S^T and dP^T, each
// accumulates half of the columns of dK and dV, so that those fit the registers.
#pragma once

#include "common/ptx.cuh"
#include "common/swizzled_tile.cuh"

namespace swr {
namespace attention {

template <class T>
struct BackwardWarp {
  static constexpr int kHeadDim = T::kHeadDim;
  static constexpr int kBlockM = T::kBlockM;
  static constexpr int kBlockN = T::kBlockN;
  static constexpr int kRowAtoms = T::kRowsPerWarp / 16;   // m16 slices of K/V rows
  static constexpr int kQAtoms = kBlockM / 8;              // n8 slices of the step's Q rows
  static constexpr int kAccumDim = kHeadDim / T::kDSplit;  // dK, dV columns of this warp
  static constexpr int kAccumAtoms = kAccumDim / 8;
  // dQ of the step, [kBlockM x kHeadDim], split over the warps: whole m16 slices of rows, and
  // the columns in kDqColumnParts parts.
  static constexpr int kDqRowAtoms = T::kDqRowAtoms;
  static constexpr int kDqColumns = kHeadDim / T::kDqColumnParts;
  // dQ's columns are summed and added in the fewest chunks of at most 64 columns (whole n16 pairs):
  // its accumulators never hold more than 32 registers beside dK and dV, and room is left for the
  // lane exchange of add_dq (the dS fragments are read again for each chunk).
  static constexpr int kMaxDqChunkColumns = 64;
  static constexpr int dq_chunks() {
    int chunks = (kDqColumns + kMaxDqChunkColumns - 1) / kMaxDqChunkColumns;
    while (kDqColumns % chunks != 0 || (kDqColumns / chunks) % 16 != 0) ++chunks;
    return chunks;
  }
  static constexpr int kDqChunks = dq_chunks();
  static constexpr int kDqChunkColumns = kDqColumns / kDqChunks;
  static constexpr int kDqAtoms = kDqChunkColumns / 8;
  static_assert(kDqColumns % kDqChunkColumns == 0, "dQ's columns in whole chunks");
  static_assert(kAccumDim % 16 == 0 && kDqColumns % 16 == 0, "columns in k16/n16 pairs");

  using QTile = SwizzledTile<kBlockM, kHeadDim>;  // Q and dO of a step
  using KvTile = SwizzledTile<kBlockN, kHeadDim>;
  using DsTile = SwizzledTile<kBlockN, kBlockM>;  // dS^T: K/V rows x Q rows
  using Block = float[kRowAtoms][kQAtoms][4];     // S^T, P^T, dP^T, dS^T of the warp

  int lane;
  int first_row;    // of this warp's K/V rows, within the K/V tile
  int first_accum;  // first column of this warp's dK and dV
  int dq_first_row;
  int dq_first_column;
  // Byte offsets of the chunk this lane addresses in each ldmatrix (SwizzledTile::step_offset).
  unsigned kv_rows_lane;   // K or V rows as the A operand of S^T, dP^T
  unsigned q_rows_lane;    // Q or dO rows as the B operand of S^T, dP^T
  unsigned q_trans_lane;   // Q or dO read transposed: the B operand of dK, dV
  unsigned ds_trans_lane;  // dS^T read transposed: the A operand of dQ
  unsigned k_trans_lane;   // K read transposed: the B operand of dQ
  float dk[kRowAtoms][kAccumAtoms][4];
  float dv[kRowAtoms][kAccumAtoms][4];

  __device__ __forceinline__ int group() const { return lane / 4; }
  __device__ __forceinline__ int quad() const { return lane % 4; }

  __device__ __forceinline__ void start(int warp) {
    lane = threadIdx.x % 32;
    first_row = (warp / T::kDSplit) * T::kRowsPerWarp;
    first_accum = (warp % T::kDSplit) * kAccumDim;
    const int dq_row_warps = kBlockM / 16 / kDqRowAtoms;
    dq_first_row = (warp % dq_row_warps) * kDqRowAtoms * 16;
    dq_first_column = (warp / dq_row_warps) * kDqColumns;
    kv_rows_lane = KvTile::lane_offset(first_row + lane % 16, lane / 16);
    q_rows_lane = QTile::lane_offset(lane % 8 + (lane / 16) * 8, (lane / 8) % 2);
    q_trans_lane = QTile::lane_offset(lane % 8 + ((lane / 8) % 2) * 8, lane / 16);
    ds_trans_lane = DsTile::lane_offset(lane % 8 + (lane / 16) * 8, (lane / 8) % 2);
    k_trans_lane = KvTile::lane_offset(lane % 8 + ((lane / 8) % 2) * 8, lane / 16);
#pragma unroll
    for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
      for (int n = 0; n < kAccumAtoms; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          dk[m][n][e] = 0.f;
          dv[m][n][e] = 0.f;
        }
  }

  // S^T = K Q^T and dP^T = V dO^T, in one pass over the head dim.
  __device__ __forceinline__ void scores(const KvTile& k_tile, const KvTile& v_tile,
                                         const QTile& q_tile, const QTile& do_tile, Block& s,
                                         Block& dp) const {
    const unsigned k_base = k_tile.shared_base();
    const unsigned v_base = v_tile.shared_base();
    const unsigned q_base = q_tile.shared_base();
    const unsigned do_base = do_tile.shared_base();
#pragma unroll
    for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
      for (int n = 0; n < kQAtoms; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[m][n][e] = 0.f;
          dp[m][n][e] = 0.f;
        }
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      unsigned k_rows[kRowAtoms][4], v_rows[kRowAtoms][4];
#pragma unroll
      for (int m = 0; m < kRowAtoms; ++m) {
        ldmatrix_x4(k_rows[m], k_base + KvTile::step_offset(kv_rows_lane, m * 16, 2 * kk));
        ldmatrix_x4(v_rows[m], v_base + KvTile::step_offset(kv_rows_lane, m * 16, 2 * kk));
      }
#pragma unroll
      for (int np = 0; np < kBlockM / 16; ++np) {
        unsigned q[4], d_o[4];  // two n8 slices of Q rows, both k8 halves
        ldmatrix_x4(q, q_base + QTile::step_offset(q_rows_lane, np * 16, 2 * kk));
        ldmatrix_x4(d_o, do_base + QTile::step_offset(q_rows_lane, np * 16, 2 * kk));
#pragma unroll
        for (int m = 0; m < kRowAtoms; ++m) {
          mma_16x8x16<T::kElement>(s[m][2 * np], k_rows[m], q[0], q[1]);
          mma_16x8x16<T::kElement>(s[m][2 * np + 1], k_rows[m], q[2], q[3]);
          mma_16x8x16<T::kElement>(dp[m][2 * np], v_rows[m], d_o[0], d_o[1]);
          mma_16x8x16<T::kElement>(dp[m][2 * np + 1], v_rows[m], d_o[2], d_o[3]);
        }
      }
    }
  }

  // S^T becomes P^T and dP^T becomes dS^T. lse_log2 and delta: the step's kBlockM values (padding
  // rows: +inf and 0, so their P is 0); kv_row0, q_row0: the tiles' first rows in the sequence.
  __device__ __forceinline__ void softmax_gradient(Block& s, Block& dp, const float* lse_log2,
                                                   const float* delta, int kv_row0, int q_row0,
                                                   int causal_shift, float scale_log2) const {
    // Only tiles the diagonal crosses mask: key j hides from row i when j > i + causal_shift.
    const bool diagonal =
        T::kCausal && kv_row0 + first_row + T::kRowsPerWarp - 1 > q_row0 + causal_shift;
#pragma unroll
    for (int n = 0; n < kQAtoms; ++n) {
      const int column = n * 8 + 2 * quad();
      const float2 lse = *reinterpret_cast<const float2*>(lse_log2 + column);
      const float2 d = *reinterpret_cast<const float2*>(delta + column);
#pragma unroll
      for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float p = exp2f(s[m][n][e] * scale_log2 - (e % 2 ? lse.y : lse.x));
          if (diagonal) {
            const int key = kv_row0 + first_row + m * 16 + group() + (e / 2) * 8;
            const int row = q_row0 + column + (e % 2);
            if (key > row + causal_shift) p = 0.f;
          }
          s[m][n][e] = p;
          dp[m][n][e] = p * (dp[m][n][e] - (e % 2 ? d.y : d.x));
        }
    }
  }

  // accumulator += A B for A = `block` (P^T or dS^T, packed: two n8 slices of Q rows are one k16
  // A fragment) and B = `tile` (dO or Q) read transposed, this warp's columns of it.
  __device__ __forceinline__ void accumulate(float (&accumulator)[kRowAtoms][kAccumAtoms][4],
                                             const Block& block, const QTile& tile) const {
    const unsigned base = tile.shared_base();
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk) {
      unsigned a[kRowAtoms][4];
#pragma unroll
      for (int m = 0; m < kRowAtoms; ++m) {
        a[m][0] = pack_pair<T::kElement>(block[m][2 * kk][0], block[m][2 * kk][1]);
        a[m][1] = pack_pair<T::kElement>(block[m][2 * kk][2], block[m][2 * kk][3]);
        a[m][2] = pack_pair<T::kElement>(block[m][2 * kk + 1][0], block[m][2 * kk + 1][1]);
        a[m][3] = pack_pair<T::kElement>(block[m][2 * kk + 1][2], block[m][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < kAccumDim / 16; ++dp) {
        unsigned b[4];  // two n8 slices of columns, both k8 halves of the Q rows
        ldmatrix_x4_transposed(
            b, base + QTile::step_offset(q_trans_lane, kk * 16, first_accum / 8 + 2 * dp));
#pragma unroll
        for (int m = 0; m < kRowAtoms; ++m) {
          mma_16x8x16<T::kElement>(accumulator[m][2 * dp], a[m], b[0], b[1]);
          mma_16x8x16<T::kElement>(accumulator[m][2 * dp + 1], a[m], b[2], b[3]);
        }
      }
    }
  }

  // dS^T into the shared tile (K/V rows x Q rows), as 16-bit pairs; the first warp of a split
  // pair stores, the other holds the same values.
  __device__ __forceinline__ void store_ds(const Block& ds, const DsTile& tile) const {
    if (first_accum != 0) return;
#pragma unroll
    for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
      for (int n = 0; n < kQAtoms; ++n)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = first_row + m * 16 + group() + h * 8;
          *reinterpret_cast<unsigned*>(tile.element(row, n * 8 + 2 * quad())) =
              pack_pair<T::kElement>(ds[m][n][2 * h], ds[m][n][2 * h + 1]);
        }
  }

  // Chunk `chunk` of this warp's part of the step's dQ = dS K: rows dq_first_row.., columns
  // dq_first_column + chunk * kDqChunkColumns..
  using DqPart = float[kDqRowAtoms][kDqAtoms][4];
  __device__ __forceinline__ void dq_part(const DsTile& ds_tile, const KvTile& k_tile, int chunk,
                                          DqPart& dq) const {
    const int first_column = dq_first_column + chunk * kDqChunkColumns;
    const unsigned ds_base = ds_tile.shared_base();
    const unsigned k_base = k_tile.shared_base();
#pragma unroll
    for (int m = 0; m < kDqRowAtoms; ++m)
#pragma unroll
      for (int n = 0; n < kDqAtoms; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) dq[m][n][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      unsigned a[kDqRowAtoms][4];
#pragma unroll
      for (int m = 0; m < kDqRowAtoms; ++m) {
        ldmatrix_x4_transposed(a[m], ds_base + DsTile::step_offset(ds_trans_lane, kk * 16,
                                                                   (dq_first_row + m * 16) / 8));
      }
#pragma unroll
      for (int dp = 0; dp < kDqChunkColumns / 16; ++dp) {
        unsigned b[4];
        ldmatrix_x4_transposed(
            b, k_base + KvTile::step_offset(k_trans_lane, kk * 16, first_column / 8 + 2 * dp));
#pragma unroll
        for (int m = 0; m < kDqRowAtoms; ++m) {
          mma_16x8x16<T::kElement>(dq[m][2 * dp], a[m], b[0], b[1]);
          mma_16x8x16<T::kElement>(dq[m][2 * dp + 1], a[m], b[2], b[3]);
        }
      }
    }
  }

  // Chunk `chunk` into the accumulator: dq_rows is its row 0 of this step's Q tile (rows head_dim
  // apart); rows at or past `rows` (the tile's rows inside the sequence) are skipped. A lane holds
  // two columns of rows group() and group() + 8 per n8 slice; it swaps one row's pair with the
  // lane of the neighbouring quad, so that each adds four consecutive columns of one row (even
  // quads row group(), odd ones group() + 8) in one 16-byte reduction.
  __device__ __forceinline__ void add_dq(const DqPart& dq, int chunk, float* dq_rows,
                                         int rows) const {
    const int first_column = dq_first_column + chunk * kDqChunkColumns;
    const bool odd = quad() % 2 != 0;
#pragma unroll
    for (int m = 0; m < kDqRowAtoms; ++m) {
      const int row = dq_first_row + m * 16 + group() + (odd ? 8 : 0);
      float* line = dq_rows + static_cast<long long>(row) * kHeadDim;
#pragma unroll
      for (int n = 0; n < kDqAtoms; ++n) {
        const float* c = dq[m][n];
        // Every lane shuffles (no lane may skip before the exchange).
        const float given0 = __shfl_xor_sync(0xffffffffu, odd ? c[0] : c[2], 1);
        const float given1 = __shfl_xor_sync(0xffffffffu, odd ? c[1] : c[3], 1);
        const float four[4] = {odd ? given0 : c[0], odd ? given1 : c[1], odd ? c[2] : given0,
                               odd ? c[3] : given1};
        if (row < rows) reduce_add_four(line + first_column + n * 8 + 4 * (quad() / 2), four);
      }
    }
  }

  // `accumulator` (dK scaled by `scale`, or dV) as 16-bit pairs into `tile` (this warp's rows and
  // columns), for the coalesced store of the whole tile.
  __device__ __forceinline__ void stage(const float (&accumulator)[kRowAtoms][kAccumAtoms][4],
                                        float scale, const KvTile& tile) const {
#pragma unroll
    for (int m = 0; m < kRowAtoms; ++m)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = first_row + m * 16 + group() + h * 8;
#pragma unroll
        for (int n = 0; n < kAccumAtoms; ++n)
          *reinterpret_cast<unsigned*>(tile.element(row, first_accum + n * 8 + 2 * quad())) =
              pack_pair<T::kElement>(accumulator[m][n][2 * h] * scale,
                                     accumulator[m][n][2 * h + 1] * scale);
      }
  }
};

}  // namespace attention
}  // namespace swr
