#include "tuner/tuning/measurement_worker.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "tuner/counters/counter_batches.hpp"

#include "tuner/attention_backward/backward_measurement_bench.hpp"
#include "tuner/tuning/attention_measurement_bench.hpp"
#include "tuner/tuning/gemm_measurement_bench.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {
namespace {

// The protocol has stdout to itself: whatever else prints to stdout (a library, a diagnostic)
// goes to stderr, which the tuner keeps for error messages.
class ProtocolOutput {
 public:
  ProtocolOutput() {
    const int protocol_fd = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    stream_ = fdopen(protocol_fd, "w");
  }
  void send(const nlohmann::json& message) {
    const std::string line = message.dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), stream_);
    std::fflush(stream_);
  }

 private:
  FILE* stream_ = nullptr;
};

// A batch of variants (worker_protocol.hpp): progress lines while it runs, then one result line.
// A variant that killed the context ends the batch and the process, its reply last.
template <class Bench>
void serve_batch(Bench& bench, ProtocolOutput& output, const nlohmann::json& message) {
  const std::vector<VariantJob> jobs = jobs_from_measure_batch_request(message);
  // Asked one session each (after a death while counting), or SWR_COUNTERS_PER_VARIANT=1.
  const std::size_t session_size =
      message.value("session_size", 0) == 1 ? 1 : counter_session_size_from_environment();
  std::vector<WorkerReply> replies;
  try {
    replies = bench.measure_batch(jobs, session_size,
                                  [&](const nlohmann::json& progress) { output.send(progress); });
  } catch (const std::exception& error) {
    // Counting the batch failed beyond its variants (the context died while profiling): the
    // tuner measures them again, one session each.
    std::fprintf(stderr, "swr measurement worker: counting a batch failed: %s\n", error.what());
    std::fflush(stderr);
    std::_Exit(3);
  }
  output.send(batch_result_message(replies));
  if (!replies.empty() && replies.back().context_lost) {
    std::fflush(stderr);
    std::_Exit(3);
  }
}

// Bench: constructible without arguments (opens the device), device_name(), and
// measure(const Job&) -> WorkerReply that never throws for a fault of the variant.
template <class Bench, class Job>
int serve_measurements(const char* worker_name, Job (*parse_request)(const nlohmann::json&)) {
  ProtocolOutput output;
  std::unique_ptr<Bench> bench;
  try {
    bench = std::make_unique<Bench>();
  } catch (const std::exception& error) {
    output.send(startup_error_message(error.what()));
    return 1;
  }
  output.send(ready_message(bench->device_name()));

  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty()) continue;
    Job job;
    try {
      const nlohmann::json message = nlohmann::json::parse(line);
      if (message_type(message) == "quit") break;
      if constexpr (std::is_same_v<Job, VariantJob>) {
        if (message_type(message) == "measure_batch") {
          serve_batch(*bench, output, message);
          continue;
        }
      }
      job = parse_request(message);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s: unreadable request: %s\n", worker_name, error.what());
      return 2;
    }
    const WorkerReply reply = bench->measure(job);
    output.send(result_message(reply));
    if (reply.context_lost) {
      // The context is dead: tearing down modules, CUPTI and memory on it can only hang or fail.
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
  return 0;
}

}  // namespace

int run_measurement_worker() {
  return serve_measurements<AttentionMeasurementBench, VariantJob>("swr measurement worker",
                                                                   job_from_measure_request);
}

int run_gemm_measurement_worker() {
  return serve_measurements<GemmMeasurementBench, GemmVariantJob>("swr GEMM measurement worker",
                                                                  gemm_job_from_measure_request);
}

int run_attention_backward_measurement_worker() {
  return serve_measurements<AttentionBackwardMeasurementBench, BackwardVariantJob>(
      "swr attention backward measurement worker", backward_job_from_measure_request);
}

}  // namespace swr
