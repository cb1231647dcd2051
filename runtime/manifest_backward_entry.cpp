// The entry of an attention backward module in manifest.json ("backward_kernels"): beside the
// fields every entry has (the main kernel's entry, block size and shared memory), its three
// kernels in launch order with the tensors each takes and its grid, and the workspace the caller
// provides. All of them are written from what the runtime launches (backward_kernels.hpp,
// backward_workspace_layout, backward_tensor_map_descriptions) and read back strictly: a field
// that contradicts the entry's problem and config is refused by its path.
#include "generator/attention_backward/attention_backward_family.hpp"
#include "runtime/attention_backward/backward_kernels.hpp"
#include "runtime/attention_backward/backward_launcher.hpp"
#include "runtime/manifest_entries.hpp"
#include "templates/attention/backward/sm90/backward_ws_registers.cuh"

namespace swr {
namespace {

constexpr const char* kFromProblemAndConfig = "the problem and config make";

AttentionBackwardProblem read_backward_problem(const JsonFieldReader& problem) {
  require_family(problem, kAttentionBackwardFamilyName);
  return checked_shape(problem, AttentionBackwardProblem{read_attention_shape_fields(problem)},
                       "head_dim");
}

// The tensors a kernel takes before the BackwardArgs block: the parameter lists of
// generator/attention_backward/kernel_source.cpp, as AttentionBackwardModule passes them.
std::string tensor_arguments(BackwardPass pass, const AttentionBackwardConfig& config) {
  switch (pass) {
    case BackwardPass::preprocess:
      return "o, d_o (const void*), lse (const float*: the forward's [batch, heads, seq_q] fp32 "
             "natural log-sum-exp), then the BackwardArgs block";
    case BackwardPass::main:
      return config.warp_specialized()
                 ? "q_map, k_map, v_map, d_o_map (CUtensorMap by value, __grid_constant__: see "
                   "tensor_maps), dk, dv (void*), then the BackwardArgs block"
                 : "q, k, v, d_o (const void*), dk, dv (void*), then the BackwardArgs block";
    case BackwardPass::postprocess:
      return "dq (void*), then the BackwardArgs block";
  }
  return {};
}

// How many CTAs a kernel takes, in words, with the numbers the config and the compiled head dim
// give (backward_ctas computes them).
nlohmann::json grid_json(BackwardPass pass, const AttentionBackwardProblem& problem,
                         const AttentionBackwardConfig& config) {
  const int rows_per_cta = backward_pass_rows_per_cta(problem.shape.head_dim);
  switch (pass) {
    case BackwardPass::preprocess:
      return {{"ctas", "ceil(batch * heads * seq_q_padded / rows_per_cta)"},
              {"rows_per_cta", rows_per_cta}};
    case BackwardPass::postprocess:
      if (const int parts = backward_dq_parts(config); parts > 0) {
        return {{"ctas", "batch * heads * q_tiles * dq_parts"}, {"dq_parts", parts}};
      }
      return {{"ctas", "ceil(batch * heads * seq_q / rows_per_cta)"},
              {"rows_per_cta", rows_per_cta}};
    case BackwardPass::main:
      break;
  }
  const bool split = backward_splits_last_wave(problem, config);
  const std::string scheduled =
      split ? "(split_whole + (units - split_whole) * split_parts) * cluster_ctas"
            : "units * cluster_ctas";
  nlohmann::json grid = {
      {"rule", grid_rule_name(config.persistence)},
      {"units", "ceil(ceil(seq_kv / block_n) / cluster_ctas) * batch * kv_heads"},
      {"cluster_ctas", config.cluster_ctas()},
      {"split_last_wave", split},
      {"ctas",
       config.persistence == Persistence::grid ? scheduled : "min(" + scheduled + ", wave_size)"},
      {"wave_size",
       "blocks_per_sm * sm_count, blocks_per_sm from cuOccupancyMaxActiveBlocksPerMultiprocessor "
       "of the main kernel at load"},
      {"tile_counter", config.persistence == Persistence::dynamic
                           ? "one int, zeroed before each launch of the main kernel"
                           : "none (pass null)"}};
  if (config.cluster_ctas() > 1) {
    grid["clusters"] = "compiled in (__cluster_dims__): launch as a plain grid of whole clusters";
  }
  return grid;
}

// The warp-specialized kernel's four tensor maps for the entry's shape stored contiguously
// [B, H, S, D], as the launcher encodes them (backward_tensor_map_descriptions).
nlohmann::json tensor_maps_json(const AttentionBackwardProblem& problem,
                                const AttentionBackwardConfig& config) {
  const BackwardLayout contiguous = resolve_backward_layout(problem.shape, {});
  nlohmann::json maps = nlohmann::json::array();
  for (const TensorMapDescription& map :
       backward_tensor_map_descriptions(problem, config, contiguous)) {
    const auto rank = static_cast<std::size_t>(map.rank);
    maps.push_back({{"operand", map.name},
                    {"encode", "cuTensorMapEncodeTiled"},
                    {"data_type", map.element == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ? "bf16" : "f16"},
                    {"dims", std::vector<std::uint64_t>(map.dims.begin(), map.dims.begin() + rank)},
                    {"strides_bytes", std::vector<std::uint64_t>(map.strides.begin(),
                                                                 map.strides.begin() + rank - 1)},
                    {"box", std::vector<std::uint32_t>(map.box.begin(), map.box.begin() + rank)},
                    {"swizzle_bytes", map.swizzle_bytes},
                    {"interleave", "none"},
                    {"l2_promotion", "256B"},
                    {"oob_fill", "none"},
                    {"base_alignment_bytes", 16}});
  }
  return {
      {"layout",
       "the entry's shape, each tensor contiguous [batch, heads, seq, head_dim] (other strides: "
       "the same rule, runtime/attention_tensor_maps.hpp)"},
      {"maps", std::move(maps)}};
}

nlohmann::json launch_sequence_json(const AttentionBackwardProblem& problem,
                                    const AttentionBackwardConfig& config) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const BackwardKernel& kernel :
       backward_module_kernels(config, attention_backward_shared_bytes(problem, config))) {
    nlohmann::json json = {{"pass", std::string(to_string(kernel.pass))},
                           {"entry", kernel.entry},
                           {"block_threads", kernel.block_threads},
                           {"dynamic_shared_bytes", kernel.dynamic_shared_bytes},
                           {"arguments", tensor_arguments(kernel.pass, config)},
                           {"grid", grid_json(kernel.pass, problem, config)}};
    if (kernel.pass == BackwardPass::main && config.warp_specialized()) {
      json["tensor_maps"] = tensor_maps_json(problem, config);
    }
    kernels.push_back(std::move(json));
  }
  return kernels;
}

