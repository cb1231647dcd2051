#include "tuner/attention_backward/backward_reference_kernel.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "driver/device_resources.hpp"
#include "tuner/counters/helper_kernel_module.hpp"

namespace swr {
namespace {

constexpr const char* kModuleName = "swr_attention_backward_reference";
constexpr int kThreads = 128;

// Contiguous [B, H, S, D] tensors. Every kernel walks its keys (or query rows) in chunks of 128,
// one per thread: fp32 dot products, the chunk's weights staged in shared memory, then each
// thread sums its one or two output dims over the chunk in fp64.
constexpr const char* kSource = R"(
#define SWR_THREADS 128
#define SWR_MAX_HEAD_DIM 256

__device__ float swr_to_float(unsigned int bits, int bf16) {
  if (bf16) return __uint_as_float(bits << 16);
  float value;
  const unsigned short half = (unsigned short)bits;
  asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(half));
  return value;
}

__device__ unsigned short swr_from_float(float value, int bf16) {
  unsigned short bits;
  if (bf16) {
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(value));
  } else {
    asm("{ .reg .f16 h; cvt.rn.f16.f32 h, %1; mov.b16 %0, h; }" : "=h"(bits) : "f"(value));
  }
  return bits;
}

__device__ double swr_block_sum(double value, double* scratch) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = value;
  __syncthreads();
  value = 0;
  for (int warp = 0; warp < SWR_THREADS / 32; ++warp) value += scratch[warp];
  __syncthreads();
  return value;
}

__device__ float swr_block_max(float value, float* scratch) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = value;
  __syncthreads();
  value = scratch[0];
  for (int warp = 1; warp < SWR_THREADS / 32; ++warp) value = fmaxf(value, scratch[warp]);
  __syncthreads();
  return value;
}

__device__ float swr_dot(const float* row, const unsigned short* other, int head_dim, int bf16) {
  float dot = 0;
  for (int c = 0; c < head_dim; ++c) dot += row[c] * swr_to_float(other[c], bf16);
  return dot;
}

struct SwrShape {
  int heads, kv_heads, seq_q, seq_kv, head_dim, causal, causal_shift, bf16;
  float scale;  // 1 / sqrt(head_dim)
};

// One CTA per query row (flat (batch * heads + head) * seq_q + row): L, O (rounded into `o`) and
// delta = dO . O of the exact O.
extern "C" __global__ void __launch_bounds__(SWR_THREADS) swr_backward_reference_forward(
    const unsigned short* q, const unsigned short* k, const unsigned short* v,
    const unsigned short* d_o, SwrShape s, unsigned short* o, float* lse, float* delta) {
  __shared__ float q_row[SWR_MAX_HEAD_DIM];
  __shared__ double weights[SWR_THREADS];
  __shared__ float max_scratch[SWR_THREADS / 32];
  __shared__ double sum_scratch[SWR_THREADS / 32];
  const float negative_infinity = __int_as_float(0xff800000);
  const long long row = blockIdx.x;
  const long long batch_head = row / s.seq_q;
  const int query = (int)(row - batch_head * s.seq_q);
  const long long batch = batch_head / s.heads;
  const int kv_head = (int)(batch_head - batch * s.heads) / (s.heads / s.kv_heads);
  const long long kv_base = (batch * s.kv_heads + kv_head) * (long long)s.seq_kv * s.head_dim;
  for (int c = threadIdx.x; c < s.head_dim; c += SWR_THREADS)
    q_row[c] = swr_to_float(q[row * s.head_dim + c], s.bf16) * s.scale;
  __syncthreads();
  const int visible = s.causal ? max(0, min(s.seq_kv, query + 1 + s.causal_shift)) : s.seq_kv;
  float running_max = negative_infinity;
  double running_sum = 0, acc_low = 0, acc_high = 0;
  const int low = threadIdx.x, high = threadIdx.x + SWR_THREADS;
  for (int start = 0; start < visible; start += SWR_THREADS) {
    const int key = start + threadIdx.x;
    const float score = key < visible
        ? swr_dot(q_row, k + kv_base + (long long)key * s.head_dim, s.head_dim, s.bf16)
        : negative_infinity;
    const float new_max = fmaxf(running_max, swr_block_max(score, max_scratch));
    const double weight = key < visible ? exp((double)score - new_max) : 0.0;
    weights[threadIdx.x] = weight;
    const double rescale = exp((double)running_max - new_max);
    running_sum = running_sum * rescale + swr_block_sum(weight, sum_scratch);
    acc_low *= rescale;
    acc_high *= rescale;
    const int count = min(SWR_THREADS, visible - start);
    for (int t = 0; t < count; ++t) {
      const unsigned short* value_row = v + kv_base + (long long)(start + t) * s.head_dim;
      if (low < s.head_dim) acc_low += weights[t] * swr_to_float(value_row[low], s.bf16);
      if (high < s.head_dim) acc_high += weights[t] * swr_to_float(value_row[high], s.bf16);
    }
    running_max = new_max;
    __syncthreads();
  }
  const double inverse = visible > 0 ? 1.0 / running_sum : 0.0;
  double dot = 0;
  if (low < s.head_dim) {
    const double out = acc_low * inverse;
    o[row * s.head_dim + low] = swr_from_float((float)out, s.bf16);
    dot += out * swr_to_float(d_o[row * s.head_dim + low], s.bf16);
  }
  if (high < s.head_dim) {
    const double out = acc_high * inverse;
    o[row * s.head_dim + high] = swr_from_float((float)out, s.bf16);
    dot += out * swr_to_float(d_o[row * s.head_dim + high], s.bf16);
  }
  dot = swr_block_sum(dot, sum_scratch);
  if (threadIdx.x == 0) {
    lse[row] = visible > 0 ? (float)(running_max + log(running_sum)) : __int_as_float(0x7f800000);
    delta[row] = (float)dot;
  }
}

