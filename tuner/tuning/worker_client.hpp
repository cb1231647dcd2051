// Measures variants in a worker process (measurement_worker.hpp) so that a variant that faults,
// traps or hangs costs only itself: the worker's CUDA context dies with it, the client records the
// variant as failed (fault, timeout) with the error text, and the next variant gets a fresh worker.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/variant_batches.hpp"
#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

class ChildProcess;

struct WorkerTimeouts {
  // Starting a worker: CUDA context, helper kernels compiled with NVRTC, CUPTI set-up.
  std::chrono::milliseconds startup{std::chrono::minutes(5)};
  // Per variant: max(minimum, multiple x the expected measurement time).
  double minimum_variant_seconds = 30;
  double expected_time_multiple = 20;
};

// A generous estimate of one variant's whole measurement (check, warm-up, ~1 s of timed runs,
// counter passes), from the roofline time of the problem on the GPU.
double expected_measurement_seconds(const AttentionProblem& problem, const GpuProfile& gpu);
double variant_timeout_seconds(const AttentionProblem& problem, const GpuProfile& gpu,
                               const WorkerTimeouts& timeouts);
// The backward's: its own roofline, plus the GPU reference of new inputs (an exact forward of
// every row and the sampled gradients, a few passes over S_q x S_kv at ~1 TFLOP/s).
double expected_measurement_seconds(const AttentionBackwardProblem& problem, const GpuProfile& gpu);
double variant_timeout_seconds(const AttentionBackwardProblem& problem, const GpuProfile& gpu,
                               const WorkerTimeouts& timeouts);

// The hidden subcommands of the real workers (measurement_worker.hpp), one per family.
inline constexpr const char* kMeasureWorkerSubcommand = "__measure-worker";
inline constexpr const char* kMeasureGemmWorkerSubcommand = "__measure-gemm-worker";
inline constexpr const char* kMeasureAttentionBackwardWorkerSubcommand =
    "__measure-attention-backward-worker";
// The command that starts a real worker: this executable with the family's hidden subcommand.
std::vector<std::string> measurement_worker_command(
    const char* subcommand = kMeasureWorkerSubcommand);

class WorkerClient : public VariantMeasurer {
 public:
  // `command`: program path and arguments of the worker; `environment`: added to its environment
  // (SWR_DEVICE picks its device). `interrupt` (optional): a second Ctrl-C abandons the variant
  // in flight (the worker is killed, the outcome says dropped).
  // Ignores SIGPIPE in this process: a worker that dies must not kill the tuner through a write.
  explicit WorkerClient(std::vector<std::string> command, WorkerTimeouts timeouts = {},
                        const InterruptFlag* interrupt = nullptr,
                        std::map<std::string, std::string> environment = {});
  ~WorkerClient() override;
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Throws std::runtime_error when a worker cannot be started (no device, no driver, ...).
  VariantOutcome measure(const VariantJob& job) override;
  // The batch in the worker (one profiling session for its counters), a variant that kills the
  // worker measured alone by the rule of variant_batches.hpp. Its time limit is the sum of the
  // variants'.
  std::vector<VariantOutcome> measure_batch(const std::vector<VariantJob>& jobs) override;
  std::size_t batch_size() const override { return batch_size_; }
  // The same for any family's request (e.g. gemm_measure_request), with its own time limit.
  VariantOutcome measure_message(const nlohmann::json& request, double timeout_seconds);

  int workers_started() const { return workers_started_; }
  // What the worker said it runs on (its "ready" message), empty before the first start.
  const std::string& device_name() const { return device_name_; }
  // Ends the worker, if one runs, with its device's profiler (the next measure starts another):
  // a worker of another family on the same device gets the L2 counters only once this one ended.
  void stop_worker();

 private:
  void start_worker();
  // One worker request over `positions` of `jobs` (BatchRequest).
  BatchAttempt request_batch(const std::vector<VariantJob>& jobs,
                             const std::vector<std::size_t>& positions, bool one_session_each);
  // Writes `request` to the worker, starting one (again) when needed.
  void send_request(const std::string& request);
  // Reaps a worker that ended (or is killed) and describes it with its last stderr lines.
  std::string end_worker_and_describe(bool kill_now);

  std::vector<std::string> command_;
  std::map<std::string, std::string> environment_;
  WorkerTimeouts timeouts_;
  const InterruptFlag* interrupt_;
  std::size_t batch_size_ = counter_batch_from_environment();
  std::unique_ptr<ChildProcess> worker_;
  int workers_started_ = 0;
  std::string device_name_;
};

// The GEMM worker behind the GEMM session's measurer interface.
class GemmWorkerClient : public GemmVariantMeasurer {
 public:
  GemmWorkerClient(const InterruptFlag& interrupt, std::map<std::string, std::string> environment)
      : worker_(measurement_worker_command(kMeasureGemmWorkerSubcommand), WorkerTimeouts{},
                &interrupt, std::move(environment)) {}
  VariantOutcome measure(const GemmVariantJob& job) override;
  void stop_worker() { worker_.stop_worker(); }

 private:
  WorkerClient worker_;
};

// The attention backward's worker behind its session's measurer interface.
class BackwardWorkerClient : public BackwardVariantMeasurer {
 public:
  BackwardWorkerClient(const InterruptFlag& interrupt,
                       std::map<std::string, std::string> environment)
      : worker_(measurement_worker_command(kMeasureAttentionBackwardWorkerSubcommand),
                WorkerTimeouts{}, &interrupt, std::move(environment)) {}
  VariantOutcome measure(const BackwardVariantJob& job) override;
  void stop_worker() { worker_.stop_worker(); }

 private:
  WorkerClient worker_;
};

}  // namespace swr
