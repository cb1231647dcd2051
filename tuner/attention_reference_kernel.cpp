#include "tuner/attention_reference_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

#include "driver/device_resources.hpp"
#include "tuner/counters/helper_kernel_module.hpp"

namespace swr {
namespace {

constexpr const char* kModuleName = "swr_attention_reference";
constexpr int kReferenceThreads = 128;
constexpr int kMaxHeadDim = 256;
constexpr int kTileBoundary = 64;  // every block_m of the space is a multiple of it

// One CTA per sampled row. Keys go in chunks of 128, one per thread: fp32 score (the scale and
// log2(e) folded into q), online softmax across chunks, the weighted sum of V in fp64 with each
// thread owning one or two output dims.
constexpr const char* kReferenceSource = R"(
#define SWR_THREADS 128
#define SWR_MAX_HEAD_DIM 256

__device__ float swr_to_float(unsigned int bits, int bf16) {
  if (bf16) return __uint_as_float(bits << 16);
  float value;
  const unsigned short half = (unsigned short)bits;
  asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(half));
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
  return value;
}

__device__ double swr_block_sum(double value, double* scratch) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = value;
  __syncthreads();
  value = 0;
  for (int warp = 0; warp < SWR_THREADS / 32; ++warp) value += scratch[warp];
  return value;
}

// Element strides {batch, head, seq} of one [B, H, S, D] tensor (D's stride is 1).
struct SwrStrides {
  long long batch, head, seq;
};

extern "C" __global__ void __launch_bounds__(SWR_THREADS) swr_reference_rows(
    const unsigned short* q, const unsigned short* k, const unsigned short* v,
    const long long* rows, int seq_q, int seq_kv, int head_dim, int causal, int bf16,
    float scale_log2, double* out, int heads, int kv_heads, int causal_shift, SwrStrides q_strides,
    SwrStrides k_strides, SwrStrides v_strides) {
  __shared__ float q_row[SWR_MAX_HEAD_DIM];
  __shared__ float weights[SWR_THREADS];
  __shared__ float max_scratch[SWR_THREADS / 32];
  __shared__ double sum_scratch[SWR_THREADS / 32];
  const float negative_infinity = __int_as_float(0xff800000);

  // rows[] holds (batch * heads + head) * seq_q + query; query head h reads K/V head
  // h / (heads / kv_heads) of its batch.
  const long long row = rows[blockIdx.x];
  const long long batch_head = row / seq_q;
  const int query = (int)(row - batch_head * seq_q);
  const long long batch = batch_head / heads;
  const int head = (int)(batch_head - batch * heads);
  const int kv_head = head / (heads / kv_heads);
  const unsigned short* q_source =
      q + batch * q_strides.batch + head * q_strides.head + query * q_strides.seq;
  const unsigned short* keys = k + batch * k_strides.batch + kv_head * k_strides.head;
  const unsigned short* values = v + batch * v_strides.batch + kv_head * v_strides.head;
  for (int c = threadIdx.x; c < head_dim; c += SWR_THREADS)
    q_row[c] = swr_to_float(q_source[c], bf16) * scale_log2;
  __syncthreads();

  // Query row i sees keys j <= i + causal_shift; a row that sees none gives 0.
  const int visible = causal ? max(0, min(seq_kv, query + 1 + causal_shift)) : seq_kv;
  const int dim_low = threadIdx.x;
  const int dim_high = threadIdx.x + SWR_THREADS;
  float running_max = negative_infinity;
  double running_sum = 0, acc_low = 0, acc_high = 0;
  for (int start = 0; start < visible; start += SWR_THREADS) {
    const int key = start + threadIdx.x;
    float score = negative_infinity;
    if (key < visible) {
      const uint4* key_words = (const uint4*)(keys + (long long)key * k_strides.seq);
      float dot = 0;
      for (int word = 0; word < head_dim / 8; ++word) {
        const uint4 packed = key_words[word];
        const unsigned int parts[4] = {packed.x, packed.y, packed.z, packed.w};
        for (int p = 0; p < 4; ++p) {
          dot += q_row[word * 8 + 2 * p] * swr_to_float(parts[p] & 0xffffu, bf16);
          dot += q_row[word * 8 + 2 * p + 1] * swr_to_float(parts[p] >> 16, bf16);
        }
      }
      score = dot;
    }
    const float new_max = fmaxf(running_max, swr_block_max(score, max_scratch));
    const float weight = key < visible ? exp2f(score - new_max) : 0.0f;
    weights[threadIdx.x] = weight;
    const double rescale = exp2f(running_max - new_max);
    running_sum = running_sum * rescale + swr_block_sum(weight, sum_scratch);
    acc_low *= rescale;
    acc_high *= rescale;
    const int count = min(SWR_THREADS, visible - start);
    const unsigned short* value_row = values + (long long)start * v_strides.seq;
    for (int t = 0; t < count; ++t, value_row += v_strides.seq) {
      const double w = weights[t];
      if (dim_low < head_dim) acc_low += w * swr_to_float(value_row[dim_low], bf16);
      if (dim_high < head_dim) acc_high += w * swr_to_float(value_row[dim_high], bf16);
    }
    running_max = new_max;
    __syncthreads();
  }
  double* out_row = out + (long long)blockIdx.x * head_dim;
  const double inverse = visible > 0 ? 1.0 / running_sum : 0.0;
  if (dim_low < head_dim) out_row[dim_low] = acc_low * inverse;
  if (dim_high < head_dim) out_row[dim_high] = acc_high * inverse;
}

