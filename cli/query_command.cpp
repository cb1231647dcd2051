#include "cli/commands.hpp"

#include <cstdio>
#include <iostream>

#include "cli/problem_options.hpp"
#include "db/database_location.hpp"
#include "runtime/tuned_kernel_forms.hpp"
#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/tuning/result_table.hpp"

namespace swr::cli {
namespace {

AttentionProblem asked_attention_problem(const QueryOptions& options) {
  if (options.seq.empty()) throw UsageError("missing --seq: allowed a positive integer");
  return parse_attention_problem(options);
}

GemmProblem asked_gemm_problem(const QueryOptions& options) {
  std::string given =
      options.attention_options_given.empty() ? "" : options.attention_options_given.front();
  if (given.empty() && !options.head_options.kv_heads.empty()) given = "--kv-heads";
  if (given.empty() && !options.head_options.causal_align.empty()) given = "--causal-align";
  if (!given.empty()) {
    throw UsageError(given +
                     " belongs to the attention family: allowed with --family gemm are --gpu, "
                     "--m, --n, --k, --size, --dtype, --db, --export and --json");
  }
  return single_gemm_problem(options.gemm, parse_dtype_option(options.dtype));
}

std::string format_distance(double distance) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", distance);
  return text;
}

template <class Kernel>
void print_choice(const TunedChoiceOf<Kernel>& choice, const std::string& gpu,
                  const std::string& asked_key, const TunedCatalog& catalog) {
  std::cout << asked_key << " on " << gpu << ": " << to_string(choice.match);
  if (!choice.kernel) {
    std::cout << "\n  " << choice.why_none << "\n";
    return;
  }
  const Kernel& kernel = *choice.kernel;
  if (choice.match == MatchKind::nearest) {
    std::cout << " (tuned shape " << kernel.problem.key() << ", distance "
              << format_distance(choice.distance) << ")";
  }
  const MeasuredFigures& measured = kernel.measured;
  std::cout << "\n  variant   " << kernel.config_key << "\n  measured  "
            << format_milliseconds(measured.median_ms) << " ms median (p95 "
            << format_milliseconds(measured.p95_ms) << " ms), " << format_tflops(measured.tflops)
            << " TFLOP/s, L2 hit rate " << format_hit_rate(measured.l2_hit_rate) << ", L2 misses "
            << format_count(measured.l2_sector_misses) << "\n  on        " << kernel.device_name
            << " (" << kernel.arch << ", " << kernel.sm_count << " SMs) at " << measured.measured_at
            << ", build " << kernel.source_hash.substr(0, 12) << " (NVRTC "
            << kernel.toolkit_version << ")\n  from      " << catalog.description() << "\n";
}

template <class Problem>
int answer(const QueryOptions& options, const Problem& problem) {
  if (options.gpu.empty()) throw UsageError("missing --gpu: allowed a GPU name as tuned, or auto");
  const TunedCatalog catalog = [&] {
    if (!options.export_dir.empty()) return TunedCatalog::open_export(options.export_dir);
    const db::DatabaseLocation location = db::locate_database(
        options.database_given ? std::optional<std::string>(options.database) : std::nullopt);
    return TunedCatalog::open_database(location.path);
  }();
  const std::string gpu = options.gpu == "auto" ? resolve_gpu("auto").name : options.gpu;
  const auto choice = catalog.best(gpu, problem);
  if (options.json) {
    nlohmann::json output = tuned_choice_json(choice, problem);
    output["gpu"] = gpu;
    output["source"] = catalog.description();
    std::cout << output.dump(2) << "\n";
  } else {
    print_choice(choice, gpu, problem.key(), catalog);
  }
  return 0;
}

}  // namespace

CLI::App* add_query_command(CLI::App& app, QueryOptions& options) {
  CLI::App* command = app.add_subcommand(
      "query",
      "Print the variant the runtime chooses for a shape on a GPU: exact, or the nearest tuned "
      "shape, with its measured figures");
  command->add_option("--gpu", options.gpu, "GPU name as tuned (h200, ...), or auto")
      ->type_name("NAME");
  const auto attention_option = [&options](const char* name) {
    return
        [&options, name](const std::string&) { options.attention_options_given.push_back(name); };
  };
  command->add_option("--seq", options.seq, "Attention: query sequence length")
      ->type_name("S")
      ->each(attention_option("--seq"));
  command
      ->add_option("--seq-kv", options.seq_kv,
                   "Attention: key/value sequence length (default: --seq)")
      ->type_name("S")
      ->each(attention_option("--seq-kv"));
  command->add_option("--batch", options.batch, "Attention: batch size")
      ->type_name("B")
      ->capture_default_str()
      ->each(attention_option("--batch"));
  command->add_option("--heads", options.heads, "Attention: heads")
      ->type_name("H")
      ->capture_default_str()
      ->each(attention_option("--heads"));
  command->add_option("--head-dim", options.head_dim, "Attention: head dimension")
      ->type_name("D")
      ->capture_default_str()
      ->each(attention_option("--head-dim"));
  command->add_option("--dtype", options.dtype, "f16 or bf16")
      ->type_name("TYPE")
      ->capture_default_str();
  command->add_flag("--causal", options.causal, "Attention: causal mask")
      ->each(attention_option("--causal"));
  add_attention_head_options(*command, options.head_options);
  add_gemm_shape_options(*command, options.gemm);
  CLI::Option* database = add_database_option(*command, options.database, options.database_given);
  command->add_option("--export", options.export_dir, "Ask an export directory instead")
      ->type_name("DIR")
      ->excludes(database);
  command->add_flag("--json", options.json, "Print JSON");
  command->footer(
      "Examples:\n"
      "  swr-tune query --gpu h200 --seq 65536 --head-dim 128 --causal\n"
      "  swr-tune query --family gemm --gpu h200 --m 8192 --n 4096 --k 1024 --dtype bf16\n"
      "  swr-tune query --family gemm --gpu h200 --size 4096 --export kernels-h200/\n"
      "Nearest attention shape: same head dim, dtype, causal mode, GQA ratio and causal "
      "alignment, then the closest K/V working set over L2 and Q tiles over SMs. Nearest GEMM "
      "shape: same dtype, then the "
      "closest (log2 m, log2 n, log2 k). See docs/runtime.md.");
  return command;
}

int run_query_command(const QueryOptions& options) {
  if (is_gemm_family(options.gemm)) return answer(options, asked_gemm_problem(options));
  return answer(options, asked_attention_problem(options));
}

}  // namespace swr::cli