// One CTA per sampled query row: dQ = scale * sum_j P_ij (dO_i . V_j - delta_i) K_j.
extern "C" __global__ void __launch_bounds__(SWR_THREADS) swr_backward_reference_dq(
    const unsigned short* q, const unsigned short* k, const unsigned short* v,
    const unsigned short* d_o, const float* lse, const float* delta, const long long* rows,
    SwrShape s, double* out) {
  __shared__ float q_row[SWR_MAX_HEAD_DIM];
  __shared__ float do_row[SWR_MAX_HEAD_DIM];
  __shared__ double weights[SWR_THREADS];
  const long long row = rows[blockIdx.x];
  const long long batch_head = row / s.seq_q;
  const int query = (int)(row - batch_head * s.seq_q);
  const long long batch = batch_head / s.heads;
  const int kv_head = (int)(batch_head - batch * s.heads) / (s.heads / s.kv_heads);
  const long long kv_base = (batch * s.kv_heads + kv_head) * (long long)s.seq_kv * s.head_dim;
  for (int c = threadIdx.x; c < s.head_dim; c += SWR_THREADS) {
    q_row[c] = swr_to_float(q[row * s.head_dim + c], s.bf16) * s.scale;
    do_row[c] = swr_to_float(d_o[row * s.head_dim + c], s.bf16);
  }
  __syncthreads();
  const int visible = s.causal ? max(0, min(s.seq_kv, query + 1 + s.causal_shift)) : s.seq_kv;
  const double l = lse[row], d = delta[row];
  double acc_low = 0, acc_high = 0;
  const int low = threadIdx.x, high = threadIdx.x + SWR_THREADS;
  for (int start = 0; start < visible; start += SWR_THREADS) {
    const int key = start + threadIdx.x;
    double ds = 0;
    if (key < visible) {
      const long long at = kv_base + (long long)key * s.head_dim;
      const double p = exp((double)swr_dot(q_row, k + at, s.head_dim, s.bf16) - l);
      ds = p * ((double)swr_dot(do_row, v + at, s.head_dim, s.bf16) - d);
    }
    weights[threadIdx.x] = ds;
    __syncthreads();
    const int count = min(SWR_THREADS, visible - start);
    for (int t = 0; t < count; ++t) {
      const unsigned short* key_row = k + kv_base + (long long)(start + t) * s.head_dim;
      if (low < s.head_dim) acc_low += weights[t] * swr_to_float(key_row[low], s.bf16);
      if (high < s.head_dim) acc_high += weights[t] * swr_to_float(key_row[high], s.bf16);
    }
    __syncthreads();
  }
  double* out_row = out + (long long)blockIdx.x * s.head_dim;
  if (low < s.head_dim) out_row[low] = acc_low * s.scale;
  if (high < s.head_dim) out_row[high] = acc_high * s.scale;
}

