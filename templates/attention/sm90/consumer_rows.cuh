// What one consumer warpgroup thread holds for its two Q rows: the online softmax state, the
// masking, and P as the A operand of O += P V: packed in registers (RS form) or stored to shared
// memory (SS form). The wgmma m64nN accumulator of a warp is a stack of m16n8 C fragments
// (row = 16*warp + lane/4 + 8*(i/2), col = 8*j + 2*(lane%4) + i%2 for register 4*j + i), the
// layout of the mma.sync path's Scores[1][N/8][4], so this is warp_rows.cuh's math with
// kRowAtoms = 1; the rescale of O is split from the softmax so that it can wait for an O += P V
// still in flight (intra-warpgroup overlap).
#pragma once

#include "attention/row_statistics.cuh"
#include "common/element.cuh"
#include "common/sm90/tma.cuh"

namespace swr {
namespace attention {
namespace sm90 {

// 2^x on the MUFU unit without exp2f's range fix-ups (what --use_fast_math gives FA3):
// ex2.approx.ftz maps -inf to +0, which the masking relies on.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

template <class T>
struct ConsumerRows {
  static constexpr int kBlockN = T::kBlockN;
  static constexpr int kHeadDim = T::kHeadDim;
  static constexpr int kScoreRegs = kBlockN / 2;  // S accumulator of m64nBlockN
  static constexpr int kOutputRegs = kHeadDim / 2;
  static constexpr int kPRegs = kBlockN / 4;  // P as 16-bit pairs, 4 per k16 step
  // O's rows as 16-byte chunks, four quad lanes' words in one lane (store below).
  static constexpr bool kWideStores = kHeadDim % 32 == 0;

  int lane;
  int first_row;     // of this thread's warp, within the Q tile
  float row_max[2];  // max P is taken against (raised_max), rows lane/4 and lane/4 + 8
  float row_sum[2];  // this lane's partial sums, reduced over the quad at the end

  __device__ __forceinline__ int group() const { return lane / 4; }
  __device__ __forceinline__ int quad() const { return lane % 4; }

  __device__ __forceinline__ void start(float* output) {
#pragma unroll
    for (int i = 0; i < kOutputRegs; ++i) output[i] = 0.f;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      row_max[h] = negative_infinity();
      row_sum[h] = 0.f;
    }
  }

  // -inf for keys at or past seq_kv and, for causal, keys past the row's diagonal: row i sees keys
  // j <= i + causal_shift (0: top-left aligned; seq_kv - seq_q: bottom-right).
  __device__ __forceinline__ void mask(float* s, int q_row0, int kv_col0, int seq_kv,
                                       int causal_shift) const {
    const bool tail = kv_col0 + kBlockN > seq_kv;
    const bool diagonal = T::kCausal && kv_col0 + kBlockN - 1 > q_row0 + first_row + causal_shift;
    if (!tail && !diagonal) return;
#pragma unroll
    for (int n = 0; n < kBlockN / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = q_row0 + first_row + group() + (e / 2) * 8;
        const int col = kv_col0 + n * 8 + 2 * quad() + (e % 2);
        if (col >= seq_kv || (T::kCausal && col > row + causal_shift))
          s[4 * n + e] = negative_infinity();
      }
  }

