#include "cli/gemm_tuning_job.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "db/database_location.hpp"
#include "db/results_database.hpp"
#include "driver/device_context.hpp"
#include "generator/gemm_binaries.hpp"
#include "generator/gemm_space.hpp"
#include "generator/gemm_swizzle.hpp"
#include "generator/resource_model.hpp"
#include "swr/usage_error.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/tuning/gemm_sweep_report.hpp"
#include "tuner/tuning/gemm_tuning_session.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/worker_client.hpp"

namespace swr::cli {
namespace {

// The attention options have no meaning here: say so rather than ignore them.
void reject_attention_options(const ProblemOptions& problem, const TuningOptions& tuning) {
  const ProblemOptions defaults;
  const std::pair<bool, const char*> attention_only[] = {
      {!problem.seq.empty(), "--seq"},
      {!problem.seq_kv.empty(), "--seq-kv"},
      {problem.batch != defaults.batch, "--batch"},
      {problem.heads != defaults.heads, "--heads"},
      {problem.head_dim != defaults.head_dim, "--head-dim"},
      {problem.causal, "--causal"},
      {tuning.both, "--both"},
      {tuning.plant_fault, "--plant-fault"},
  };
  for (const auto& [given, option] : attention_only) {
    if (given) {
      throw UsageError(std::string(option) +
                       " belongs to the attention family: allowed with --family gemm are --gpu, "
                       "--m, --n, --k, --size, --sweep, --dtype, --config and the tuning options");
    }
  }
}

std::vector<GemmProblem> problems_of(const GemmOptions& options, DataType dtype) {
  if (options.sweep) {
    if (!options.m.empty() || !options.n.empty() || !options.k.empty() || !options.size.empty()) {
      throw UsageError("--sweep runs the paper's sizes: allowed without --m, --n, --k and --size");
    }
    std::vector<GemmProblem> problems;
    for (int size : kGemmSweepSizes) problems.push_back({size, size, size, dtype});
    return problems;
  }
  if (!options.sweep_out.empty()) throw UsageError("--sweep-out goes with --sweep");
  const bool no_size =
      options.m.empty() && options.n.empty() && options.k.empty() && options.size.empty();
  if (no_size) {
    throw UsageError("missing GEMM size: allowed --m M --n N --k K, --size S (square), or --sweep");
  }
  return {single_gemm_problem(options, dtype)};
}

std::vector<GemmConfig> parse_config_keys(const std::vector<std::string>& keys) {
  std::vector<GemmConfig> configs;
  for (const std::string& key : keys) {
    const std::optional<GemmConfig> config = GemmConfig::from_key(key);
    if (!config) {
      throw UsageError("bad --config '" + key +
                       "': allowed a GEMM config key, e.g. m128n256k32w2x4s4-grid-swzn1792");
    }
    configs.push_back(*config);
  }
  return configs;
}

// The variants of one problem: the pruned space (restricted to --config keys when given), or for
// the sweep one binary under every paper stride along n.
std::vector<GemmConfig> configs_for(const GemmProblem& problem, const GpuProfile& gpu,
                                    const std::vector<GemmConfig>& wanted, bool sweep) {
  if (sweep) {
    const GemmConfig binary =
        wanted.empty() ? *GemmConfig::from_key(kGemmSweepDefaultConfig) : wanted.front();
    if (const std::string why = gemm_resource_use(binary, gpu).does_not_fit; !why.empty()) {
      throw UsageError("config '" + binary.key() + "' does not fit " + gpu.name + " (" + why + ")");
    }
    std::vector<GemmConfig> configs;
    for (int stride : kPaperSwizzleStrides)
      configs.push_back(with_swizzle(binary, stride, SwizzleAxis::n));
    return configs;
  }
  const GemmSpace space = build_gemm_space(problem, gpu);
  if (wanted.empty()) return space.configs;
  for (const GemmConfig& config : wanted) {
    if (const std::string why = gemm_resource_use(config, gpu).does_not_fit; !why.empty()) {
      throw UsageError("config '" + config.key() + "' does not fit " + gpu.name + " (" + why + ")");
    }
  }
  return wanted;
}

// The GEMM worker behind the session's measurer interface.
class GemmWorkerMeasurer : public GemmVariantMeasurer {
 public:
  explicit GemmWorkerMeasurer(const InterruptFlag& interrupt)
      : worker_(measurement_worker_command(kMeasureGemmWorkerSubcommand), WorkerTimeouts{},
                &interrupt) {}
  VariantOutcome measure(const GemmVariantJob& job) override {
    return worker_.measure_message(gemm_measure_request(job),
                                   gemm_measurement_timeout_seconds(job.problem, job.gpu));
  }

