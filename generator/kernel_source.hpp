// Rendering a Config into CUDA source for NVRTC, with the template headers it includes.
#pragma once

#include <string>
#include <vector>

#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"
#include "swr/data_type.hpp"

namespace swr {

// The one entry point every rendered attention kernel defines (extern "C"). Its name states the
// launch ABI: "_v3" takes Q, K, V (pointers or tensor maps), O, the AttentionArgs block
// (templates/attention/attention_args.cuh) by value, and where to write the rows' log-sum-exp
// for the backward (null: nowhere). Cubins of "_v2" (the same without the log-sum-exp) still
// launch for inference; those of the entry before it (kLegacyAttentionEntryName: sizes and
// pointers one by one) are never launched.
inline constexpr const char* kAttentionEntryName = "swr_attention_forward_v3";
inline constexpr const char* kAttentionEntryWithoutLse = "swr_attention_forward_v2";
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
  // A family whose work is several kernels of one module (the attention backward): their entry
  // points in launch order, `entry` among them. Empty: `entry` alone.
  std::vector<std::string> launch_sequence;
};

// The compile-time part of the problem (head dim, dtype, causal) goes into the source too;
// sizes (B, H, S) stay run-time arguments.
KernelSource render_attention_kernel(const AttentionProblem& problem,
                                     const AttentionConfig& config);

// Every header under templates/, embedded into the library at build time.
const std::vector<HeaderFile>& embedded_template_headers();

// The template enumerators of the attention schedule's knobs (templates/attention/
// attention_schedule.cuh), as a rendered source spells them, for either pass.
const char* template_order(KvOrder order);
const char* template_persistence(Persistence persistence);
const char* template_swizzle(TileSwizzle swizzle);
// "d128_f16_causal": the part of an attention problem that is compiled in.
std::string compiled_problem_part(const AttentionProblem& problem);

// swr::Element's enumerator for `type` (templates/common/element.cuh) as a rendered source names
// it from `scope`: "swr::", or "swr::attention::" in the attention mma_sync source, which names it
// through that template's alias.
std::string template_element(DataType type, const std::string& scope);

}  // namespace swr