extern "C" __global__ void swr_gather_rows(const unsigned short* o, const long long* rows,
                                           int head_dim, int seq_q, int heads,
                                           SwrStrides o_strides, unsigned short* out) {
  const long long row = rows[blockIdx.x];
  const long long batch_head = row / seq_q;
  const long long batch = batch_head / heads;
  const long long head = batch_head - batch * heads;
  const unsigned short* source = o + batch * o_strides.batch + head * o_strides.head +
                                 (row - batch_head * seq_q) * o_strides.seq;
  for (int c = threadIdx.x; c < head_dim; c += blockDim.x)
    out[(long long)blockIdx.x * head_dim + c] = source[c];
}

// 16-bit values whose exponent bits are all ones (NaN or infinity in f16 and in bf16).
extern "C" __global__ void swr_count_non_finite(const unsigned short* data,
                                                unsigned long long count,
                                                unsigned long long vector_words,
                                                unsigned int exponent_mask,
                                                unsigned long long* result) {
  unsigned long long found = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  const uint4* words = (const uint4*)data;
  for (unsigned long long i = first; i < vector_words; i += stride) {
    const uint4 word = words[i];
    const unsigned int parts[4] = {word.x, word.y, word.z, word.w};
    for (int p = 0; p < 4; ++p) {
      found += (parts[p] & exponent_mask) == exponent_mask;
      found += ((parts[p] >> 16) & exponent_mask) == exponent_mask;
    }
  }
  for (unsigned long long i = vector_words * 8 + first; i < count; i += stride)
    found += (data[i] & exponent_mask) == exponent_mask;
  for (int offset = 16; offset > 0; offset /= 2)
    found += __shfl_xor_sync(0xffffffffu, found, offset);
  if (threadIdx.x % 32 == 0 && found != 0) atomicAdd(result, found);
}
)";

// The strides of the buffers (UsageError for ones that are not a layout), as the kernel sees them.
AttentionLayout buffer_layout(const AttentionProblem& problem, const AttentionBuffers& buffers) {
  return resolve_attention_layout(problem, buffers.q_strides, buffers.k_strides, buffers.v_strides,
                                  buffers.o_strides);
}

void check_reference_shape(const AttentionProblem& problem) {
  if (problem.head_dim % 8 != 0 || problem.head_dim > kMaxHeadDim || problem.head_dim <= 0) {
    throw std::invalid_argument("GPU attention reference: head dim " +
                                std::to_string(problem.head_dim) +
                                " not supported (multiples of 8 up to 256)");
  }
  if (problem.seq_q <= 0 || problem.seq_kv <= 0 || problem.batch <= 0 || problem.heads <= 0) {
    throw std::invalid_argument("GPU attention reference: empty problem " + problem.key());
  }
}

