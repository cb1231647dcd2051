// One kernel entry of manifest.json per family: an attention kernel's ("kernels") and a GEMM
// kernel's ("gemm_kernels"), each its problem, config and grid rule (a GEMM's with the swizzle
// arguments of its launch), beside the fields every entry has (manifest_kernel_fields.cpp).
#include "runtime/manifest_entries.hpp"

#include "generator/gemm_kernel_source.hpp"
#include "generator/gemm_swizzle.hpp"
#include "generator/kernel_source.hpp"
#include "generator/problem_json.hpp"
#include "generator/resource_model.hpp"
#include "runtime/gemm_tensor_maps.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

AttentionProblem read_attention_problem(const JsonFieldReader& problem) {
  require_family(problem, kAttentionFamilyName);
  return checked_shape(problem, read_attention_shape_fields(problem), "head_dim");
}

GemmProblem read_gemm_problem(const JsonFieldReader& problem) {
  require_family(problem, kGemmFamilyName);
  GemmProblem shape;
  shape.m = problem.positive_int("m");
  shape.n = problem.positive_int("n");
  shape.k = problem.positive_int("k");
  shape.dtype = read_dtype(problem);
  return checked_shape(problem, shape, "m");
}

AttentionConfig read_attention_config(const JsonFieldReader& kernel) {
  return read_config<AttentionConfig>(kernel, "config",
                                      [](const AttentionConfig&) { return std::string(); });
}

GemmConfig read_gemm_config(const JsonFieldReader& kernel) {
  return read_config<GemmConfig>(kernel, "GEMM config", gemm_shape_problem);
}

}  // namespace

AttentionProblem read_attention_shape_fields(const JsonFieldReader& problem) {
  AttentionProblem shape;
  shape.batch = problem.positive_int("batch");
  shape.heads = problem.positive_int("heads");
  shape.seq_q = problem.positive_int("seq_q");
  shape.seq_kv = problem.positive_int("seq_kv");
  shape.head_dim = problem.positive_int("head_dim");
  shape.dtype = read_dtype(problem);
  shape.causal = problem.boolean("causal");
  // Written only for GQA/MQA and an effective bottom-right mask (AttentionProblem::to_json).
  if (problem.has("kv_heads")) {
    shape.kv_heads = problem.positive_int("kv_heads");
  }
  if (problem.has("causal_align")) {
    const std::string align = problem.text("causal_align");
    const std::optional<CausalAlignment> parsed = parse_causal_alignment(align);
    if (!parsed)
      problem.fail("causal_align", "is \"" + align + "\" (allowed top_left, bottom_right)");
    shape.causal_align = *parsed;
  }
  return shape;
}

std::string grid_rule_name(Persistence persistence) {
  return std::string(to_string(persistence));
}

nlohmann::json grid_rule_json(Persistence persistence) {
  const std::string tiles = "batch * heads * ceil(seq_q / block_m)";
  if (persistence == Persistence::grid) {
    return {{"rule", grid_rule_name(persistence)}, {"ctas", "q_tiles"}, {"q_tiles", tiles}};
  }
  return {{"rule", grid_rule_name(persistence)},
          {"ctas", "min(q_tiles, blocks_per_sm * sm_count)"},
          {"q_tiles", tiles},
          {"blocks_per_sm", "cuOccupancyMaxActiveBlocksPerMultiprocessor at load"},
          {"tile_counter",
           persistence == Persistence::dynamic ? "one int, zeroed before each launch" : "none"}};
}

// How a wgmma entry's kernel takes Q, K and V (runtime/attention_tensor_maps.hpp), for a program
// that launches the cubin without swr.
nlohmann::json tensor_maps_json(const AttentionConfig& config) {
  return {{"arguments",
           "q_map, k_map, v_map (CUtensorMap by value, __grid_constant__), o, then the "
           "AttentionArgs block by value and lse (see \"arguments\" of the entry)"},
          {"encode", "cuTensorMapEncodeTiled"},
          {"data_type", "FLOAT16 or BFLOAT16, the problem's dtype"},
          {"rank", 3},
          {"dims", {"head_dim", "seq (seq_q for Q, seq_kv for K and V)", "batch * heads"}},
          {"strides_bytes", {"head_dim * 2", "seq * head_dim * 2"}},
          {"box", {"64", "q_box_rows for Q, kv_box_rows for K and V", "1"}},
          {"q_box_rows", config.block_m},
          {"kv_box_rows", config.block_n},
          {"element_strides", {1, 1, 1}},
          {"interleave", "NONE"},
          {"swizzle", "128B"},
          {"l2_promotion", "256B"},
          {"oob_fill", "NONE"},
          {"base_alignment_bytes", 16}};
}