 private:
  WorkerClient worker_;
};

int compile_only(const std::vector<GemmTuningShape>& shapes, const GpuProfile& gpu,
                 const CompileSettings& settings, const std::optional<GpuProfile>& present) {
  const NvrtcCompiler compiler;
  const CubinCache cache(settings.cache_dir);
  int failed = 0, compiled = 0;
  for (const GemmTuningShape& shape : shapes) {
    const auto binaries = compile_gemm_binaries(compiler, &cache, shape.problem, shape.configs,
                                                gpu.arch, settings.jobs);
    for (const auto& [name, binary] : binaries) {
      std::cout << "  " << name << "  "
                << (binary.kernel.ok
                        ? std::to_string(binary.kernel.registers) + " registers, " +
                              std::to_string(binary.kernel.spill_bytes) + " B spilled" +
                              (binary.kernel.from_cache ? " (cached)" : "")
                        : "FAILED: " + binary.kernel.log.substr(0, 300))
                << "\n";
      (binary.kernel.ok ? compiled : failed)++;
    }
    std::cout << "gemm " << shape.problem.key() << ": " << shape.configs.size() << " variants, "
              << binaries.size() << " kernel binaries\n";
  }
  std::cout << timing_needs_gpu(gpu, present) << " (compiled " << compiled << " binaries for "
            << gpu.arch << "; cubins cached in " << settings.cache_dir.string() << ")\n";
  return failed > 0 ? 1 : 0;
}

void write_sweep(const GemmTuningPlan& plan, const GemmTuningSummary& summary,
                 const std::filesystem::path& out_dir) {
  db::ResultsDatabase database(plan.database, db::OpenMode::read_only);
  db::GpuRecord gpu_record = db::GpuRecord::from_profile(plan.gpu);
  const std::optional<db::GpuId> gpu_id = database.find_gpu(gpu_record);
  std::vector<GemmSweepRow> rows;
  for (std::size_t i = 0; i < plan.shapes.size(); ++i) {
    const GemmTuningShape& shape = plan.shapes[i];
    GemmSweepRow row;
    row.size = shape.problem.m;
    row.cublas_ms = summary.baselines[i].median_ms;
    std::vector<db::StoredMeasurement> measurements;
    if (gpu_id) {
      if (auto problem_id = database.find_problem(shape.problem)) {
        measurements = database.measurements_for(*gpu_id, *problem_id);
      }
    }
    for (const GemmConfig& config : shape.configs) {
      GemmSweepCell cell;
      cell.stride = config.swizzle_stride;
      cell.tile_order =
          gemm_tile_order_name(gemm_tile_grid(shape.problem, config), swizzle_launch(config));
      for (const db::StoredMeasurement& m : measurements) {
        if (m.config_key == config.key() && m.record.status == db::MeasurementStatus::ok) {
          cell.median_ms = m.record.median_ms;
          if (!row.cublas_ms) {
            const auto found = m.record.method.find("cublas_median_ms");
            if (found != m.record.method.end() && found->is_number())
              row.cublas_ms = found->get<double>();
          }
        }
      }
      row.cells.push_back(cell);
    }
    rows.push_back(std::move(row));
  }
  const std::string variant =
      with_swizzle(plan.shapes.front().configs.front(), 0, SwizzleAxis::n).key();
  const std::string command =
      "swr-tune --family gemm --gpu " + plan.gpu.name + " --sweep --config " + variant;
  const std::string markdown = gemm_sweep_markdown(
      rows, plan.gpu, variant, std::string(to_string(plan.shapes.front().problem.dtype)), command);
  std::filesystem::create_directories(out_dir);
  std::ofstream(out_dir / "README.md") << markdown;
  std::ofstream(out_dir / "sweep.csv") << gemm_sweep_csv(rows);
  std::cout << "\n" << markdown << "\nsweep tables written to " << out_dir.string() << "\n";
}

}  // namespace

int run_gemm_tuning_job(const ProblemOptions& problem_options,
                        const CompileOptions& compile_options, const TuningOptions& tuning,
                        const GemmOptions& gemm) {
  // Every value first: bad input never touches the device, the compiler or the database.
  reject_attention_options(problem_options, tuning);
  if (problem_options.gpu.empty()) {
    throw UsageError("missing --gpu: allowed " + gpu_profile_names());
  }
  if (problem_options.gpu != "auto" && !find_gpu_profile(problem_options.gpu)) {
    resolve_gpu(problem_options.gpu);  // throws the "unknown GPU" UsageError
  }
  const std::optional<DataType> dtype = parse_data_type(problem_options.dtype);
  if (!dtype)
    throw UsageError("unsupported dtype '" + problem_options.dtype + "': allowed f16, bf16");
  if (!compile_options.limit.empty() && !tuning.time_budget.empty()) {
    throw UsageError("--limit and --time-budget exclude each other: allowed one of them");
  }
  const std::optional<double> time_budget = parse_time_budget(tuning);
  const CompileSettings settings = parse_compile_options(compile_options);
  const std::vector<GemmProblem> problems = problems_of(gemm, *dtype);
  const std::vector<GemmConfig> wanted = parse_config_keys(problem_options.config_keys);
  selected_device_ordinal();
  GpuProfile gpu = resolve_gpu(problem_options.gpu);
  std::vector<GemmTuningShape> shapes;
  for (const GemmProblem& problem : problems)
    shapes.push_back({problem, configs_for(problem, gpu, wanted, gemm.sweep)});
  const db::DatabaseLocation location = db::locate_database(
      tuning.database_given ? std::optional<std::string>(tuning.database) : std::nullopt);
  db::check_database_writable(location);

  const std::optional<GpuProfile> present = detect_present_gpu();
  if (!present || !is_same_gpu(*present, gpu)) return compile_only(shapes, gpu, settings, present);

  const GemmTuningPlan plan{tuning_settings(*present, location.path, settings, tuning, time_budget),
                            std::move(shapes)};

  InterruptFlag interrupt;
  const ScopedInterruptHandler handler(interrupt);
  GemmWorkerMeasurer measurer(interrupt);
  GemmTuningSession session(plan, measurer, interrupt);
  const GemmTuningSummary summary = session.run();
  if (gemm.sweep) {
    const std::filesystem::path out_dir =
        gemm.sweep_out.empty() ? std::filesystem::path("bench/results/gemm-sweep-" + plan.gpu.name)
                               : std::filesystem::path(gemm.sweep_out);
    write_sweep(plan, summary, out_dir);
  }
  return summary.exit_code();
}

}  // namespace swr::cli
