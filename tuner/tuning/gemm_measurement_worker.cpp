#include "tuner/tuning/gemm_measurement_worker.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "tuner/tuning/gemm_measurement_bench.hpp"
#include "tuner/tuning/gemm_variant_job.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {
namespace {

// The protocol has stdout to itself: whatever else prints to stdout (cuBLAS, a diagnostic) goes
// to stderr, which the tuner keeps for error messages.
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

}  // namespace

int run_gemm_measurement_worker() {
  ProtocolOutput output;
  std::unique_ptr<GemmMeasurementBench> bench;
  try {
    bench = std::make_unique<GemmMeasurementBench>();
  } catch (const std::exception& error) {
    output.send(startup_error_message(error.what()));
    return 1;
  }
  output.send(ready_message(bench->device_name()));

  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty()) continue;
    GemmVariantJob job;
    try {
      const nlohmann::json message = nlohmann::json::parse(line);
      if (message_type(message) == "quit") break;
      job = gemm_job_from_measure_request(message);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "swr GEMM measurement worker: unreadable request: %s\n", error.what());
      return 2;
    }
    const WorkerReply reply = bench->measure(job);
    output.send(result_message(reply));
    if (reply.context_lost) {
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
  return 0;
}

}  // namespace swr
