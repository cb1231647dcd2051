#include "cli/commands.hpp"

#include <algorithm>
#include <iostream>
#include <set>
#include <utility>

#include "cli/problem_options.hpp"
#include "cli/show_views.hpp"
#include "db/database_location.hpp"
#include "db/results_database.hpp"
#include "generator/kernel_family.hpp"
#include "runtime/manifest_entries.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/usage_error.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/text_format.hpp"
#include "tuner/tuning/result_table.hpp"

namespace swr::cli {

nlohmann::json stored_gpu_json(const db::StoredGpu& stored) {
  return gpu_json(stored.gpu);
}

nlohmann::json stored_problem_json(const db::StoredProblem& problem) {
  nlohmann::json json = problem.json;
  json["key"] = problem.key;
  json["family"] = problem.family;
  return json;
}

namespace {

// The shape `show --seq S ...` names, with tune's defaults for what is not given.
AttentionProblem shape_of(const ShowOptions& options) {
  AttentionProblem problem;
  problem.seq_q = parse_positive(options.seq, "--seq");
  problem.seq_kv =
      options.seq_kv.empty() ? problem.seq_q : parse_positive(options.seq_kv, "--seq-kv");
  problem.batch = options.batch.empty() ? 8 : parse_positive(options.batch, "--batch");
  problem.heads = options.heads.empty() ? 1 : parse_positive(options.heads, "--heads");
  problem.head_dim = options.head_dim.empty() ? 64 : parse_positive(options.head_dim, "--head-dim");
  if (!options.dtype.empty()) {
    const std::optional<DataType> dtype = parse_data_type(options.dtype);
    if (!dtype) throw UsageError("unsupported dtype '" + options.dtype + "': allowed f16, bf16");
    problem.dtype = *dtype;
  }
  problem.causal = options.causal;
  apply_attention_head_options(options.head_options, problem);
  problem.validate();
  return problem;
}

// Problem filters of the summary: only the options given count.
bool matches_filters(const db::StoredProblem& stored, const ShowOptions& options) {
  if (options.family_given && stored.family != options.gemm.family) return false;
  // GEMM problems (family "gemm") have none of the attention filters' fields: listed when none is
  // given; --dtype still applies.
  if (!stored.attention) {
    const bool attention_filter = options.causal || !options.seq_kv.empty() ||
                                  !options.batch.empty() || !options.heads.empty() ||
                                  !options.head_dim.empty() || options.head_options.given();
    return stored.family == "gemm" && !attention_filter &&
           (options.dtype.empty() || stored.json.value("dtype", std::string()) == options.dtype);
  }
  const AttentionProblem& problem = *stored.attention;
  auto matches = [](const std::string& text, int value, const char* name) {
    return text.empty() || parse_positive(text, name) == value;
  };
  if (!options.dtype.empty() && options.dtype != to_string(problem.dtype)) return false;
  if (options.causal && !problem.causal) return false;
  if (!options.head_options.causal_align.empty() &&
      options.head_options.causal_align != to_string(problem.effective_causal_align())) {
    return false;
  }
  return matches(options.head_options.kv_heads, problem.kv_head_count(), "--kv-heads") &&
         matches(options.seq_kv, problem.seq_kv, "--seq-kv") &&
         matches(options.batch, problem.batch, "--batch") &&
         matches(options.heads, problem.heads, "--heads") &&
         matches(options.head_dim, problem.head_dim, "--head-dim");
}

// GPU ids the --gpu option names (all GPUs when not given). Throws UsageError for a name that is
// neither a built-in profile nor in the database.
std::optional<std::set<std::int64_t>> selected_gpus(const db::ResultsDatabase& database,
                                                    const ShowOptions& options) {
  if (options.gpu.empty()) return std::nullopt;
  std::string name = options.gpu;
  if (name == "auto") name = resolve_gpu("auto").name;
  std::set<std::int64_t> ids;
  for (const db::StoredGpu& gpu : database.gpus_named(name)) ids.insert(raw(gpu.id));
  if (ids.empty() && !find_gpu_profile(name)) {
    std::set<std::string> known;
    for (const db::ProblemSummary& summary : database.problem_summaries()) {
      known.insert(summary.gpu.gpu.name);
    }
    std::string allowed;
    for (const std::string& known_name : known)
      allowed += (allowed.empty() ? "" : ", ") + known_name;
    throw UsageError("unknown GPU '" + options.gpu + "' in " + database.path().string() +
                     ": allowed " + (allowed.empty() ? gpu_profile_names() : allowed));
  }
  return ids;
}

int show_summaries(const db::ResultsDatabase& database, const ShowOptions& options) {
  const std::optional<std::set<std::int64_t>> gpus = selected_gpus(database, options);
  std::vector<db::ProblemSummary> summaries;
  for (db::ProblemSummary& summary : database.problem_summaries()) {
    if (gpus && gpus->count(raw(summary.gpu.id)) == 0) continue;
    if (!matches_filters(summary.problem, options)) continue;
    summaries.push_back(std::move(summary));
  }

  if (options.json) {
    nlohmann::json results = nlohmann::json::array();
    for (const db::ProblemSummary& summary : summaries) {
      results.push_back({{"gpu", stored_gpu_json(summary.gpu)},
                         {"problem", stored_problem_json(summary.problem)},
                         {"best", summary.best ? measurement_json(*summary.best) : nullptr},
                         {"variants_measured", summary.variants_measured},
                         {"variants_failed", summary.variants_failed}});
    }
    std::cout << nlohmann::json{{"database", database.path().string()}, {"results", results}}.dump(
                     2)
              << "\n";
    return 0;
  }
  if (summaries.empty()) {
    std::cout << "no results in " << database.path().string() << " for these options\n";
    return 0;
  }
  std::cout << "results in " << database.path().string() << ":\n";
  TextTable table({"gpu", "problem", "best variant", ">ms", ">TFLOP/s", ">L2 misses", ">hit rate",
                   ">measured", ">failed"});
  for (const db::ProblemSummary& summary : summaries) {
    std::vector<std::string> row = {summary.gpu.gpu.name, summary.problem.key};
    if (summary.best) {
      const db::MeasurementRecord& best = summary.best->record;
      row.push_back(summary.best->config_key);
      row.push_back(format_milliseconds(best.median_ms));
      row.push_back(format_tflops(best.tflops));
      row.push_back(format_misses(best));
      row.push_back(format_hit_rate(best.l2_hit_rate));
    } else {
      row.insert(row.end(), {"(none valid)", "-", "-", "-", "-"});
    }
    row.push_back(std::to_string(summary.variants_measured));
    row.push_back(std::to_string(summary.variants_failed));
    table.add_row(std::move(row));
  }
  table.print(std::cout, "  ");
  return 0;
}

// The shape's problem of the pass --family names: its row id (when stored) and its key.
std::pair<std::optional<db::ProblemId>, std::string> stored_pass(
    const db::ResultsDatabase& database, const ShowOptions& options) {
  const AttentionProblem shape = shape_of(options);
  if (options.gemm.family == kAttentionBackwardFamilyName) {
    const AttentionBackwardProblem backward{shape};
    return {database.find_problem(backward), backward.key()};
  }
  return {database.find_problem(shape), shape.key()};
}

int show_shape(const db::ResultsDatabase& database, const ShowOptions& options) {
  const auto [problem_id, key] = stored_pass(database, options);
  const std::optional<std::set<std::int64_t>> gpus = selected_gpus(database, options);
  const std::vector<db::StoredGpu> measured_on = gpus_that_measured(database, problem_id, gpus);

  const std::vector<GpuPredictions> predictions =
      problem_id ? stored_predictions(database, *problem_id, gpus) : std::vector<GpuPredictions>{};

  if (options.json) {
    nlohmann::json results = nlohmann::json::array();
    for (const db::StoredGpu& gpu : measured_on) {
      nlohmann::json variants = nlohmann::json::array();
      for (const db::StoredMeasurement& measurement :
           database.measurements_for(gpu.id, *problem_id)) {
        variants.push_back(measurement_json(measurement));
      }
      results.push_back({{"gpu", stored_gpu_json(gpu)},
                         {"problem", stored_problem_json(database.problem(*problem_id))},
                         {"variants", std::move(variants)}});
    }
    nlohmann::json predicted = nlohmann::json::array();
    for (const GpuPredictions& gpu : predictions) predicted.push_back(predictions_json(gpu));
    std::cout << nlohmann::json{{"database", database.path().string()},
                                {"problem", key},
                                {"results", results},
                                {"predictions", predicted}}
                     .dump(2)
              << "\n";
    return 0;
  }
  for (const GpuPredictions& gpu : predictions) print_predictions(std::cout, key, gpu);
  if (measured_on.empty()) {
    if (predictions.empty()) {
      std::cout << "no results for " << key << (options.gpu.empty() ? "" : " on " + options.gpu)
                << " in " << database.path().string() << "\n";
    }
    return 0;
  }
  for (const db::StoredGpu& gpu : measured_on) {
    const std::vector<db::StoredMeasurement> measurements =
        database.measurements_for(gpu.id, *problem_id);
    const auto failed = std::count_if(measurements.begin(), measurements.end(), [](const auto& m) {
      return m.record.status != db::MeasurementStatus::ok;
    });
    std::cout << key << " on " << gpu.gpu.name << " (" << gpu.gpu.device_name
              << "): " << measurements.size() << " variants measured, " << failed << " failed\n";
    print_all_variants(std::cout, measurements);
    print_order_comparison(std::cout, measurements);
  }
  return 0;
}

}  // namespace

CLI::App* add_show_command(CLI::App& app, ShowOptions& options) {
  CLI::App* command = app.add_subcommand(
      "show",
      "Print what the results database holds: the best variant per GPU and shape, or every "
      "variant of one shape (--seq)");
  command->add_option("--gpu", options.gpu, "Only this GPU (a profile name, or auto)")
      ->type_name("NAME");
  command->add_option("--seq", options.seq, "Show every variant of this shape")->type_name("S");
  command->add_option("--seq-kv", options.seq_kv, "Key/value sequence length")->type_name("S");
  command->add_option("--batch", options.batch, "Batch size (with --seq: default 8)")
      ->type_name("B");
  command->add_option("--heads", options.heads, "Heads (with --seq: default 1)")->type_name("H");
  command->add_option("--head-dim", options.head_dim, "Head dimension (with --seq: default 64)")
      ->type_name("D");
  command->add_option("--dtype", options.dtype, "f16 or bf16 (with --seq: default f16)")
      ->type_name("TYPE");
  command->add_flag("--causal", options.causal, "The causal shape (without --seq: causal only)");
  add_attention_head_options(*command, options.head_options);
  add_database_option(*command, options.database, options.database_given);
  add_gemm_shape_options(*command, options.gemm);
  command->get_option("--family")->each([&options](const std::string&) {
    options.family_given = true;
  });
  command->add_flag("--json", options.json, "Print JSON instead of tables");
  command->footer(
      "Examples:\n"
      "  swr-tune show\n"
      "  swr-tune show --family attention-backward --gpu h200\n"
      "  swr-tune show --gpu h200 --seq 131072 --head-dim 128 --causal --json\n"
      "  swr-tune show --family gemm --gpu h200 --size 4096");
  return command;
}

int run_show_command(const ShowOptions& options) {
  // Bad values before opening anything.
  std::optional<GemmProblem> gemm_shape;
  if (is_gemm_family(options.gemm)) {
    const bool attention_option = !options.seq.empty() || !options.seq_kv.empty() ||
                                  !options.batch.empty() || !options.heads.empty() ||
                                  !options.head_dim.empty() || options.causal ||
                                  options.head_options.given();
    if (attention_option) {
      throw UsageError(
          "--seq, --seq-kv, --batch, --heads, --kv-heads, --head-dim, --causal and "
          "--causal-align are attention options: allowed without --family gemm");
    }
    const GemmOptions& gemm = options.gemm;
    if (!gemm.m.empty() || !gemm.n.empty() || !gemm.k.empty() || !gemm.size.empty()) {
      DataType dtype = DataType::f16;
      if (!options.dtype.empty()) {
        const std::optional<DataType> parsed = parse_data_type(options.dtype);
        if (!parsed)
          throw UsageError("unsupported dtype '" + options.dtype + "': allowed f16, bf16");
        dtype = *parsed;
      }
      gemm_shape = single_gemm_problem(gemm, dtype);
    }
  } else if (!options.seq.empty()) {
    shape_of(options);
  } else {
    const AttentionHeadOptions& heads = options.head_options;
    if (!heads.kv_heads.empty()) parse_positive(heads.kv_heads, "--kv-heads");
    if (!heads.causal_align.empty() && !parse_causal_alignment(heads.causal_align)) {
      throw UsageError("bad --causal-align '" + heads.causal_align +
                       "': allowed top_left, bottom_right");
    }
  }
  const db::DatabaseLocation location = db::locate_database(
      options.database_given ? std::optional<std::string>(options.database) : std::nullopt);
  const db::ResultsDatabase database(location.path, db::OpenMode::read_only);
  if (gemm_shape) {
    return show_gemm_shape(database, *gemm_shape, selected_gpus(database, options), options.json);
  }
  return options.seq.empty() ? show_summaries(database, options) : show_shape(database, options);
}

}  // namespace swr::cli
