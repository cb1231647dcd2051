// Rendering a Config into CUDA source for NVRTC, with the template headers it includes.
#pragma once

#include <string>
#include <vector>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/data_type.hpp"

namespace swr {

// The one entry point every rendered attention kernel defines (extern "C"). Its name states the
// launch ABI: "_v2" takes Q, K, V (pointers or tensor maps), O and the AttentionArgs block
// (templates/attention/attention_args.cuh) by value. Cubins of the entry before it
// (kLegacyAttentionEntryName: sizes and pointers one by one) are never launched.
inline constexpr const char* kAttentionEntryName = "swr_attention_forward_v2";
inline constexpr const char* kLegacyAttentionEntryName = "swr_attention_forward";

struct HeaderFile {
  std::string include_name;  // as written in #include, e.g. "attention/forward_kernel.cuh"
  std::string text;
};

struct KernelSource {
  std::string name;                 // file name NVRTC shows in its log, e.g. "<config key>.cu"
  std::string entry;                // extern "C" entry point
  std::string text;                 // the rendered translation unit
  std::vector<HeaderFile> headers;  // every template header, embedded at build time
  int threads_per_block = 0;
  int dynamic_shared_bytes = 0;
};

// The compile-time part of the problem (head dim, dtype, causal) goes into the source too;
// sizes (B, H, S) stay run-time arguments.
KernelSource render_attention_kernel(const AttentionProblem& problem,
                                     const AttentionConfig& config);

// Every header under templates/, embedded into the library at build time.
const std::vector<HeaderFile>& embedded_template_headers();

// swr::Element's enumerator for `type` (templates/common/element.cuh) as a rendered source names
// it from `scope`: "swr::", or "swr::attention::" in the attention mma_sync source, which names it
// through that template's alias.
std::string template_element(DataType type, const std::string& scope);

}  // namespace swr
