#include "generator/kernel_source.hpp"

#include <string>

#include "generator/resource_model.hpp"

namespace swr {
namespace {

const char* boolean(bool value) {
  return value ? "true" : "false";
}

std::string render_mma_sync_text(const AttentionProblem& problem, const AttentionConfig& config,
                                 int head_group) {
  std::string text;
  text += "// swr attention forward, config " + config.key() + ", problem " +
          compiled_problem_part(problem) + "\n";
  text += "#include \"attention/forward_kernel.cuh\"\n";
  text += "using Traits = swr::attention::Traits<\n";
  text += "    /*head_dim*/ " + std::to_string(problem.head_dim) + ", /*block_m*/ " +
          std::to_string(config.block_m) + ", /*block_n*/ " + std::to_string(config.block_n) +
          ", /*warps*/ " + std::to_string(config.warps) + ", /*stages*/ " +
          std::to_string(config.stages) + ",\n";
  text += "    " + template_element(problem.dtype, "swr::attention::") + ", /*causal*/ " +
          boolean(problem.causal) + ",\n";
  text += "    " + std::string(template_order(config.order)) + ",\n";
  text += "    " + std::string(template_persistence(config.persistence)) + ",\n";
  text += "    " + std::string(template_swizzle(config.swizzle)) + ",\n";
  text += "    /*head_group*/ " + std::to_string(head_group) + ", /*planted_fault*/ " +
          boolean(config.planted_fault) + ">;\n";
  // The launch asks for the resource model's bytes: compiling proves the template agrees.
  text += "static_assert(swr::attention::ForwardTile<Traits>::kSharedBytes == " +
          std::to_string(attention_dynamic_shared_bytes(problem, config)) +
          ", \"resource model and template disagree on shared memory\");\n";
  text += "extern \"C\" __global__ void __launch_bounds__(Traits::kThreads) ";
  text += std::string(kAttentionEntryName) +
          "(const void* q, const void* k, const void* v, void* o,\n"
          "    const swr::attention::AttentionArgs args, float* lse) {\n";
  text += "  swr::attention::forward<Traits>(q, k, v, o, args, lse);\n";
  text += "}\n";
  return text;
}

// The sm_90a warp-specialized kernel (templates/attention/sm90/forward_kernel_ws.cuh): Q, K and V
// arrive as TMA tensor maps (runtime/attention_tensor_maps.hpp says how they are built), grid
// constant parameters; one CTA per SM at most (launch bounds), so setmaxnreg has the whole file.
std::string render_wgmma_text(const AttentionProblem& problem, const AttentionConfig& config,
                              int head_group) {
  std::string text;
  text += "// swr attention forward (sm_90a wgmma), config " + config.key() + ", problem " +
          compiled_problem_part(problem) + "\n";
  text += "#include \"attention/attention_args.cuh\"\n";
  text += "#include \"attention/sm90/forward_kernel_ws.cuh\"\n";
  text += "using Traits = swr::attention::sm90::Traits<\n";
  text += "    /*head_dim*/ " + std::to_string(problem.head_dim) + ", /*consumer_warpgroups*/ " +
          std::to_string(config.consumer_warpgroups()) + ", /*block_n*/ " +
          std::to_string(config.block_n) + ", /*stages*/ " + std::to_string(config.stages) + ",\n";
  // swr::Element (templates/common/element.cuh): the sm90 headers do not include the mma_sync
  // template's alias of it.
  text += "    " + template_element(problem.dtype, "swr::") + ", /*causal*/ " +
          boolean(problem.causal) + ", /*overlap*/ " + boolean(config.overlap) + ", /*pingpong*/ " +
          boolean(config.pingpong) + ",\n";
  text += "    " + std::string(template_order(config.order)) + ",\n";
  text += "    " + std::string(template_persistence(config.persistence)) + ",\n";
  text += "    " + std::string(template_swizzle(config.swizzle)) + ", /*head_group*/ " +
          std::to_string(head_group) + ",\n";
  text += std::string("    swr::attention::sm90::KvCacheHint::") +
          (config.kv_cache_hint == KvCacheHint::evict_last ? "evict_last" : "none") +
          ", /*p_in_smem*/ " + boolean(config.p_in_smem);
  // Test-only, like planted_fault: the producer loads nothing and the consumers hang.
  if (config.planted_hang) text += ", /*planted_hang*/ true";
  text += ">;\n";
  // The launch asks for the resource model's bytes: compiling proves the template agrees.
  text += "static_assert(Traits::kDynamicSharedBytes == " +
          std::to_string(attention_dynamic_shared_bytes(problem, config)) +
          ", \"resource model and template disagree on shared memory\");\n";
  // The tensor maps' boxes (runtime/attention_tensor_maps.cpp) are the template's chunks.
  text += "static_assert(Traits::kChunkColumns == " +
          std::to_string(wgmma_attention_chunk_columns(problem.head_dim)) +
          ", \"tensor map boxes and template disagree on the chunk width\");\n";
  text += "extern \"C\" __global__ void __launch_bounds__(Traits::kThreads, 1) ";
  text += std::string(kAttentionEntryName) + "(\n";
  text += "    const __grid_constant__ swr::sm90::TmaDescriptor q_map,\n";
  text += "    const __grid_constant__ swr::sm90::TmaDescriptor k_map,\n";
  text += "    const __grid_constant__ swr::sm90::TmaDescriptor v_map, void* o,\n";
  text += "    const swr::attention::AttentionArgs args, float* lse) {\n";
  if (config.planted_fault) {
    // Test-only, as in the mma_sync template: prove fault isolation.
    text +=
        "  if (threadIdx.x == 0) *reinterpret_cast<volatile int*>(static_cast<size_t>(8)) = 1;\n";
  }
  text += "  swr::attention::sm90::forward<Traits>(&q_map, &k_map, &v_map, o, args, lse);\n";
  text += "}\n";
  return text;
}

}  // namespace

const char* template_order(KvOrder order) {
  return order == KvOrder::sawtooth ? "swr::attention::KvOrder::sawtooth"
                                    : "swr::attention::KvOrder::cyclic";
}

const char* template_persistence(Persistence persistence) {
  switch (persistence) {
    case Persistence::grid:
      return "swr::attention::Persistence::grid";
    case Persistence::static_loop:
      return "swr::attention::Persistence::static_loop";
    case Persistence::dynamic:
      return "swr::attention::Persistence::dynamic";
  }
  return "";
}

const char* template_swizzle(TileSwizzle swizzle) {
  switch (swizzle) {
    case TileSwizzle::head_major:
      return "swr::attention::TileSwizzle::head_major";
    case TileSwizzle::heads_interleaved:
      return "swr::attention::TileSwizzle::heads_interleaved";
    case TileSwizzle::head_groups:
      return "swr::attention::TileSwizzle::head_groups";
  }
  return "";
}

// "d128_f16_causal": the part of the problem that is compiled in.
std::string compiled_problem_part(const AttentionProblem& problem) {
  std::string part = "d";
  part += std::to_string(problem.head_dim);
  part += '_';
  part += to_string(problem.dtype);
  part += problem.causal ? "_causal" : "_noncausal";
  return part;
}

std::string template_element(DataType type, const std::string& scope) {
  return scope + "Element::" + (type == DataType::bf16 ? "bf16" : "f16");
}

KernelSource render_attention_kernel(const AttentionProblem& problem,
                                     const AttentionConfig& config) {
  const int head_group = config.swizzle == TileSwizzle::head_groups ? config.head_group : 1;
  const std::string variant = config.key() + "_" + compiled_problem_part(problem);

  KernelSource source;
  source.name = variant + ".cu";
  source.entry = kAttentionEntryName;
  source.text = config.is_wgmma() ? render_wgmma_text(problem, config, head_group)
                                  : render_mma_sync_text(problem, config, head_group);
  source.headers = embedded_template_headers();
  source.threads_per_block = config.threads();
  source.dynamic_shared_bytes = attention_dynamic_shared_bytes(problem, config);
  return source;
}

}  // namespace swr
