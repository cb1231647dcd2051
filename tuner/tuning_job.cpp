#include "tuner/tuning_job.hpp"

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "driver/device_context.hpp"
#include "generator/attention_backward/attention_backward_family.hpp"
#include "model/backward_prediction.hpp"
#include "swr/usage_error.hpp"
#include "tuner/attention_tuning_job.hpp"
#include "tuner/family_compilation.hpp"
#include "tuner/gemm_tuning_job.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/gpu_lock.hpp"
#include "tuner/model_ranking.hpp"
#include "tuner/progress_display.hpp"
#include "tuner/tuning/family_tuning_session.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/worker_client.hpp"

namespace swr {
namespace {

// Without a device to measure on: compile (and rank attention by the model), say why.
int compile_without_device(const TuningJob& job) {
  const std::optional<GpuProfile> present = detect_present_gpu();
  // The GEMM configs are checked before the attention family compiles anything.
  const std::vector<GemmTuningShape> gemm = gemm_tuning_shapes(job.gemm, job.gpu, job.gemm_sweep);
  int exit_code = 0;
  if (!job.attention.empty()) {
    exit_code = std::max(
        exit_code, compile_and_predict(job.gpu, job.attention, job.compile, job.tuning.database,
                                       present, job.tuning.model_top));
  }
  if (!gemm.empty()) {
    exit_code = std::max(exit_code, compile_gemm_binaries_only(gemm, job.gpu, job.compile,
                                                               job.tuning.database, present));
  }
  if (!job.attention_backward.empty()) {
    exit_code = std::max(exit_code, compile_family_only<AttentionBackwardFamily>(
                                        job.gpu, job.attention_backward, job.compile));
    // What the model ranks first, for the GPU that is not here.
    for (const auto& shape :
         family_tuning_shapes<AttentionBackwardFamily>(job.attention_backward, job.gpu)) {
      std::cout << "\n"
                << model::format_backward_predictions(
                       shape.problem, job.gpu,
                       model::predict_backward_space(shape.problem, job.gpu, shape.configs,
                                                     job.compile.jobs));
    }
    std::cout << "nothing was timed: "
              << (present ? "the GPU here is " + present->name : no_present_gpu_reason())
              << ", not " << job.gpu.name << "\n";
  }
  return exit_code;
}

}  // namespace

int run_tuning_job(const TuningJob& job) {
  const std::vector<PresentDevice> present = present_devices();
  const DeviceSelection selection =
      select_devices(job.devices, present, job.gpu, selected_device_ordinal(),
                     present.empty() ? no_present_gpu_reason() : std::string());
  if (selection.devices.empty()) {
    if (job.shard) {
      throw UsageError(
          "--shard " + job.shard->text() + " splits the measuring of a plan, and no " +
          job.gpu.name + " is here to measure on: allowed on a machine with the GPU " +
          "--gpu names (without --shard, this machine compiles and ranks by the model)");
    }
    return compile_without_device(job);
  }
  if (!selection.note.empty())
    std::fprintf(stderr, "swr-tune: --devices all: %s\n", selection.note.c_str());

  // Tune for the devices as they are (their own SM count, L2 and shared memory), not the datasheet;
  // they are alike, so the first one speaks for all.
  const GpuProfile& gpu = selection.devices.front().profile;
  // --model-top: each attention problem's variants narrowed to the model's best and checks, before
  // the shard's part is taken (every shard ranks alike, so the shards split the same list). The
  // model ranks for the GPU as named (its datasheet rates); the devices measure as they are.
  std::map<std::string, nlohmann::json> chosen_by_model;
  AttentionVariantChoice choose;
  if (job.tuning.model_top) {
    choose = [&](const AttentionProblem& problem, const std::vector<AttentionConfig>& configs) {
      return model_guided_variants(Target{problem, job.gpu}, configs, *job.tuning.model_top,
                                   job.compile, chosen_by_model);
    };
  }
  std::vector<TuningShape> attention =
      attention_tuning_shapes(job.attention, gpu, job.plant_fault, choose);
  std::vector<GemmTuningShape> gemm = gemm_tuning_shapes(job.gemm, gpu, job.gemm_sweep);
  auto backward = family_tuning_shapes<AttentionBackwardFamily>(job.attention_backward, gpu);
  if (job.tuning.model_top) {
    for (auto& shape : backward) {
      shape.configs = backward_model_guided_variants(shape.problem, job.gpu, shape.configs,
                                                     *job.tuning.model_top, chosen_by_model);
    }
  }
  if (job.shard && !backward.empty()) {
    throw UsageError(
        "--shard splits plans of the attention and GEMM families: allowed without "
        "--family attention-backward");
  }
  if (job.shard) {
    const ShardedPlan sharded = keep_shard(*job.shard, attention, gemm);
    std::cout << "shard " << job.shard->text() << ": " << sharded.variants
              << " variants, in work units " << job.shard->index << ", "
              << job.shard->index + job.shard->count << ", ... of the plan's " << sharded.units
              << " (attention variants, GEMM kernel binaries)\n"
              << std::flush;
    if (attention.empty() && gemm.empty()) {
      std::cout << "shard " << job.shard->text() << " has nothing of this plan to tune\n";
      return 0;
    }
  }

  TuningSettings settings = tuning_settings(gpu, job.tuning, job.compile);
  settings.selection = std::move(chosen_by_model);
  for (const PresentDevice& device : selection.devices) {
    settings.device_names.push_back("device " + std::to_string(device.ordinal));
  }
  if (selection.devices.size() > 1) {
    std::cout << "measuring on " << selection.devices.size() << " devices: ";
    for (std::size_t i = 0; i < selection.devices.size(); ++i) {
      std::cout << (i ? ", " : "") << describe_device(selection.devices[i]);
    }
    std::cout << "\n";
  }

  InterruptFlag interrupt;
  const ScopedInterruptHandler handler(interrupt);
  // One worker process per device and family, each told its device; started at its first variant.
  std::vector<std::unique_ptr<WorkerClient>> attention_workers;
  std::vector<std::unique_ptr<GemmWorkerClient>> gemm_workers;
  std::vector<std::unique_ptr<BackwardWorkerClient>> backward_workers;
  std::vector<VariantMeasurer*> attention_measurers;
  std::vector<GemmVariantMeasurer*> gemm_measurers;
  std::vector<BackwardVariantMeasurer*> backward_measurers;
  for (const PresentDevice& device : selection.devices) {
    const std::map<std::string, std::string> environment = {
        {"SWR_DEVICE", std::to_string(device.ordinal)}};
    attention_workers.push_back(std::make_unique<WorkerClient>(
        measurement_worker_command(), WorkerTimeouts{}, &interrupt, environment));
    attention_measurers.push_back(attention_workers.back().get());
    gemm_workers.push_back(std::make_unique<GemmWorkerClient>(interrupt, environment));
    gemm_measurers.push_back(gemm_workers.back().get());
    backward_workers.push_back(std::make_unique<BackwardWorkerClient>(interrupt, environment));
    backward_measurers.push_back(backward_workers.back().get());
  }
  TuningSession attention_session(TuningPlan{settings, attention}, attention_measurers, interrupt);
  const int attention_missing = attention.empty() ? 0 : attention_session.find_missing();
  // --limit counts the whole run: the GEMM family gets what the attention one left.
  GemmTuningPlan gemm_plan{settings, gemm};
  if (gemm_plan.limit) gemm_plan.limit = std::max(0, *gemm_plan.limit - attention_missing);
  GemmTuningSession gemm_session(gemm_plan, gemm_measurers, interrupt);
  const int gemm_missing = gemm.empty() ? 0 : gemm_session.find_missing();
  TuningPlanOf<AttentionBackwardProblem, AttentionBackwardConfig> backward_plan{settings, backward};
  if (backward_plan.limit) {
    backward_plan.limit = std::max(0, *backward_plan.limit - attention_missing - gemm_missing);
  }
  FamilyTuningSession<AttentionBackwardFamily> backward_session(backward_plan, backward_measurers,
                                                                interrupt);
  const int missing =
      attention_missing + gemm_missing + (backward.empty() ? 0 : backward_session.find_missing());

  // One GPU, one tuner: held from the first measurement to the end of the run.
  std::optional<GpuLocks> locks;
  std::unique_ptr<ProgressDisplay> progress;
  if (missing > 0) {
    locks.emplace(selection.devices, job.wait_for_devices,
                  [&interrupt] { return interrupt.stop_requested(); });
    if (!locks->acquired()) {
      std::fprintf(stderr, "swr-tune: interrupted while waiting for a device: nothing measured\n");
      return 130;
    }
    progress = std::make_unique<ProgressDisplay>("tuning", missing, false);
  }
  int exit_code = 0;
  if (!attention.empty()) exit_code = attention_session.run(progress.get()).exit_code();
  // An attention worker left running holds its device's profiler, and the GEMM worker on that
  // device would then find the counters busy (CUPTI_ERROR_HARDWARE_BUSY) and store none.
  for (const std::unique_ptr<WorkerClient>& worker : attention_workers) worker->stop_worker();
  if (!gemm.empty() && exit_code == 0) {
    const GemmTuningSummary summary = gemm_session.run(progress.get());
    exit_code = summary.exit_code();
    if (job.gemm_sweep) write_gemm_sweep(gemm_plan, summary, job.sweep_out);
  }
  // As above: each family's workers end before the next family's profile the device.
  for (const std::unique_ptr<GemmWorkerClient>& worker : gemm_workers) worker->stop_worker();
  if (!backward.empty() && exit_code == 0)
    exit_code = backward_session.run(progress.get()).exit_code();
  return exit_code;
}

}  // namespace swr
