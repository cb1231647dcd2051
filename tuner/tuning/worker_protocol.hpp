// The messages between the tuner and its measurement worker: one JSON object per line.
//   worker -> tuner, once at start:  {"type":"ready", "device":..., "pid":...}
//                                    or {"type":"startup_error", "error":...} (then it exits)
//   tuner -> worker, per variant:    {"type":"measure", problem, config, cubin (base64), ...}
//   worker -> tuner, per variant:    {"type":"result", status, times, counters, ...,
//   "context_lost"} tuner -> worker, at the end:     {"type":"quit"} (or its stdin closes)
// A worker whose CUDA context died (illegal address, trap) says context_lost and exits.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

nlohmann::json attention_problem_to_json(const AttentionProblem& problem);
// Throws std::invalid_argument (or nlohmann::json::exception) for a malformed object.
AttentionProblem attention_problem_from_json(const nlohmann::json& json);

nlohmann::json measure_request(const VariantJob& job);
VariantJob job_from_measure_request(const nlohmann::json& request);

struct WorkerReply {
  VariantOutcome outcome;
  bool context_lost = false;  // the worker exits after sending it
};
nlohmann::json result_message(const WorkerReply& reply);
WorkerReply reply_from_result_message(const nlohmann::json& message);

nlohmann::json ready_message(const std::string& device_name);
nlohmann::json startup_error_message(const std::string& error);
nlohmann::json quit_message();

// The message's "type", or "" when it has none.
std::string message_type(const nlohmann::json& message);

}  // namespace swr
