#include "runtime/tuned_kernel_forms.hpp"

#include "generator/attention_backward/attention_backward_family.hpp"
#include "generator/problem_json.hpp"
#include "generator/resource_model.hpp"

namespace swr {
namespace {

template <class Number>
nlohmann::json optional_json(const std::optional<Number>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// The fields of the GPU row and the measurement, whichever the family.
void fill_from_database(TunedKernelBase& kernel, const db::GpuRecord& gpu,
                        const db::StoredMeasurement& stored) {
  kernel.gpu = gpu.name;
  kernel.arch = gpu.arch;
  kernel.sm_count = gpu.sm_count;
  kernel.l2_bytes = gpu.l2_bytes;
  kernel.device_name = gpu.device_name;
  kernel.config_key = stored.config_key;
  kernel.measured = measured_figures(stored.record);
  kernel.source_hash = stored.record.source_hash;
  kernel.toolkit_version = stored.record.toolkit_version;
}

void fill_from_export(TunedKernelBase& kernel, const ExportedKernelBase& exported) {
  kernel.gpu = exported.gpu.name;
  kernel.arch = exported.arch;
  kernel.sm_count = exported.gpu.sm_count;
  kernel.l2_bytes = exported.gpu.l2_bytes;
  kernel.device_name = exported.gpu.device_name;
  kernel.dynamic_shared_bytes = exported.dynamic_shared_bytes;
  kernel.measured = measured_figures(exported.measured);
  kernel.source_hash = exported.measured.source_hash;
  kernel.toolkit_version = exported.measured.toolkit_version;
}

// Either family's kernel as an export entry describes it.
template <class Tuned, class Exported>
Tuned from_export(const Exported& exported) {
  Tuned kernel;
  fill_from_export(kernel, exported);
  kernel.problem = exported.problem;
  kernel.config = exported.config;
  kernel.config_key = exported.config.key();
  return kernel;
}

nlohmann::json kernel_base_json(const TunedKernelBase& kernel) {
  const MeasuredFigures& measured = kernel.measured;
  return {{"gpu",
           {{"name", kernel.gpu},
            {"arch", kernel.arch},
            {"sm_count", kernel.sm_count},
            {"l2_bytes", kernel.l2_bytes},
            {"device_name", kernel.device_name}}},
          {"config_key", kernel.config_key},
          {"dynamic_shared_bytes", kernel.dynamic_shared_bytes},
          {"measured",
           {{"median_ms", measured.median_ms},
            {"p95_ms", optional_json(measured.p95_ms)},
            {"min_ms", optional_json(measured.min_ms)},
            {"timed_runs", optional_json(measured.timed_runs)},
            {"tflops", optional_json(measured.tflops)},
            {"relative_error", optional_json(measured.relative_error)},
            {"l2_sector_misses", optional_json(measured.l2_sector_misses)},
            {"l2_hit_rate", optional_json(measured.l2_hit_rate)},
            {"dram_read_bytes", optional_json(measured.dram_read_bytes)},
            {"dram_write_bytes", optional_json(measured.dram_write_bytes)},
            {"registers", optional_json(measured.registers)},
            {"blocks_per_sm", optional_json(measured.blocks_per_sm)},
            {"measured_at", measured.measured_at},
            {"driver_version", measured.driver_version}}},
          {"source_hash", kernel.source_hash},
          {"toolkit_version", kernel.toolkit_version}};
}

template <class Kernel>
nlohmann::json kernel_json(const Kernel& kernel) {
  nlohmann::json json = kernel_base_json(kernel);
  json["problem"] = keyed_problem_json(kernel.problem);
  json["config"] = kernel.config.to_json();
  return json;
}

template <class Choice, class Problem>
nlohmann::json choice_json(const Choice& choice, const Problem& asked) {
  nlohmann::json json = {{"family", problem_family_name(asked)},
                         {"asked", keyed_problem_json(asked)},
                         {"match", std::string(to_string(choice.match))}};
  if (choice.kernel) {
    json["distance"] = choice.distance;
    json["tuned_shape"] = choice.kernel->problem.key();
    json["kernel"] = tuned_kernel_json(*choice.kernel);
  } else {
    json["why"] = choice.why_none;
  }
  return json;
}

}  // namespace

MeasuredFigures measured_figures(const db::MeasurementRecord& record) {
  MeasuredFigures figures;
  figures.median_ms = record.median_ms.value_or(0);
  figures.p95_ms = record.p95_ms;
  figures.min_ms = record.min_ms;
  figures.timed_runs = record.timed_runs;
  figures.tflops = record.tflops;
  figures.relative_error = record.relative_error;
  figures.l2_sector_misses = record.l2_sector_misses;
  figures.l2_hit_rate = record.l2_hit_rate;
  figures.dram_read_bytes = record.dram_read_bytes;
  figures.dram_write_bytes = record.dram_write_bytes;
  figures.registers = record.registers;
  figures.blocks_per_sm = record.blocks_per_sm;
  figures.measured_at = record.measured_at;
  figures.driver_version = record.driver_version;
  return figures;
}

namespace {

// Any family's kernel from its best measurement; `shared_bytes(problem, config)` is what the
// tuner records, computed the same way for rows that lack it.
template <class Tuned, class Problem, class SharedBytes>
Tuned from_database(const db::GpuRecord& gpu, const Problem& problem,
                    const db::StoredMeasurement& stored, const SharedBytes& shared_bytes) {
  Tuned kernel;
  fill_from_database(kernel, gpu, stored);
  kernel.problem = problem;
  kernel.config = decltype(kernel.config)::from_json(stored.config_json);
  kernel.dynamic_shared_bytes =
      stored.record.dynamic_shared_bytes.value_or(shared_bytes(problem, kernel.config));
  return kernel;
}

}  // namespace

TunedKernel tuned_kernel_from_database(const db::GpuRecord& gpu, const AttentionProblem& problem,
                                       const db::StoredMeasurement& stored) {
  return from_database<TunedKernel>(gpu, problem, stored, attention_dynamic_shared_bytes);
}

TunedGemmKernel tuned_kernel_from_database(const db::GpuRecord& gpu, const GemmProblem& problem,
                                           const db::StoredMeasurement& stored) {
  return from_database<TunedGemmKernel>(gpu, problem, stored,
                                        [](const GemmProblem&, const GemmConfig& config) {
                                          return gemm_dynamic_shared_bytes(config);
                                        });
}

TunedAttentionBackwardKernel tuned_kernel_from_database(const db::GpuRecord& gpu,
                                                        const AttentionBackwardProblem& problem,
                                                        const db::StoredMeasurement& stored) {
  return from_database<TunedAttentionBackwardKernel>(gpu, problem, stored,
                                                     attention_backward_shared_bytes);
}

TunedKernel tuned_kernel_from_export(const ExportedKernel& exported) {
  return from_export<TunedKernel>(exported);
}

TunedGemmKernel tuned_kernel_from_export(const ExportedGemmKernel& exported) {
  return from_export<TunedGemmKernel>(exported);
}

TunedAttentionBackwardKernel tuned_kernel_from_export(const ExportedBackwardKernel& exported) {
  return from_export<TunedAttentionBackwardKernel>(exported);
}

nlohmann::json tuned_kernel_json(const TunedKernel& kernel) {
  return kernel_json(kernel);
}

nlohmann::json tuned_kernel_json(const TunedGemmKernel& kernel) {
  return kernel_json(kernel);
}

nlohmann::json tuned_kernel_json(const TunedAttentionBackwardKernel& kernel) {
  return kernel_json(kernel);
}

nlohmann::json tuned_choice_json(const TunedBackwardChoice& choice,
                                 const AttentionBackwardProblem& asked) {
  return choice_json(choice, asked);
}

nlohmann::json tuned_choice_json(const TunedChoice& choice, const AttentionProblem& asked) {
  return choice_json(choice, asked);
}

nlohmann::json tuned_choice_json(const TunedGemmChoice& choice, const GemmProblem& asked) {
  return choice_json(choice, asked);
}

}  // namespace swr
