// The attention backward's rendered module: the main kernel's traits from the config and the
// problem's compiled part, and the preprocess and postprocess of the same head dim and dtype.
#include <string>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "swr/instruction_path.hpp"

namespace swr {
namespace {

const char* boolean(bool value) {
  return value ? "true" : "false";
}

}  // namespace

KernelSource render_attention_backward_kernel(const AttentionBackwardProblem& problem,
                                              const AttentionBackwardConfig& config) {
  const AttentionProblem& shape = problem.shape;
  const int head_group = config.swizzle == TileSwizzle::head_groups ? config.head_group : 1;
  const std::string element = template_element(shape.dtype, "swr::");
  const std::string dims = std::to_string(shape.head_dim);

  std::string text;
  text += "// swr attention backward, config " + config.key() + ", problem " +
          compiled_problem_part(shape) + "\n";
  // The main kernel of the config's instruction path (and, on wgmma, of its warp roles); the
  // passes are the same for all three.
  const bool wgmma = config.path == InstructionPath::wgmma;
  const bool warp_specialized = config.warp_specialized();
  const bool wide = config.splits_products();
  std::string schedule = "    " + element + ", /*causal*/ " + boolean(shape.causal) + ",\n    " +
                         std::string(template_order(config.order)) + ",\n    " +
                         std::string(template_persistence(config.persistence)) + ",\n    " +
                         std::string(template_swizzle(config.swizzle)) + ", /*head_group*/ " +
                         std::to_string(head_group) + ",\n    /*deterministic_dq*/ " +
                         boolean(config.dq == DqAccumulation::deterministic);
  if (config.pairs_kv_warpgroups()) {
    schedule += ", /*lagged_dq*/ " +
                std::string(boolean(config.consumers == ConsumerSync::lagged)) +
                ", /*cta_pairs*/ " + boolean(config.cta_pairs) + ", /*dq_from_registers*/ " +
                boolean(config.dq_from_registers);
  }
  schedule += ">;\n";
  const std::string main_namespace = wgmma ? "swr::attention::sm90::" : "swr::attention::";
  const std::string traits = wide               ? "BackwardWsWideTraits"
                             : warp_specialized ? "BackwardWsTraits"
                                                : "BackwardTraits";
  // The wide kernel's tile is fixed (64 x 64); the others take block_m, and their own sizes.
  const std::string block_m = wide ? "" : " /*block_m*/ " + std::to_string(config.block_m) + ",";
  const std::string tile = warp_specialized ? ""
                           : wgmma ? " /*warpgroups*/ " + std::to_string(config.warps / 4) + ","
                                   : " /*block_n*/ " + std::to_string(config.block_n) +
                                         ", /*warps*/ " + std::to_string(config.warps) + ",";
  text += wide               ? "#include \"attention/backward/sm90/backward_kernel_ws_wide.cuh\"\n"
          : warp_specialized ? "#include \"attention/backward/sm90/backward_kernel_ws.cuh\"\n"
          : wgmma            ? "#include \"attention/backward/sm90/backward_kernel.cuh\"\n"
                             : "#include \"attention/backward/backward_kernel.cuh\"\n";
  text += "#include \"attention/backward/workspace_passes.cuh\"\n";
  text += "using Traits = " + main_namespace + traits + "<\n";
  text += "    /*head_dim*/ " + dims + "," + block_m + tile + " /*stages*/ " +
          std::to_string(config.stages) + ",\n";
  text += schedule;
  // The launch asks for the resource model's bytes: compiling proves the template agrees.
  text += "static_assert(" +
          std::string(wgmma ? "Traits" : "swr::attention::BackwardTile<Traits>") +
          "::kSharedBytes == " + std::to_string(attention_backward_shared_bytes(problem, config)) +
          ", \"resource model and template disagree on shared memory\");\n";
  text += "extern \"C\" __global__ void __launch_bounds__(swr::attention::kPassThreads) " +
          std::string(kBackwardPreprocessEntryName) +
          "(\n    const void* o, const void* d_o, const float* lse,"
          " const swr::attention::BackwardArgs args) {\n";
  text += "  swr::attention::backward_preprocess<" + dims + ", " + element +
          ", Traits::kBlockM>(o, d_o, lse, args);\n}\n";
  // The warp-specialized kernel takes Q, K, V and dO as tensor maps by value
  // (runtime/attention_backward/backward_launcher.cpp passes them in this order).
  const std::string inputs =
      warp_specialized ? "    const __grid_constant__ swr::sm90::TmaDescriptor q_map,\n"
                         "    const __grid_constant__ swr::sm90::TmaDescriptor k_map,\n"
                         "    const __grid_constant__ swr::sm90::TmaDescriptor v_map,\n"
                         "    const __grid_constant__ swr::sm90::TmaDescriptor d_o_map,"
                       : "    const void* q, const void* k, const void* v, const void* d_o,";
  // One CTA per SM at least, which the launch bounds say: without it ptxas for sm_121 traded
  // spills (8 to 40 bytes) for two CTAs of 128 registers (and setmaxnreg needs the cap).
  // CTA pairs run as clusters of two (the launch's grid a whole number of them).
  text +=
      std::string("extern \"C\" __global__ void ") +
      (config.cta_pairs ? "__cluster_dims__(" + std::to_string(config.cluster_ctas()) + ", 1, 1) "
                        : std::string()) +
      "__launch_bounds__(Traits::kThreads, 1) " + std::string(kBackwardEntryName) + "(\n" + inputs +
      " void* dk, void* dv,\n    const swr::attention::BackwardArgs args) {\n";
  if (config.planted_fault) {
    // Test-only, as the forward's: prove fault isolation.
    text +=
        "  if (threadIdx.x == 0) *reinterpret_cast<volatile int*>(static_cast<size_t>(8)) = 1;\n";
  }
  text +=
      warp_specialized
          ? "  swr::attention::sm90::" + std::string(wide ? "backward_ws_wide" : "backward_ws") +
                "<Traits>(&q_map, &k_map, &v_map, &d_o_map, dk, dv, args);\n}\n"
          : "  " + main_namespace + "backward<Traits>(q, k, v, d_o, dk, dv, args);\n}\n";
  text += "extern \"C\" __global__ void __launch_bounds__(swr::attention::kPassThreads) " +
          std::string(kBackwardPostprocessEntryName) +
          "(\n    void* dq, const swr::attention::BackwardArgs args) {\n";
  // The accumulator as the main kernel lays it out (dq_accumulator_layout.cuh; the
  // warp-specialized kernels' traits name theirs).
  const std::string dq_layout =
      config.dq_in_fragments() ? "Traits::DqLayout" : "swr::attention::DqRowLayout<" + dims + ">";
  text += "  swr::attention::backward_postprocess<" + dims + ", " + element +
          ", Traits::kBlockM, " + dq_layout + ">(dq, args);\n}\n";

  KernelSource source;
  source.name = config.key() + "_" + compiled_problem_part(shape) + ".cu";
  source.entry = kBackwardEntryName;
  source.text = std::move(text);
  source.headers = embedded_template_headers();
  source.threads_per_block = config.threads();
  source.dynamic_shared_bytes = attention_backward_shared_bytes(problem, config);
  source.launch_sequence.assign(kBackwardLaunchSequence.begin(), kBackwardLaunchSequence.end());
  return source;
}

}  // namespace swr
