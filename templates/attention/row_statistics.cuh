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

// The max a row's P is taken against (base 2: S * scale * log2(e)) once a tile's max is in: raised
// only when the tile passes the current one by more than 8, FlashAttention-4's threshold. Steps
// that keep it leave O and the sum unscaled, and P stays within [0, 2^8], which bf16 and fp16 hold
// to the same relative precision as [0, 1]. The log-sum-exp below takes this max, not the row's.
__device__ __forceinline__ float raised_max(float running, float tile_max) {
  constexpr float kSlack = 8.f;
  return tile_max > running + kSlack ? tile_max : running;
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