// One CTA per sampled K/V row, over its group's query heads and the query rows that see it:
// dV = sum_i P_ij dO_i, dK = scale * sum_i P_ij (dO_i . V_j - delta_i) Q_i. Outputs [rows, D]
// each, dK first.
extern "C" __global__ void __launch_bounds__(SWR_THREADS) swr_backward_reference_dkv(
    const unsigned short* q, const unsigned short* k, const unsigned short* v,
    const unsigned short* d_o, const float* lse, const float* delta, const long long* rows,
    SwrShape s, double* dk_out, double* dv_out) {
  __shared__ float k_row[SWR_MAX_HEAD_DIM];
  __shared__ float v_row[SWR_MAX_HEAD_DIM];
  __shared__ double p_weights[SWR_THREADS];
  __shared__ double ds_weights[SWR_THREADS];
  const long long row = rows[blockIdx.x];
  const long long batch_kv_head = row / s.seq_kv;
  const int key = (int)(row - batch_kv_head * s.seq_kv);
  const long long batch = batch_kv_head / s.kv_heads;
  const int kv_head = (int)(batch_kv_head - batch * s.kv_heads);
  const int group = s.heads / s.kv_heads;
  for (int c = threadIdx.x; c < s.head_dim; c += SWR_THREADS) {
    k_row[c] = swr_to_float(k[row * s.head_dim + c], s.bf16) * s.scale;
    v_row[c] = swr_to_float(v[row * s.head_dim + c], s.bf16);
  }
  __syncthreads();
  // Row i sees key j when j <= i + causal_shift: the rows from j - causal_shift on.
  const int first = s.causal ? max(0, key - s.causal_shift) : 0;
  double dk_low = 0, dk_high = 0, dv_low = 0, dv_high = 0;
  const int low = threadIdx.x, high = threadIdx.x + SWR_THREADS;
  for (int h = 0; h < group; ++h) {
    const long long head_row0 = (batch * s.heads + (long long)kv_head * group + h) * s.seq_q;
    for (int start = first; start < s.seq_q; start += SWR_THREADS) {
      const int query = start + threadIdx.x;
      double p = 0, ds = 0;
      if (query < s.seq_q) {
        const long long at = (head_row0 + query) * s.head_dim;
        p = exp((double)swr_dot(k_row, q + at, s.head_dim, s.bf16) - lse[head_row0 + query]);
        ds = p * ((double)swr_dot(v_row, d_o + at, s.head_dim, s.bf16) - delta[head_row0 + query]);
      }
      p_weights[threadIdx.x] = p;
      ds_weights[threadIdx.x] = ds;
      __syncthreads();
      const int count = min(SWR_THREADS, s.seq_q - start);
      for (int t = 0; t < count; ++t) {
        const long long at = (head_row0 + start + t) * s.head_dim;
        if (low < s.head_dim) {
          dv_low += p_weights[t] * swr_to_float(d_o[at + low], s.bf16);
          dk_low += ds_weights[t] * swr_to_float(q[at + low], s.bf16);
        }
        if (high < s.head_dim) {
          dv_high += p_weights[t] * swr_to_float(d_o[at + high], s.bf16);
          dk_high += ds_weights[t] * swr_to_float(q[at + high], s.bf16);
        }
      }
      __syncthreads();
    }
  }
  const long long out = (long long)blockIdx.x * s.head_dim;
  if (low < s.head_dim) {
    dk_out[out + low] = dk_low * s.scale;
    dv_out[out + low] = dv_low;
  }
  if (high < s.head_dim) {
    dk_out[out + high] = dk_high * s.scale;
    dv_out[out + high] = dv_high;
  }
}
)";

struct Shape {
  int heads, kv_heads, seq_q, seq_kv, head_dim, causal, causal_shift, bf16;
  float scale;
};

Shape shape_of(const AttentionProblem& problem) {
  if (problem.head_dim % 8 != 0 || problem.head_dim > 256 || problem.head_dim <= 0) {
    throw std::invalid_argument("GPU attention backward reference: head dim " +
                                std::to_string(problem.head_dim) +
                                " not supported (multiples of 8 up to 256)");
  }
  return {problem.heads,
          problem.kv_head_count(),
          problem.seq_q,
          problem.seq_kv,
          problem.head_dim,
          problem.causal ? 1 : 0,
          problem.causal_shift(),
          problem.dtype == DataType::bf16 ? 1 : 0,
          static_cast<float>(1.0 / std::sqrt(static_cast<double>(problem.head_dim)))};
}