// The rows of one (batch, head): first, last, tile-boundary pairs, then random ones.
std::set<int> sample_rows_of_head(int seq_q, int count, std::mt19937_64& random) {
  std::set<int> rows = {0, seq_q - 1};
  const int boundaries = (seq_q - 1) / kTileBoundary;  // tile starts after row 0
  std::uniform_int_distribution<int> boundary(1, std::max(1, boundaries));
  for (int attempt = 0; boundaries > 0 && attempt < count / 4 && (int)rows.size() < count;
       ++attempt) {
    const int start = boundary(random) * kTileBoundary;
    rows.insert(start - 1);
    if ((int)rows.size() < count) rows.insert(start);
  }
  std::uniform_int_distribution<int> any_row(0, seq_q - 1);
  while ((int)rows.size() < count) rows.insert(any_row(random));
  return rows;
}

}  // namespace

const char* attention_reference_kernel_source() {
  return kReferenceSource;
}

std::vector<std::int64_t> sample_reference_rows(const AttentionProblem& problem, std::uint64_t seed,
                                                int rows_per_head, int max_rows) {
  check_reference_shape(problem);
  const std::int64_t heads = static_cast<std::int64_t>(problem.batch) * problem.heads;
  const int smallest = std::min(problem.seq_q, 2);
  int per_head = std::min(std::max(rows_per_head, smallest), problem.seq_q);
  if (heads * per_head > max_rows) {
    per_head = static_cast<int>(std::max<std::int64_t>(smallest, max_rows / heads));
  }
  std::mt19937_64 random(seed);
  std::set<std::int64_t> chosen_heads;
  const std::int64_t head_budget = std::max<std::int64_t>(1, max_rows / per_head);
  if (heads <= head_budget) {
    for (std::int64_t h = 0; h < heads; ++h) chosen_heads.insert(h);
  } else {
    chosen_heads = {0, heads - 1};
    std::uniform_int_distribution<std::int64_t> any_head(0, heads - 1);
    while (static_cast<std::int64_t>(chosen_heads.size()) < head_budget) {
      chosen_heads.insert(any_head(random));
    }
  }
  std::vector<std::int64_t> rows;
  for (std::int64_t head : chosen_heads) {
    for (int row : sample_rows_of_head(problem.seq_q, per_head, random)) {
      rows.push_back(head * problem.seq_q + row);
    }
  }
  return rows;  // sorted: heads ascending, rows ascending within a head
}

AttentionReferenceKernel::AttentionReferenceKernel(const DeviceContext& context)
    : driver_(CudaDriver::get()) {
  int sm_count = 0;
  SWR_CU(driver_, cuDeviceGetAttribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                       context.device()));
  count_grid_ = static_cast<unsigned>(std::max(1, sm_count) * 8);
  module_ = std::make_unique<HelperKernelModule>(driver_, context.device(), kModuleName,
                                                 kReferenceSource);
  reference_ = module_->function("swr_reference_rows");
  gather_ = module_->function("swr_gather_rows");
  count_non_finite_ = module_->function("swr_count_non_finite");
}

AttentionReferenceKernel::~AttentionReferenceKernel() = default;

std::vector<double> AttentionReferenceKernel::reference_rows(const AttentionProblem& problem,
                                                             const AttentionBuffers& buffers,
                                                             const std::vector<std::int64_t>& rows,
                                                             CUstream stream) const {
  check_reference_shape(problem);
  for (CUdeviceptr input : {buffers.k, buffers.v}) {
    if (input % 16 != 0) throw std::invalid_argument("GPU attention reference: unaligned K or V");
  }
  std::vector<double> result(rows.size() * problem.head_dim);
  if (rows.empty()) return result;
  DeviceAllocation device_rows(driver_, rows.size() * sizeof(std::int64_t));
  DeviceAllocation device_out(driver_, result.size() * sizeof(double));
  SWR_CU(driver_,
         cuMemcpyHtoD(device_rows.pointer(), rows.data(), rows.size() * sizeof(std::int64_t)));
  const void* q = reinterpret_cast<const void*>(buffers.q);
  const void* k = reinterpret_cast<const void*>(buffers.k);
  const void* v = reinterpret_cast<const void*>(buffers.v);
  const void* row_list = reinterpret_cast<const void*>(device_rows.pointer());
  void* out = reinterpret_cast<void*>(device_out.pointer());
  const float scale_log2 =
      static_cast<float>(std::numbers::log2e / std::sqrt(static_cast<double>(problem.head_dim)));
  const AttentionLayout layout = buffer_layout(problem, buffers);
  module_->launch(reference_, static_cast<unsigned>(rows.size()), kReferenceThreads, stream, q, k,
                  v, row_list, problem.seq_q, problem.seq_kv, problem.head_dim,
                  problem.causal ? 1 : 0, problem.dtype == DataType::bf16 ? 1 : 0, scale_log2, out,
                  problem.heads, problem.kv_head_count(), problem.causal_shift(), layout.q,
                  layout.k, layout.v);
  SWR_CU(driver_, cuStreamSynchronize(stream));
  SWR_CU(driver_,
         cuMemcpyDtoH(result.data(), device_out.pointer(), result.size() * sizeof(double)));
  return result;
}

