#include "generator/gemm_stream_k.hpp"

namespace swr {

GemmStreamKScratch gemm_stream_k_scratch(const GemmConfig& config, int ctas) {
  GemmStreamKScratch scratch;
  if (config.persistence != GemmPersistence::stream_k || ctas <= 0) return scratch;
  constexpr int kConsumers = 2;  // consumer warpgroups, each with its own flag
  scratch.flag_ints = (ctas * kConsumers + 3) / 4 * 4;
  scratch.bytes = static_cast<std::size_t>(scratch.flag_ints) * sizeof(int) +
                  static_cast<std::size_t>(ctas) * config.block_m * config.block_n * sizeof(float);
  return scratch;
}

}  // namespace swr
