// The loop every measurement worker runs (attention, GEMM): open the device, say "ready", then
// measure one variant per request line (worker_protocol.hpp) until told to quit or stdin closes.
// Exit codes: 0 after quit or end of input, 1 when the device could not be opened, 2 for a
// request it cannot read, 3 after a variant killed the context.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tuner/tuning/worker_protocol.hpp"

namespace swr {

// The protocol has stdout to itself: whatever else prints to stdout (a library, a diagnostic)
// goes to stderr, which the tuner keeps for error messages.
class ProtocolOutput {
 public:
  ProtocolOutput();
  void send(const nlohmann::json& message);

 private:
  FILE* stream_ = nullptr;
};

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

}  // namespace swr