nlohmann::json kernel_json(const ExportedKernel& kernel) {
  nlohmann::json json = entry_json(kernel);
  json["arguments"] = kAttentionArguments;
  json["grid"] = grid_rule_json(kernel.config.persistence);
  if (kernel.config.is_wgmma()) json["tensor_maps"] = tensor_maps_json(kernel.config);
  return json;
}

// The launch fields of an attention entry that its problem and config determine, checked as a
// GEMM entry's are (read_gemm_kernel): the launch opts in to this much shared memory, and less
// than the kernel's tiles need would fault.
void require_attention_launch_fields(const JsonFieldReader& kernel,
                                     const ExportedKernel& exported) {
  require_equal(kernel, "dynamic_shared_bytes", std::to_string(exported.dynamic_shared_bytes),
                std::to_string(attention_dynamic_shared_bytes(exported.problem, exported.config)),
                "the problem's head dim and the config's tiles and stages need");
}

ExportedKernel read_attention_kernel(const JsonFieldReader& kernel, int schema_version) {
  ExportedKernel exported;
  exported.problem = read_attention_problem(kernel.object("problem"));
  exported.config = read_attention_config(kernel);
  // Each version's kernels have one launch ABI, named by the entry: an older export's is read (its
  // measurements import) but never launched (the export catalog refuses it).
  read_kernel_base(kernel,
                   schema_version >= kManifestLseVersion          ? kAttentionEntryName
                   : schema_version >= kManifestLaunchArgsVersion ? kAttentionEntryWithoutLse
                                                                  : kLegacyAttentionEntryName,
                   exported.config.threads(), exported);
  require_attention_launch_fields(kernel, exported);
  if (schema_version >= kManifestLaunchArgsVersion) {
    require_equal(
        kernel, "arguments", kernel.text("arguments"),
        schema_version >= kManifestLseVersion ? kAttentionArguments : kAttentionArgumentsWithoutLse,
        "the attention entry of this manifest version takes");
  }
  const JsonFieldReader grid = kernel.object("grid");
  require_equal(grid, "rule", grid.text("rule"), grid_rule_name(exported.config.persistence),
                "the config's persistence makes it");
  return exported;
}

std::string grid_rule_name(GemmPersistence persistence) {
  return std::string(to_string(persistence));
}

nlohmann::json grid_rule_json(const GemmConfig& config) {
  const SwizzleLaunch swizzle = swizzle_launch(config);
  nlohmann::json rule = {
      {"rule", grid_rule_name(config.persistence)},
      {"tiles", "ceil(m / block_m) * ceil(n / block_n)"},
      {"swizzle_axis", swizzle.axis},
      {"swizzle_group", swizzle.group},
      {"swizzle_group_clamp", "min(swizzle_group, max(ceil(m / block_m), ceil(n / block_n)))"}};
  if (config.path == InstructionPath::wgmma) {
    // The raster walks cluster tiles; the grid is whole co-resident clusters.
    rule["tiles"] = "ceil(ceil(m / block_m) / cluster_m) * ceil(ceil(n / block_n) / cluster_n)";
    rule["swizzle_group_clamp"] =
        "min(swizzle_group, max(ceil(ceil(m / block_m) / cluster_m), "
        "ceil(ceil(n / block_n) / cluster_n)))";
    rule["ctas"] = config.cluster_size() > 1
                       ? "min(tiles * cluster_m * cluster_n, cluster_m * cluster_n * "
                         "cuOccupancyMaxActiveClusters)"
                       : "min(tiles, sm_count)";
    if (config.persistence == GemmPersistence::stream_k) {
      rule["ctas"] = config.cluster_size() > 1
                         ? "cluster_m * cluster_n * cuOccupancyMaxActiveClusters"
                         : "sm_count";
      rule["tile_counter"] =
          "scratch: round_up(2 * ctas, 4) ints, zeroed on the launch stream before each launch, "
          "then ctas * block_m * block_n floats";
    } else {
      rule["tile_counter"] = config.persistence == GemmPersistence::dynamic_loop
                                 ? "one int, zeroed on the launch stream before each launch"
                                 : "none (pass null)";
    }
  } else if (config.persistence == GemmPersistence::grid) {
    rule["ctas"] = "tiles";
  } else {
    rule["ctas"] = "min(tiles, blocks_per_sm * sm_count)";
    rule["blocks_per_sm"] = "cuOccupancyMaxActiveBlocksPerMultiprocessor at load";
  }
  return rule;
}

