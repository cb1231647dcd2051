#include "cli/commands.hpp"

#include <iostream>
#include <map>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "generator/problem_json.hpp"
#include "generator/resource_model.hpp"
#include "tuner/family_compilation.hpp"
#include "tuner/gemm_compilation.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/json_forms.hpp"
#include "tuner/text_format.hpp"

namespace swr::cli {

namespace {

template <class Problem, class Space>
nlohmann::json space_json(const Problem& problem, const GpuProfile& gpu, const Space& space,
                          const auto& resources_of) {
  nlohmann::json configs = nlohmann::json::array();
  for (const auto& config : space.configs) {
    configs.push_back({{"key", config.key()},
                       {"config", config.to_json()},
                       {"resources", resources_json(resources_of(config))}});
  }
  nlohmann::json pruned = nlohmann::json::array();
  for (const auto& dropped : space.pruned) {
    pruned.push_back({{"key", dropped.config.key()}, {"reason", dropped.reason}});
  }
  return {{"problem", keyed_problem_json(problem)},
          {"gpu", gpu_json(gpu)},
          {"configs", std::move(configs)},
          {"pruned", std::move(pruned)}};
}

// Either family's space: its runnable configs with their resources, then the pruned ones.
template <class Problem, class Space>
void print_table(const Problem& problem, const GpuProfile& gpu, const Space& space,
                 bool show_pruned, const auto& resources_of) {
  TextTable table({"key", ">threads", ">smem", ">est. CTAs/SM", "limited by"});
  for (const auto& config : space.configs) {
    const ResourceUse use = resources_of(config);
    table.add_row({config.key(), std::to_string(use.threads_per_block),
                   format_bytes(use.dynamic_shared_bytes), std::to_string(use.blocks_per_sm),
                   use.limited_by});
  }
  table.print(std::cout);
  std::cout << space.configs.size() << " variants of " << problem.key() << " for " << gpu.name
            << " (" << gpu.arch << ", " << gpu.sm_count << " SMs, " << format_bytes(gpu.l2_bytes)
            << " L2)\n";

  if (space.pruned.empty()) return;
  std::cout << space.pruned.size() << " pruned:\n";
  if (show_pruned) {
    for (const auto& dropped : space.pruned) {
      std::cout << "  " << dropped.config.key() << ": " << dropped.reason << '\n';
    }
    return;
  }
  // Counted by reason, most frequent first; --show-pruned lists every variant.
  std::map<std::string, int> by_reason;
  for (const auto& dropped : space.pruned) ++by_reason[dropped.reason];
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

int run_gemm_space(const SpaceOptions& options) {
  const GemmSelection selection = resolve_gemm_selection(
      options.problem, "--gpu, --m, --n, --k, --size, --dtype, --config, --json and --show-pruned");
  const GemmTarget& target = selection.target;
  const GemmSpace space = select_gemm_space(target, selection.wanted);
  const auto resources_of = [&](const GemmConfig& config) {
    return gemm_resource_use(config, target.gpu);
  };
  if (options.json) {
    nlohmann::json output = space_json(target.problem, target.gpu, space, resources_of);
    output["family"] = "gemm";
    std::cout << output.dump(2) << '\n';
  } else {
    print_table(target.problem, target.gpu, space, options.show_pruned, resources_of);
  }
  return 0;
}

int run_backward_space(const SpaceOptions& options) {
  const AttentionBackwardProblem problem = resolve_backward_problem(options.problem);
  const GpuProfile gpu = resolve_gpu(options.problem.gpu);
  const AttentionBackwardSpace space =
      select_family_space<AttentionBackwardFamily>(problem, gpu, options.problem.config_keys);
  const auto resources_of = [&](const AttentionBackwardConfig& config) {
    return attention_backward_resource_use(problem, config, gpu);
  };
  if (options.json) {
    nlohmann::json output = space_json(problem, gpu, space, resources_of);
    output["family"] = kAttentionBackwardFamilyName;
    std::cout << output.dump(2) << '\n';
  } else {
    print_table(problem, gpu, space, options.show_pruned, resources_of);
  }
  return 0;
}

}  // namespace

CLI::App* add_space_command(CLI::App& app, SpaceOptions& options) {
  CLI::App* command = app.add_subcommand(
      "space", "List the variants of the space the target GPU can run (after pruning)");
  add_problem_options(*command, options.problem);
  command->add_flag("--json", options.json, "Print JSON: problem, gpu, configs, pruned");
  command->add_flag("--show-pruned", options.show_pruned,
                    "List every pruned variant with its reason");
  command->footer(
      "Examples:\n"
      "  swr-tune space --gpu gb10 --seq 131072 --head-dim 128 --causal\n"
      "  swr-tune space --family gemm --gpu h200 --size 4096 --show-pruned\n"
      "  swr-tune space --family attention-backward --gpu h200 --seq 16384 --head-dim 128");
  return command;
}

int run_space_command(const SpaceOptions& options) {
  if (is_gemm_family(options.problem.gemm)) return run_gemm_space(options);
  if (is_attention_backward_family(options.problem.gemm)) return run_backward_space(options);
  const Target target = resolve_target(options.problem);
  const AttentionSpace space = select_space(target, options.problem.config_keys);
  const auto resources_of = [&](const AttentionConfig& config) {
    return attention_resource_use(target.problem, config, target.gpu);
  };
  if (options.json) {
    std::cout << space_json(target.problem, target.gpu, space, resources_of).dump(2) << '\n';
  } else {
    print_table(target.problem, target.gpu, space, options.show_pruned, resources_of);
  }
  return 0;
}

}  // namespace swr::cli
