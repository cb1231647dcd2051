// A stand-in for `swr-tune __measure-worker` that speaks the same protocol without a GPU and
// misbehaves on command (fake_worker_orders.hpp), to test the worker client's fault handling.
// Options: --fail-startup (a startup_error message), --die-at-startup (exit before any message).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

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

// A batch: "started" before each variant, the orders above per variant, "counting" and the
// results at the end.
void serve_batch(const nlohmann::json& message) {
  using swr::testing::FakeWorkerOrder;
  const std::vector<swr::VariantJob> jobs = swr::jobs_from_measure_batch_request(message);
  const bool one_session_each = message.value("session_size", 0) == 1;
  std::vector<swr::WorkerReply> replies;
  bool crash_when_counting = false;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    send({{"type", "started"}, {"index", i}});
    const FakeWorkerOrder order = swr::testing::order_of(jobs[i].seed);
    if (order == FakeWorkerOrder::crash ||
        (order == FakeWorkerOrder::crash_counting && one_session_each)) {
      std::fprintf(stderr, "fake worker: about to crash on variant %zu\n", i);
      std::fflush(stderr);
      raise(SIGSEGV);
    }
    if (order == FakeWorkerOrder::hang) {
      while (true) pause();
    }
    if (order == FakeWorkerOrder::lose_context) {
      swr::WorkerReply reply;
      reply.outcome.status = swr::db::MeasurementStatus::fault;
      reply.outcome.error = "cuStreamSynchronize failed: an illegal memory access was encountered";
      reply.context_lost = true;
      replies.push_back(reply);
      send(swr::batch_result_message(replies));
      std::_Exit(3);
    }
    crash_when_counting = crash_when_counting || order == FakeWorkerOrder::crash_counting;
    replies.push_back(plausible_result(jobs[i]));
  }
  send({{"type", "counting"}});
  if (crash_when_counting) raise(SIGSEGV);
  send(swr::batch_result_message(replies));
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
    if (swr::message_type(message) == "measure_batch") {
      serve_batch(message);
      continue;
    }
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
      case swr::testing::FakeWorkerOrder::crash_counting:
        send(swr::result_message(plausible_result(job)));
        break;
    }
  }
  return 0;
}
