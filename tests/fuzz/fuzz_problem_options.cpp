// The problem options of the swr-tune command line (`space`, `compile`, `model` and the main job:
// --family, --gpu, --seq ... --causal-align, --m --n --k --size, --dtype, --config), as a user
// types them. The input is the arguments after the command, one a line (a last newline ends the
// last argument; an empty line is an empty argument; at most kMaxArguments). They are parsed by
// CLI11 the way swr-tune's commands are built (add_problem_options, every empty value refused,
// extras kept and refused as main() does), then resolved as `space` and `compile` do: the
// attention problem (resolve_target, then select_space for --config keys) or the GEMM one
// (resolve_gemm_selection, then select_gemm_space). Allowed outcomes: success, CLI::ParseError
// (CLI11's own, --help included) and swr::UsageError; any other exception, crash or sanitizer
// report is a finding. Nothing here touches the GPU, the network or the disk: resolving `--gpu
// auto` (in any case, as resolve_gpu reads it) would load the CUDA driver to find the present
// device, so the target maps it to the built-in h200 profile before resolving (the checks take
// "auto" as they take "h200": a name they do not resolve).
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/option_values.hpp"
#include "cli/problem_options.hpp"
#include "swr/usage_error.hpp"
#include "tuner/gemm_compilation.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/variant_compilation.hpp"

namespace {

constexpr std::size_t kMaxArguments = 64;

// One argument a line; false for more than kMaxArguments.
bool split_arguments(std::string_view text, std::vector<std::string>& arguments) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    arguments.emplace_back(text.substr(0, end));
    if (arguments.size() > kMaxArguments) return false;
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return true;
}

// What the command does with the parsed options, short of compiling, tuning or printing.
void resolve(swr::cli::ProblemOptions options) {
  using namespace swr::cli;
  if (swr::is_auto_gpu(options.gpu)) options.gpu = "h200";
  if (is_gemm_family(options.gemm)) {
    const GemmSelection selection =
        resolve_gemm_selection(options, "--gpu, --m, --n, --k, --size, --dtype, --config");
    if (!selection.wanted.empty()) swr::select_gemm_space(selection.target, selection.wanted);
    return;
  }
  const swr::Target target = resolve_target(options);
  if (!options.config_keys.empty()) swr::select_space(target, options.config_keys);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> arguments{"swr-tune"};
  if (!split_arguments(std::string_view(reinterpret_cast<const char*>(data), size), arguments)) {
    return 0;
  }
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());

  swr::cli::ProblemOptions options;
  CLI::App app("fuzz_problem_options", "swr-tune");
  swr::cli::add_problem_options(app, options);
  swr::cli::refuse_empty_option_values(app);
  app.allow_extras();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    return 0;
  }
  if (!app.remaining(true).empty()) return 0;  // main(): "unknown option or argument", exit 2
  try {
    resolve(options);
  } catch (const swr::UsageError&) {
  }
  return 0;
}