  // Online softmax: the max raised if the tile passes it (raised_max); S becomes P = 2^(S*c - max);
  // returns in `rescale` the factor the accumulated O must be multiplied by. Returns whether any
  // row's max moved.
  __device__ __forceinline__ bool softmax(float* s, float scale_log2, float (&rescale)[2]) {
    bool max_moved = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tile_max = negative_infinity();
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n)
        tile_max = fmaxf(tile_max, fmaxf(s[4 * n + 2 * h], s[4 * n + 2 * h + 1]));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      const float new_max = raised_max(row_max[h], tile_max * scale_log2);
      max_moved |= new_max != row_max[h];
      // A row with no visible key yet keeps max = -inf; subtract 0 then, not -inf (NaN).
      const float reference = new_max == negative_infinity() ? 0.f : new_max;
      rescale[h] = exp2_approx(row_max[h] - reference);
      row_max[h] = new_max;
      float sum = 0.f;
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const float p = exp2_approx(fmaf(s[4 * n + e], scale_log2, -reference));
          s[4 * n + e] = p;
          sum += p;
        }
      row_sum[h] = row_sum[h] * rescale[h] + sum;
    }
    return __any_sync(0xffffffffu, max_moved);
  }

  __device__ __forceinline__ static void rescale_output(float* output, const float (&rescale)[2]) {
#pragma unroll
    for (int n = 0; n < kHeadDim / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) output[4 * n + e] *= rescale[e / 2];
  }

  // Two n8 slices of P are one k16 A fragment (the mma.sync m16n8k16 A layout wgmma RS reads).
  __device__ __forceinline__ static void pack_p(const float* s, unsigned* p) {
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      p[4 * kk + 0] = pack_pair<T::kElement>(s[8 * kk + 0], s[8 * kk + 1]);
      p[4 * kk + 1] = pack_pair<T::kElement>(s[8 * kk + 2], s[8 * kk + 3]);
      p[4 * kk + 2] = pack_pair<T::kElement>(s[8 * kk + 4], s[8 * kk + 5]);
      p[4 * kk + 3] = pack_pair<T::kElement>(s[8 * kk + 6], s[8 * kk + 7]);
    }
  }

  // P to the warpgroup's P tile in shared memory (Traits::kPChunkBytes chunks of 64 keys): this
  // thread's pairs go to row r (of the warpgroup's 64), 16-byte unit u of the chunk's 128-byte
  // line, placed at unit u ^ (r % 8) -- the 128B swizzle the K-major wgmma descriptor reads. The
  // eight rows a warp writes at once land in eight different units: no bank conflicts. r % 8 is
  // group() for both of the thread's rows, so one 32-bit shared address plus immediates and one
  // XOR per store do (generic 64-bit addresses per store spilled at 160 registers). Then the
  // fence that makes these generic-proxy writes visible to wgmma (the async proxy).
  __device__ __forceinline__ void store_p(const float* s, unsigned char* p_tile) const {
    const unsigned row_address =
        swr::sm90::smem_u32(p_tile) + (first_row % 64 + group()) * 128 + quad() * 4;
    const unsigned unit_xor = group() * 16;
#pragma unroll
    for (int n = 0; n < kBlockN / 8; ++n)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const unsigned address =
            row_address + (n / 8) * T::kPChunkBytes + h * 8 * 128 + (((n % 8) * 16) ^ unit_xor);
        const unsigned pair = pack_pair<T::kElement>(s[4 * n + 2 * h], s[4 * n + 2 * h + 1]);
        asm volatile("st.shared.b32 [%0], %1;" ::"r"(address), "r"(pair) : "memory");
      }
    swr::sm90::fence_proxy_async_shared();
  }

  // O / l as 16-bit pairs to global memory, rows `row_stride` elements apart from o_head (rows past
  // seq_q are not written; a row that saw no key has l = 0 and is written 0), and when lse_rows
  // (row 0 of the head's log-sum-exp) is not null, each row's log-sum-exp. Where the rows are
  // 16-byte aligned, 16 bytes a lane: the 4-byte pairs wrote each 32-byte sector in two halves,
  // and the forward took 0.2-3% longer on the H200 (bench/results/attention-backward-ws-h200/
  // forward-stores-2026-11-29).
  __device__ __forceinline__ void store(const float* output, unsigned short* o_head,
                                        long long row_stride, int q_row0, int seq_q,
                                        float* lse_rows) const {
    const bool wide = ((reinterpret_cast<unsigned long long>(o_head) | (row_stride * 2)) & 15) == 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = row_sum[h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const float inverse = sum > 0.f ? 1.f / sum : 0.f;
      const int row = q_row0 + first_row + group() + h * 8;
      if (lse_rows != nullptr && quad() == 0 && row < seq_q) {
        lse_rows[row] = log_sum_exp(row_max[h], sum);
      }
      unsigned words[kHeadDim / 8];  // this lane's columns 8n + 2 quad() (+1) of the row
#pragma unroll
      for (int n = 0; n < kHeadDim / 8; ++n)
        words[n] = pack_pair<T::kElement>(output[4 * n + 2 * h] * inverse,
                                          output[4 * n + 2 * h + 1] * inverse);
      unsigned short* row_start = o_head + row * row_stride;
      if (kWideStores && wide) {
        // Each 16-byte chunk of four quad lanes' words gathered in one lane: 16-byte stores that
        // fill whole sectors, instead of 4-byte ones that write each sector in two halves.
#pragma unroll
        for (int g = 0; g < kHeadDim / 32; ++g) {
          const uint4 chunk = gather_chunk(words + 4 * g);
          if (row < seq_q) reinterpret_cast<uint4*>(row_start)[4 * g + quad()] = chunk;
        }
      } else if (row < seq_q) {
        unsigned* out_row = reinterpret_cast<unsigned*>(row_start);
#pragma unroll
        for (int n = 0; n < kHeadDim / 8; ++n) out_row[n * 4 + quad()] = words[n];
      }
    }
  }

  // Quad lane q holds words M[q][k] (k = 0..3: its word of chunk k, columns 8k + 2q, 8k + 2q + 1);
  // returns chunk q's four words M[0..3][q] by two butterfly exchanges (lanes q ^ 2, then q ^ 1),
  // with selects instead of register indices that depend on the lane.
  __device__ __forceinline__ uint4 gather_chunk(const unsigned* m) const {
    const bool b0 = quad() & 1, b1 = quad() & 2;
    // Keep chunks 2 b1 and 2 b1 + 1; give the partner its two.
    const unsigned keep0 = b1 ? m[2] : m[0], keep1 = b1 ? m[3] : m[1];
    const unsigned other0 = __shfl_xor_sync(0xffffffffu, b1 ? m[0] : m[2], 2);
    const unsigned other1 = __shfl_xor_sync(0xffffffffu, b1 ? m[1] : m[3], 2);
    // Of those, keep chunk q = 2 b1 + b0 (this lane's word and q ^ 2's); give q ^ 1 its chunk.
    const unsigned self = b0 ? keep1 : keep0, across = b0 ? other1 : other0;
    const unsigned next = __shfl_xor_sync(0xffffffffu, b0 ? keep0 : keep1, 1);        // from q ^ 1
    const unsigned diagonal = __shfl_xor_sync(0xffffffffu, b0 ? other0 : other1, 1);  // from q ^ 3
    // Word j came from lane j: self (j = q), next (q ^ 1), across (q ^ 2), diagonal (q ^ 3).
    const unsigned low_even = b0 ? next : self, high_even = b0 ? diagonal : across;
    const unsigned low_odd = b0 ? self : next, high_odd = b0 ? across : diagonal;
    return make_uint4(b1 ? high_even : low_even, b1 ? high_odd : low_odd, b1 ? low_even : high_even,
                      b1 ? low_odd : high_odd);
  }
};

}  // namespace sm90
}  // namespace attention
}  // namespace swr
