// An attention kernel's entry in manifest.json ("kernels"): its problem, config and grid rule,
// beside the fields every entry has.
#include "generator/kernel_source.hpp"
#include "runtime/manifest_entries.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

nlohmann::json problem_json(const AttentionProblem& problem) {
  return {{"family", "attention"},        {"key", problem.key()},
          {"batch", problem.batch},       {"heads", problem.heads},
          {"seq_q", problem.seq_q},       {"seq_kv", problem.seq_kv},
          {"head_dim", problem.head_dim}, {"dtype", std::string(to_string(problem.dtype))},
          {"causal", problem.causal}};
}

AttentionProblem read_problem(const JsonFieldReader& problem) {
  require_family(problem, "attention");
  AttentionProblem shape;
  shape.batch = problem.positive_int("batch");
  shape.heads = problem.positive_int("heads");
  shape.seq_q = problem.positive_int("seq_q");
  shape.seq_kv = problem.positive_int("seq_kv");
  shape.head_dim = problem.positive_int("head_dim");
  shape.dtype = read_dtype(problem);
  shape.causal = problem.boolean("causal");
  try {
    shape.validate();
  } catch (const UsageError& error) {
    problem.fail("head_dim",
                 std::string("and its siblings are not a valid shape: ") + error.what());
  }
  require_equal(problem, "key", problem.text("key"), shape.key(), "its fields make the key");
  return shape;
}

AttentionConfig read_config(const JsonFieldReader& kernel) {
  kernel.object("config");  // an object, or the error names the field
  AttentionConfig config;
  try {
    config = AttentionConfig::from_json(kernel.value("config"));
  } catch (const UsageError& error) {
    kernel.fail("config", std::string("is not a config: ") + error.what());
  }
  require_equal(kernel, "config_key", kernel.text("config_key"), config.key(),
                "the config JSON has the key");
  return config;
}

}  // namespace

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

nlohmann::json kernel_json(const ExportedKernel& kernel) {
  nlohmann::json json = kernel_base_json(kernel);
  json["problem"] = problem_json(kernel.problem);
  json["config_key"] = kernel.config.key();
  json["config"] = kernel.config.to_json();
  json["grid"] = grid_rule_json(kernel.config.persistence);
  return json;
}

ExportedKernel read_attention_kernel(const JsonFieldReader& kernel) {
  ExportedKernel exported;
  exported.problem = read_problem(kernel.object("problem"));
  exported.config = read_config(kernel);
  read_kernel_base(kernel, kAttentionEntryName, exported.config.threads(), exported);
  const JsonFieldReader grid = kernel.object("grid");
  require_equal(grid, "rule", grid.text("rule"), grid_rule_name(exported.config.persistence),
                "the config's persistence makes it");
  return exported;
}

}  // namespace swr