std::vector<std::uint16_t> AttentionReferenceKernel::gather_rows(
    const AttentionProblem& problem, const AttentionBuffers& buffers,
    const std::vector<std::int64_t>& rows, CUstream stream) const {
  std::vector<std::uint16_t> result(rows.size() * problem.head_dim);
  if (rows.empty()) return result;
  DeviceAllocation device_rows(driver_, rows.size() * sizeof(std::int64_t));
  DeviceAllocation device_out(driver_, result.size() * sizeof(std::uint16_t));
  SWR_CU(driver_,
         cuMemcpyHtoD(device_rows.pointer(), rows.data(), rows.size() * sizeof(std::int64_t)));
  const void* o = reinterpret_cast<const void*>(buffers.o);
  const void* row_list = reinterpret_cast<const void*>(device_rows.pointer());
  void* out = reinterpret_cast<void*>(device_out.pointer());
  const AttentionLayout layout = buffer_layout(problem, buffers);
  module_->launch(gather_, static_cast<unsigned>(rows.size()), kReferenceThreads, stream, o,
                  row_list, problem.head_dim, problem.seq_q, problem.heads, layout.o, out);
  SWR_CU(driver_, cuStreamSynchronize(stream));
  SWR_CU(driver_,
         cuMemcpyDtoH(result.data(), device_out.pointer(), result.size() * sizeof(std::uint16_t)));
  return result;
}

std::int64_t AttentionReferenceKernel::count_non_finite(CUdeviceptr data, std::size_t count,
                                                        DataType type, CUstream stream) const {
  if (count == 0) return 0;
  DeviceAllocation device_count(driver_, sizeof(unsigned long long));
  SWR_CU(driver_, cuMemsetD8Async(device_count.pointer(), 0, sizeof(unsigned long long), stream));
  const void* values = reinterpret_cast<const void*>(data);
  const unsigned long long elements = count;
  // 16-byte loads where the buffer allows them (cuMemAlloc's always do), single values otherwise.
  const unsigned long long vector_words = data % 16 == 0 ? count / 8 : 0;
  const unsigned exponent_mask = type == DataType::bf16 ? 0x7F80u : 0x7C00u;
  void* result = reinterpret_cast<void*>(device_count.pointer());
  module_->launch(count_non_finite_, count_grid_, 256, stream, values, elements, vector_words,
                  exponent_mask, result);
  SWR_CU(driver_, cuStreamSynchronize(stream));
  unsigned long long found = 0;
  SWR_CU(driver_, cuMemcpyDtoH(&found, device_count.pointer(), sizeof(found)));
  return static_cast<std::int64_t>(found);
}

OutputComparison AttentionReferenceKernel::check_output(const AttentionProblem& problem,
                                                        const AttentionBuffers& buffers,
                                                        std::uint64_t seed, CUstream stream) const {
  const std::vector<std::int64_t> rows = sample_reference_rows(problem, seed);
  const std::vector<double> reference = reference_rows(problem, buffers, rows, stream);
  const std::vector<std::uint16_t> output = gather_rows(problem, buffers, rows, stream);
  OutputComparison comparison = compare_with_reference(problem, output, reference);
  const std::size_t elements =
      static_cast<std::size_t>(problem.batch) * problem.heads * problem.seq_q * problem.head_dim;
  comparison.non_finite = count_non_finite(buffers.o, elements, problem.dtype, stream);
  return comparison;
}

}  // namespace swr
