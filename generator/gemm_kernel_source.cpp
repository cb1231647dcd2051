#include "generator/gemm_kernel_source.hpp"

#include <string>

#include "generator/gemm_space.hpp"
#include "generator/resource_model.hpp"

namespace swr {
namespace {

const char* template_persistence(GemmPersistence persistence) {
  return persistence == GemmPersistence::static_loop ? "swr::gemm::Persistence::static_loop"
                                                     : "swr::gemm::Persistence::grid";
}

// templates/gemm/sm90/gemm_traits_sm90.cuh's knobs; the epilogue stays the TMA store (the direct
// store gained nothing on the H200).
std::string render_wgmma_kernel_text(const std::string& binary, const GemmProblem& problem,
                                     const GemmConfig& config) {
  const bool cooperative = config.consumer_mode == GemmConsumerMode::cooperative;
  const char* persistence = config.persistence == GemmPersistence::dynamic_loop
                                ? "dynamic_persistent"
                            : config.persistence == GemmPersistence::stream_k ? "stream_k"
                                                                              : "static_persistent";
  std::string text;
  text += "// swr gemm, kernel " + binary + " (the swizzle is a launch argument)\n";
  text += "#include \"gemm/sm90/gemm_kernel_ws.cuh\"\n";
  text += "using Traits = swr::gemm::sm90::Traits<\n";
  text += "    /*block_m*/ " + std::to_string(config.block_m) + ", /*block_n*/ " +
          std::to_string(config.block_n) + ", /*block_k*/ " + std::to_string(config.block_k) +
          ", /*stages*/ " + std::to_string(config.stages) + ", " +
          template_element(problem.dtype, "swr::") + ",\n";
  text += std::string("    swr::gemm::sm90::ConsumerMode::") +
          (cooperative ? "cooperative" : "pingpong") + ",\n";
  text += std::string("    swr::gemm::sm90::Persistence::") + persistence + ",\n";
  text += "    /*cluster_m*/ " + std::to_string(config.cluster_m) + ", /*cluster_n*/ " +
          std::to_string(config.cluster_n) + ",\n";
  text += std::string("    swr::gemm::sm90::ProductOrder::") +
          (config.transposed ? "bt_times_at" : "a_times_b") +
          ", swr::gemm::sm90::EpilogueKind::tma_store>;\n";
  text += "extern \"C\" __global__ void __launch_bounds__(Traits::kThreads, 1)\n";
  // A one-dimensional grid: the cluster's CTAs are consecutive blockIdx.x (rank = blockIdx.x %
  // size), whichever axis the kernel spreads them along.
  if (config.cluster_size() > 1) text += "    __cluster_dims__(Traits::kClusterSize, 1, 1)\n";
  text += "    " + std::string(kGemmWgmmaEntryName) + "(\n";
  text += "        const __grid_constant__ swr::sm90::TmaDescriptor map_a,\n";
  text += "        const __grid_constant__ swr::sm90::TmaDescriptor map_b,\n";
  text +=
      "        const __grid_constant__ swr::sm90::TmaDescriptor map_c, void* c, int m, int n,\n";
  text += "        int k, int swizzle_axis, int swizzle_group, int* tile_counter) {\n";
  text += "  swr::gemm::sm90::gemm_ws<Traits>(map_a, map_b, map_c, c, m, n, k, swizzle_axis,\n";
  text += "                                   swizzle_group, tile_counter);\n";
  text += "}\n";
  return text;
}

// templates/gemm/gemm_kernel.cuh's knobs.
std::string render_mma_sync_kernel_text(const std::string& binary, const GemmProblem& problem,
                                        const GemmConfig& config) {
  std::string text;
  text += "// swr gemm, kernel " + binary + " (the swizzle is a launch argument)\n";
  text += "#include \"gemm/gemm_kernel.cuh\"\n";
  text += "using Traits = swr::gemm::Traits<\n";
  text += "    /*block_m*/ " + std::to_string(config.block_m) + ", /*block_n*/ " +
          std::to_string(config.block_n) + ", /*block_k*/ " + std::to_string(config.block_k) +
          ", /*warps_m*/ " + std::to_string(config.warps_m) + ", /*warps_n*/ " +
          std::to_string(config.warps_n) + ", /*stages*/ " + std::to_string(config.stages) + ",\n";
  text += "    " + template_element(problem.dtype, "swr::") + ", " +
          template_persistence(config.persistence) + ">;\n";
  // One CTA per SM is what the 64x64 warp tiles are sized for: let them have 255 registers.
  text += "extern \"C\" __global__ void __launch_bounds__(Traits::kThreads, 1) ";
  text += std::string(kGemmEntryName) + "(\n";
  text += "    const void* a, const void* b, void* c, int m, int n, int k, int swizzle_axis,\n";
  text += "    int swizzle_group) {\n";
  text += "  swr::gemm::multiply<Traits>(a, b, c, m, n, k, swizzle_axis, swizzle_group);\n";
  text += "}\n";
  return text;
}

}  // namespace

const char* gemm_entry_name(const GemmConfig& config) {
  return config.path == InstructionPath::wgmma ? kGemmWgmmaEntryName : kGemmEntryName;
}

std::string gemm_binary_name(const GemmProblem& problem, const GemmConfig& config) {
  std::string key = with_swizzle(config, 0, SwizzleAxis::n).key();
  key.erase(key.rfind('-'));  // drop "-swz0"
  key += "_";
  key += to_string(problem.dtype);
  return key;
}

KernelSource render_gemm_kernel(const GemmProblem& problem, const GemmConfig& config) {
  const std::string binary = gemm_binary_name(problem, config);
  KernelSource source;
  source.name = binary + ".cu";
  source.entry = gemm_entry_name(config);
  source.text = config.path == InstructionPath::wgmma
                    ? render_wgmma_kernel_text(binary, problem, config)
                    : render_mma_sync_kernel_text(binary, problem, config);
  source.headers = embedded_template_headers();
  source.threads_per_block = config.threads();
  source.dynamic_shared_bytes = gemm_dynamic_shared_bytes(config);
  return source;
}

}  // namespace swr
