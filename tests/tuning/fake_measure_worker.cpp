// A stand-in for `swr-tune __measure-worker` that speaks the same protocol without a GPU and
// misbehaves on command (fake_worker_orders.hpp), to test the worker client's fault handling.
// Options: --fail-startup (a startup_error message), --die-at-startup (exit before any message).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "fake_worker_orders.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace {

void send(const nlohmann::json& message) {
  std::cout << message.dump() << std::endl;
}

swr::WorkerReply plausible_result(const swr::VariantJob& job) {
  swr::WorkerReply reply;
  swr::VariantOutcome& outcome = reply.outcome;
  outcome.times_ms = {1.5, 1.25, 1.75};
  outcome.relative_error = 1e-4;
  outcome.counters.l2_sectors_from_tex = 4.0e6;
  outcome.counters.l2_sector_misses_from_tex = 1.0e6;
  outcome.counters.l2_hit_rate_percent = 75.0;
  outcome.counters.dram_bytes_read = 3.2e7;
  outcome.counters.dram_bytes_written = 1.0e6;
  outcome.counters.dram_source = "dram__bytes";
  outcome.registers = 128;
  outcome.blocks_per_sm = 2;
  outcome.method = {{"fake_worker_pid", static_cast<long long>(getpid())},
                    {"config_key", job.config.key()}};
  return reply;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string option = argc > 1 ? argv[1] : "";
  if (option == "--die-at-startup") {
    std::fprintf(stderr, "fake worker: no device today\n");
    return 5;
  }
  if (option == "--fail-startup") {
    send(swr::startup_error_message("no CUDA driver/device found: fake worker"));
    return 1;
  }
  send(swr::ready_message("Fake GPU"));

  for (std::string line; std::getline(std::cin, line);) {
    const nlohmann::json message = nlohmann::json::parse(line);
    if (swr::message_type(message) == "quit") break;
    const swr::VariantJob job = swr::job_from_measure_request(message);
    switch (swr::testing::order_of(job.seed)) {
      case swr::testing::FakeWorkerOrder::measure:
        send(swr::result_message(plausible_result(job)));
        break;
      case swr::testing::FakeWorkerOrder::crash:
        std::fprintf(stderr, "fake worker: about to crash on %s\n", job.config.key().c_str());
        std::fflush(stderr);
        raise(SIGSEGV);
        break;
      case swr::testing::FakeWorkerOrder::exit:
        std::fprintf(stderr, "fake worker: giving up\n");
        return 7;
      case swr::testing::FakeWorkerOrder::hang:
        while (true) pause();
      case swr::testing::FakeWorkerOrder::lose_context: {
        swr::WorkerReply reply;
        reply.outcome.status = swr::db::MeasurementStatus::fault;
        reply.outcome.error =
            "cuStreamSynchronize failed: an illegal memory access was encountered";
        reply.context_lost = true;
        send(swr::result_message(reply));
        std::_Exit(3);
      }
      case swr::testing::FakeWorkerOrder::garbage:
        std::cout << "this is not JSON" << std::endl;
        break;
    }
  }
  return 0;
}
