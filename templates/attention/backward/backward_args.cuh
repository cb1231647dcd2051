// What the attention backward's kernels receive at launch besides their tensors: the shape that
// is not compiled in, where the causal diagonal lies, the tensors' strides, and where the
// workspace's parts lie. One definition for NVRTC and the host compiler (the launcher), as
// attention_args.cuh is for the forward: cuLaunchKernel copies the block byte for byte.
//
// The backward of O = softmax(Q K^T * scale) V, given dO and the forward's per-row log-sum-exp L
// (natural log, [B, H, S_q] fp32), is, with P = exp(S * scale - L) recomputed from Q, K and L:
//   dV = P^T dO,  dP = dO V^T,  dS = P o (dP - delta) with delta = rowsum(dO o O),
//   dK = scale * dS^T Q,  dQ = scale * dS K.
// Three kernels of one module run in order (workspace_passes.cuh, backward_kernel.cuh):
//   preprocess  per query row: delta, L * log2(e), the row's dQ accumulator zeroed, and the
//               deterministic mode's semaphores zeroed; padding rows get L = +inf (P = 0); and
//               the split parts' arrivals and sums zeroed.
//   main        a CTA owns a K/V tile and walks the Q tiles that see it: dK and dV in registers,
//               dQ added into the fp32 accumulator (atomically, or in K/V-tile order).
//   postprocess dQ = scale * accumulator, in the input dtype at dQ's strides.
#pragma once

#include "attention/attention_args.cuh"
#include "common/host_device.cuh"

namespace swr {
namespace attention {

// The workspace (fp32 and int words, the caller's or the runtime's), in this order:
//   lse_log2 [B*H][seq_q_padded]  L * log2(e), +inf in padding rows
//   delta    [B*H][seq_q_padded]  rowsum(dO o O), 0 in padding rows
//   dq_accum [B*H][seq_q_padded][D]  fp32 dQ / scale, summed over K/V tiles; each Q tile a
//                                 block laid out as dq_accumulator_layout.cuh says
//   semaphores [B*H][q_tiles]     deterministic dQ: how many K/V tiles have added to a Q tile
//   split_arrivals [kBackwardSplitUnits * CTAs a unit * 2]  how many parts of a split unit
//                                 (backward_schedule.cuh's last wave) a consumer warpgroup's dK
//                                 and dV have added
//   split_sums [same]{dK, dV}[64 * HeadDim]  their sums (sm90/backward_split_sums.cuh)
// seq_q_padded = q_tiles * block_m, so that a Q tile's rows of both lists are always in bounds.
struct BackwardWorkspace {
  float* lse_log2;
  float* delta;
  float* dq_accum;
  int* semaphores;
  int* split_arrivals;  // null where nothing is split; split_sums follows it
  float* split_sums;
};

struct BackwardArgs {
  int batch;
  int heads;     // query heads
  int kv_heads;  // heads % kv_heads == 0
  int seq_q;
  int seq_kv;
  int causal_shift;  // query row i sees keys j <= i + causal_shift (attention_args.cuh)
  int seq_q_padded;  // q_tiles * block_m of the main kernel
  float scale;       // softmax scale: dK and dQ carry it
  float scale_log2;  // scale * log2(e)
  int wave_size;     // CTAs resident at once (grid-mode sawtooth flips on it)
  int q_tiles;       // seq_q in block_m rows of the main kernel
  int kv_tiles;      // seq_kv in block_n rows
  int group_heads;   // heads / kv_heads: the query heads a K/V head serves
  int split_whole;   // the schedule's last wave (BackwardLastWave): units handed out whole,
  int split_parts;   // and the parts of each later one
  int split_words;   // 16-byte words from split_arrivals on that the preprocess zeroes
  int split_padding;
  int* tile_counter;  // dynamic persistence: one int, 0 at launch
  BackwardWorkspace workspace;
  // Element strides of the [B, H, S, D] views (dK and dV: K/V heads).
  TensorStrides q, k, v, o, d_o, dq, dk, dv;
};
static_assert(sizeof(BackwardWorkspace) == 48 && sizeof(BackwardArgs) == 320,
              "the launch-argument block has one layout on host and device");

// The preprocess and postprocess (workspace_passes.cuh) run CTAs of kPassThreads threads, each
// query row on pass_row_threads lanes of one warp (the first head_dim / 8 take 8 columns each):
// the launcher sizes their grids by the same numbers.
constexpr int kPassThreads = 256;
SWR_HOST_DEVICE constexpr int pass_row_threads(int head_dim) {
  return head_dim / 8 <= 4 ? 4 : head_dim / 8 <= 8 ? 8 : head_dim / 8 <= 16 ? 16 : 32;
}
// The postprocess's CTAs for `head_count` = batch * heads query heads: one a part of a Q tile where
// the accumulator is in `parts` parts a tile (DqFragmentLayout), else kPassThreads /
// pass_row_threads rows each (DqRowLayout: parts = 0).
SWR_HOST_DEVICE constexpr long long backward_postprocess_blocks(int parts, long long head_count,
                                                                int seq_q, int q_tiles,
                                                                int head_dim) {
  if (parts > 0) return head_count * q_tiles * parts;
  const long long rows_per_block = kPassThreads / pass_row_threads(head_dim);
  return (head_count * seq_q + rows_per_block - 1) / rows_per_block;
}

// Rows of the workspace's lists for query head (batch, head).
SWR_HOST_DEVICE long long workspace_row(const BackwardArgs& args, int batch, int head) {
  return (static_cast<long long>(batch) * args.heads + head) * args.seq_q_padded;
}
// Element offset of row `row` of query head (batch, head) in the dQ accumulator: for the first
// row of a Q tile, where the tile's block starts.
SWR_HOST_DEVICE long long dq_accum_offset(const BackwardArgs& args, int batch, int head, int row,
                                          int head_dim) {
  return ((static_cast<long long>(batch) * args.heads + head) * args.seq_q_padded + row) * head_dim;
}
// The deterministic dQ's semaphore of Q tile `q_tile` of query head (batch, head); `q_tiles` is
// args.q_tiles (a kernel passes the copy it holds in a register). In 32 bits (the registers of the
// warp-specialized kernel's dQ writer): there are fewer Q tiles than rows of the dQ accumulator.
SWR_HOST_DEVICE int* dq_semaphore(const BackwardArgs& args, int batch, int head, int q_tile,
                                  int q_tiles) {
  return args.workspace.semaphores +
         (static_cast<unsigned>(batch * args.heads + head) * q_tiles + q_tile);
}

}  // namespace attention
}  // namespace swr
