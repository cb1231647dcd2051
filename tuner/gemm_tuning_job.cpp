#include "tuner/gemm_tuning_job.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "db/results_database.hpp"
#include "generator/gemm_kernel_source.hpp"
#include "generator/gemm_space.hpp"
#include "generator/gemm_swizzle.hpp"
#include "generator/parallel_compiler.hpp"
#include "generator/resource_model.hpp"
#include "support/interrupt_notice.hpp"
#include "swr/usage_error.hpp"
#include "tuner/gemm_compilation.hpp"
#include "tuner/model_ranking.hpp"
#include "tuner/tuning/gemm_sweep_report.hpp"
#include "tuner/tuning/gemm_tuning_session.hpp"
#include "tuner/tuning_request.hpp"

namespace swr {

int compile_gemm_binaries_only(const std::vector<GemmTuningShape>& shapes, const GpuProfile& gpu,
                               const CompileSettings& settings,
                               const std::filesystem::path& database,
                               const std::optional<GpuProfile>& present) {
  // Cubins are renamed into the cache as they finish and nothing else is written: Ctrl-C may stop
  // at once.
  const InterruptNotice interrupt_notice(
      "compiled cubins stay in the cubin cache; run the same command again to resume (cached "
      "binaries are not compiled again)");
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
              << binaries.size() << " kernel binaries\n\n";
    // The model's ranking, stored as predictions (never as measurements) before it is printed.
    std::vector<int> registers;
    for (const GemmConfig& config : shape.configs) {
      const auto binary = binaries.find(gemm_binary_name(shape.problem, config));
      registers.push_back(binary != binaries.end() && binary->second.kernel.ok
                              ? binary->second.kernel.registers
                              : -1);
    }
    const std::vector<model::GemmPrediction> predictions = model::predict_gemm_space(
        shape.problem, gpu, shape.configs, model::embedded_time_model(), settings.jobs, registers);
    const int stored = store_predictions(database, GemmTarget{shape.problem, gpu}, predictions);
    std::cout << model::format_gemm_prediction_table(shape.problem, gpu, predictions,
                                                     prediction_accuracy_text("gemm"))
              << "stored " << stored << " predictions (model " << kScheduleModelName << " v"
              << kScheduleModelVersion << ") in " << database.string()
              << "; they are kept apart from measurements\n\n";
  }
  std::cout << timing_needs_gpu(gpu, present) << " (compiled " << compiled << " binaries for "
            << gpu.arch << "; cubins cached in " << settings.cache_dir.string() << ")\n";
  return failed > 0 ? 1 : 0;
}

void write_gemm_sweep(const GemmTuningPlan& plan, const GemmTuningSummary& summary,
                      std::filesystem::path out_dir) {
  if (out_dir.empty()) out_dir = "bench/results/gemm-sweep-" + plan.gpu.name;
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
          gemm_tile_order_name(gemm_raster_grid(shape.problem, config), swizzle_launch(config));
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

namespace {

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
  return select_gemm_space({problem, gpu}, wanted).configs;
}

}  // namespace

std::vector<GemmProblem> gemm_sweep_problems(DataType dtype) {
  std::vector<GemmProblem> problems;
  for (int size : kGemmSweepSizes) problems.push_back({size, size, size, dtype});
  return problems;
}

std::vector<GemmTuningShape> gemm_tuning_shapes(const std::vector<PlannedGemm>& planned,
                                                const GpuProfile& gpu, bool sweep) {
  std::vector<GemmTuningShape> shapes;
  for (const PlannedGemm& item : planned) {
    shapes.push_back({item.problem, configs_for(item.problem, gpu, item.configs, sweep)});
  }
  return shapes;
}

}  // namespace swr