namespace {

// A transposed config's kernel computes C^T: what a launcher must swap.
constexpr const char* kTransposedProduct =
    "C^T = B^T * A^T: pass the problem's n as the entry's m and its m as n (m and n in the grid "
    "rule are the entry's); tensor_maps are in argument order (B, A, C)";

// How to encode the wgmma kernel's three maps (cuTensorMapEncodeTiled), for this problem: passed
// by value as its first three arguments.
nlohmann::json tensor_maps_json(const GemmProblem& problem, const GemmConfig& config) {
  nlohmann::json maps = nlohmann::json::array();
  for (const TensorMapDescription& map : gemm_tensor_map_descriptions(problem, config)) {
    maps.push_back({{"operand", map.name},
                    {"data_type", map.element == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ? "bf16" : "f16"},
                    {"dims", {map.dims[0], map.dims[1]}},
                    {"row_stride_bytes", map.strides[0]},
                    {"box", {map.box[0], map.box[1]}},
                    {"interleave", "none"},
                    {"swizzle", "128B"},
                    {"l2_promotion", "256B"},
                    {"oob_fill", "none"},
                    {"base_alignment_bytes", 16}});
  }
  return maps;
}

}  // namespace

nlohmann::json kernel_json(const ExportedGemmKernel& kernel) {
  nlohmann::json json = entry_json(kernel);
  json["grid"] = grid_rule_json(kernel.config);
  if (kernel.config.path == InstructionPath::wgmma) {
    json["arguments"] = kGemmWgmmaArguments;
    json["tensor_maps"] = tensor_maps_json(kernel.problem, kernel.config);
    if (kernel.config.transposed) json["product"] = kTransposedProduct;
  }
  return json;
}

ExportedGemmKernel read_gemm_kernel(const JsonFieldReader& kernel) {
  ExportedGemmKernel exported;
  exported.problem = read_gemm_problem(kernel.object("problem"));
  exported.config = read_gemm_config(kernel);
  read_kernel_base(kernel, gemm_entry_name(exported.config), exported.config.threads(), exported);
  // The launch opts in to this much shared memory: less than the pipeline needs would fault.
  require_equal(kernel, "dynamic_shared_bytes", std::to_string(exported.dynamic_shared_bytes),
                std::to_string(gemm_dynamic_shared_bytes(exported.config)),
                "the config's tiles and stages need");
  const JsonFieldReader grid = kernel.object("grid");
  require_equal(grid, "rule", grid.text("rule"), grid_rule_name(exported.config.persistence),
                "the config's persistence makes it");
  const SwizzleLaunch swizzle = swizzle_launch(exported.config);
  require_equal(grid, "swizzle_axis", std::to_string(grid.integer("swizzle_axis", 0, 1)),
                std::to_string(swizzle.axis), "the config's swizzle makes it");
  require_equal(grid, "swizzle_group",
                std::to_string(grid.integer("swizzle_group", 0, std::int64_t{1} << 31)),
                std::to_string(swizzle.group), "the config's swizzle makes it");
  if (exported.config.path == InstructionPath::wgmma) {
    require_equal(kernel, "arguments", kernel.text("arguments"), kGemmWgmmaArguments,
                  "the wgmma entry takes");
    const nlohmann::json expected = tensor_maps_json(exported.problem, exported.config);
    require_equal(kernel, "tensor_maps", kernel.value("tensor_maps").dump(), expected.dump(),
                  "the problem and config make");
    if (exported.config.transposed) {
      require_equal(kernel, "product", kernel.text("product"), kTransposedProduct,
                    "a transposed config computes");
    }
  }
  return exported;
}

}  // namespace swr