const void* pointer(CUdeviceptr address) {
  return reinterpret_cast<const void*>(address);
}

}  // namespace

BackwardReferenceKernel::BackwardReferenceKernel(const DeviceContext& context)
    : driver_(CudaDriver::get()),
      module_(
          std::make_unique<HelperKernelModule>(driver_, context.device(), kModuleName, kSource)),
      forward_(module_->function("swr_backward_reference_forward")),
      dq_(module_->function("swr_backward_reference_dq")),
      dkv_(module_->function("swr_backward_reference_dkv")) {}

BackwardReferenceKernel::~BackwardReferenceKernel() = default;

void BackwardReferenceKernel::forward(const AttentionProblem& problem,
                                      const BackwardReferenceBuffers& buffers,
                                      CUstream stream) const {
  const Shape shape = shape_of(problem);
  const unsigned rows =
      static_cast<unsigned>(static_cast<long long>(problem.batch) * problem.heads * problem.seq_q);
  module_->launch(forward_, rows, kThreads, stream, pointer(buffers.q), pointer(buffers.k),
                  pointer(buffers.v), pointer(buffers.d_o), shape,
                  reinterpret_cast<void*>(buffers.o), reinterpret_cast<void*>(buffers.lse),
                  reinterpret_cast<void*>(buffers.delta));
}

std::vector<double> BackwardReferenceKernel::dq_rows(const AttentionProblem& problem,
                                                     const BackwardReferenceBuffers& buffers,
                                                     const std::vector<std::int64_t>& q_rows,
                                                     CUstream stream) const {
  const Shape shape = shape_of(problem);
  std::vector<double> result(q_rows.size() * problem.head_dim);
  if (q_rows.empty()) return result;
  DeviceAllocation rows(driver_, q_rows.size() * sizeof(std::int64_t));
  DeviceAllocation out(driver_, result.size() * sizeof(double));
  SWR_CU(driver_,
         cuMemcpyHtoD(rows.pointer(), q_rows.data(), q_rows.size() * sizeof(std::int64_t)));
  module_->launch(dq_, static_cast<unsigned>(q_rows.size()), kThreads, stream, pointer(buffers.q),
                  pointer(buffers.k), pointer(buffers.v), pointer(buffers.d_o),
                  pointer(buffers.lse), pointer(buffers.delta), pointer(rows.pointer()), shape,
                  reinterpret_cast<void*>(out.pointer()));
  SWR_CU(driver_, cuStreamSynchronize(stream));
  SWR_CU(driver_, cuMemcpyDtoH(result.data(), out.pointer(), result.size() * sizeof(double)));
  return result;
}

void BackwardReferenceKernel::dkv_rows(const AttentionProblem& problem,
                                       const BackwardReferenceBuffers& buffers,
                                       const std::vector<std::int64_t>& kv_rows, CUstream stream,
                                       std::vector<double>& dk, std::vector<double>& dv) const {
  const Shape shape = shape_of(problem);
  dk.assign(kv_rows.size() * problem.head_dim, 0.0);
  dv.assign(kv_rows.size() * problem.head_dim, 0.0);
  if (kv_rows.empty()) return;
  DeviceAllocation rows(driver_, kv_rows.size() * sizeof(std::int64_t));
  DeviceAllocation dk_out(driver_, dk.size() * sizeof(double));
  DeviceAllocation dv_out(driver_, dv.size() * sizeof(double));
  SWR_CU(driver_,
         cuMemcpyHtoD(rows.pointer(), kv_rows.data(), kv_rows.size() * sizeof(std::int64_t)));
  module_->launch(dkv_, static_cast<unsigned>(kv_rows.size()), kThreads, stream, pointer(buffers.q),
                  pointer(buffers.k), pointer(buffers.v), pointer(buffers.d_o),
                  pointer(buffers.lse), pointer(buffers.delta), pointer(rows.pointer()), shape,
                  reinterpret_cast<void*>(dk_out.pointer()),
                  reinterpret_cast<void*>(dv_out.pointer()));
  SWR_CU(driver_, cuStreamSynchronize(stream));
  SWR_CU(driver_, cuMemcpyDtoH(dk.data(), dk_out.pointer(), dk.size() * sizeof(double)));
  SWR_CU(driver_, cuMemcpyDtoH(dv.data(), dv_out.pointer(), dv.size() * sizeof(double)));
}

}  // namespace swr
