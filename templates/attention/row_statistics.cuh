// The per-row softmax statistics every attention kernel shares: the infinities the masking and
// the empty rows use, and the log-sum-exp the forward hands the backward.
#pragma once

namespace swr {
namespace attention {

__device__ __forceinline__ float negative_infinity() {
  return __int_as_float(0xff800000);
}
__device__ __forceinline__ float positive_infinity() {
  return __int_as_float(0x7f800000);
}

// ln(sum_j 2^(x_j)) from a row's running max of x (base 2: S * scale * log2(e)) and its sum of
// 2^(x_j - max): the log-sum-exp in natural-log units, as FlashAttention's; +inf where the sum is
// 0 (a row that saw no key), which makes the backward's P = exp(S * scale - L) 0 there.
__device__ __forceinline__ float log_sum_exp(float max_log2, float sum) {
  constexpr float kLn2 = 0.6931471805599453f;
  return sum > 0.f ? (max_log2 + log2f(sum)) * kLn2 : positive_infinity();
}

}  // namespace attention
}  // namespace swr