// The workspace as backward_workspace_layout lays it out: each part's size in words, its offset
// and the whole for the entry's shape.
nlohmann::json workspace_json(const AttentionBackwardProblem& problem,
                              const AttentionBackwardConfig& config) {
  const BackwardWorkspaceLayout layout = backward_workspace_layout(problem, config);
  const bool deterministic = config.dq == DqAccumulation::deterministic;
  const bool split = backward_splits_last_wave(problem, config);
  const auto part = [](const char* name, std::size_t offset, const std::string& bytes) {
    return nlohmann::json{{"name", name}, {"offset", offset}, {"bytes", bytes}};
  };
  nlohmann::json json = {
      {"bytes", layout.bytes},
      {"alignment_bytes", kBackwardWorkspaceAlignment},
      {"layout",
       "the parts in this order, each from the previous one's end rounded up to alignment_bytes; "
       "bytes, the whole, is the last one's end rounded up (offsets and the whole are the entry's "
       "shape's)"},
      {"parts",
       {part("lse_log2", layout.lse_log2, "4 * batch * heads * seq_q_padded"),
        part("delta", layout.delta, "4 * batch * heads * seq_q_padded"),
        part("dq_accum", layout.dq_accum, "4 * batch * heads * seq_q_padded * head_dim"),
        part("semaphores", layout.semaphores, deterministic ? "4 * batch * heads * q_tiles" : "0"),
        part("split_arrivals", layout.split_arrivals,
             split ? "4 * consumer_warpgroups * split_ctas" : "0"),
        part("split_sums", layout.split_sums,
             split ? "4 * split_ctas * 2 * block_n * head_dim" : "0")}},
      {"filled_by",
       "the preprocess, on every launch: the caller only provides it; launches that may run at "
       "the same time must not share one"}};
  if (split) {
    json["split_ctas"] = attention::kBackwardSplitUnits * config.cluster_ctas();
    json["consumer_warpgroups"] = attention::kBackwardWsConsumerWgs;
  }
  return json;
}

}  // namespace

nlohmann::json kernel_json(const ExportedBackwardKernel& kernel) {
  nlohmann::json json = entry_json(kernel);
  json["arguments"] = kBackwardArguments;
  json["launch_sequence"] = launch_sequence_json(kernel.problem, kernel.config);
  json["workspace"] = workspace_json(kernel.problem, kernel.config);
  return json;
}

ExportedBackwardKernel read_backward_kernel(const JsonFieldReader& kernel) {
  ExportedBackwardKernel exported;
  exported.problem = read_backward_problem(kernel.object("problem"));
  exported.config = read_config<AttentionBackwardConfig>(
      kernel, "backward config", [&](const AttentionBackwardConfig& config) {
        return attention_backward_tile_problem(exported.problem, config);
      });
  const int shared_bytes = attention_backward_shared_bytes(exported.problem, exported.config);
  const BackwardKernel main = main_kernel(backward_module_kernels(exported.config, shared_bytes));
  read_kernel_base(kernel, main.entry, main.block_threads, exported);
  // The launch opts in to this much shared memory: less than the kernel's tiles need would fault.
  require_equal(kernel, "dynamic_shared_bytes", std::to_string(exported.dynamic_shared_bytes),
                std::to_string(main.dynamic_shared_bytes),
                "the problem's head dim and the config's tiles and stages need");
  require_equal(kernel, "arguments", kernel.text("arguments"), kBackwardArguments,
                "every backward kernel takes");
  kernel.require_json("launch_sequence", launch_sequence_json(exported.problem, exported.config),
                      kFromProblemAndConfig);
  kernel.require_json("workspace", workspace_json(exported.problem, exported.config),
                      kFromProblemAndConfig);
  return exported;
}

}  // namespace swr
