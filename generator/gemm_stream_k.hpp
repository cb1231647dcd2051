// Stream-K on the host: the schedule of templates/gemm/stream_k.cuh (compiled here by the host
// compiler: the host, its tests and the kernel share one definition) and the size of the scratch
// the wgmma kernel's fixup needs (templates/gemm/sm90/gemm_stream_k_sm90.cuh).
#pragma once

#include <cstddef>

#include "swr/gemm_config.hpp"
#include "templates/gemm/stream_k.cuh"

namespace swr {

struct GemmStreamKScratch {
  int flag_ints = 0;      // zeroed on the launch stream before each launch
  std::size_t bytes = 0;  // flags, then one fp32 partial tile per CTA
};

// For a grid of `ctas` CTAs of a stream-K config (zero for any other persistence).
GemmStreamKScratch gemm_stream_k_scratch(const GemmConfig& config, int ctas);

}  // namespace swr
