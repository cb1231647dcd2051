#include "cli/space_command.hpp"

#include <iostream>
#include <map>

#include "cli/json_forms.hpp"
#include "generator/resource_model.hpp"
#include "tuner/text_format.hpp"

namespace swr::cli {

namespace {

void print_json(const Target& target, const AttentionSpace& space) {
  nlohmann::json configs = nlohmann::json::array();
  for (const AttentionConfig& config : space.configs) {
    configs.push_back({{"key", config.key()},
                       {"config", config.to_json()},
                       {"resources", resources_json(attention_resource_use(target.problem, config,
                                                                           target.gpu))}});
  }
  nlohmann::json pruned = nlohmann::json::array();
  for (const PrunedConfig& dropped : space.pruned) {
    pruned.push_back({{"key", dropped.config.key()}, {"reason", dropped.reason}});
  }
  const nlohmann::json output = {{"problem", problem_json(target.problem)},
                                 {"gpu", gpu_json(target.gpu)},
                                 {"configs", std::move(configs)},
                                 {"pruned", std::move(pruned)}};
  std::cout << output.dump(2) << '\n';
}

void print_table(const Target& target, const AttentionSpace& space, bool show_pruned) {
  TextTable table({"key", ">threads", ">smem", ">est. CTAs/SM", "limited by"});
  for (const AttentionConfig& config : space.configs) {
    const ResourceUse use = attention_resource_use(target.problem, config, target.gpu);
    table.add_row({config.key(), std::to_string(use.threads_per_block),
                   format_bytes(use.dynamic_shared_bytes), std::to_string(use.blocks_per_sm),
                   use.limited_by});
  }
  table.print(std::cout);
  std::cout << space.configs.size() << " variants of " << target.problem.key() << " for "
            << target.gpu.name << " (" << target.gpu.arch << ", " << target.gpu.sm_count << " SMs, "
            << format_bytes(target.gpu.l2_bytes) << " L2)\n";

  if (space.pruned.empty()) return;
  std::cout << space.pruned.size() << " pruned:\n";
  if (show_pruned) {
    for (const PrunedConfig& dropped : space.pruned) {
      std::cout << "  " << dropped.config.key() << ": " << dropped.reason << '\n';
    }
    return;
  }
  // Counted by reason, most frequent first; --show-pruned lists every variant.
  std::map<std::string, int> by_reason;
  for (const PrunedConfig& dropped : space.pruned) ++by_reason[dropped.reason];
  std::multimap<int, std::string, std::greater<>> by_count;
  for (const auto& [reason, count] : by_reason) by_count.emplace(count, reason);
  constexpr int kReasonsShown = 8;
  int shown = 0;
  for (const auto& [count, reason] : by_count) {
    if (shown++ == kReasonsShown) {
      std::cout << "  ... " << by_count.size() - kReasonsShown << " more reasons\n";
      break;
    }
    std::cout << "  " << count << " x " << reason << '\n';
  }
  std::cout << "(--show-pruned lists each one)\n";
}

}  // namespace

CLI::App* add_space_command(CLI::App& app, SpaceOptions& options) {
  CLI::App* command = app.add_subcommand(
      "space", "List the variants of the space the target GPU can run (after pruning)");
  add_problem_options(*command, options.problem);
  command->add_flag("--json", options.json, "Print JSON: problem, gpu, configs, pruned");
  command->add_flag("--show-pruned", options.show_pruned,
                    "List every pruned variant with its reason");
  command->footer("Example: swr-tune space --gpu gb10 --seq 131072 --head-dim 128 --causal");
  return command;
}

int run_space_command(const SpaceOptions& options) {
  const Target target = resolve_target(options.problem);
  const AttentionSpace space = select_space(target, options.problem.config_keys);
  if (options.json) {
    print_json(target, space);
  } else {
    print_table(target, space, options.show_pruned);
  }
  return 0;
}

}  // namespace swr::cli
