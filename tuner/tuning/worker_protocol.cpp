#include "tuner/tuning/worker_protocol.hpp"

#include <unistd.h>

#include <stdexcept>

namespace swr {
namespace {

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}
nlohmann::json optional_number(const std::optional<int>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

template <typename Number>
std::optional<Number> read_optional(const nlohmann::json& object, const char* name) {
  const auto found = object.find(name);
  if (found == object.end() || found->is_null()) return std::nullopt;
  return found->get<Number>();
}

nlohmann::json counters_to_json(const L2Counters& counters) {
  return {
      {"l2_sectors_from_tex", optional_number(counters.l2_sectors_from_tex)},
      {"l2_sector_misses_from_tex", optional_number(counters.l2_sector_misses_from_tex)},
      {"l2_hit_rate_percent", optional_number(counters.l2_hit_rate_percent)},
      {"dram_bytes_read", optional_number(counters.dram_bytes_read)},
      {"dram_bytes_written", optional_number(counters.dram_bytes_written)},
      {"dram_source", counters.dram_source},
  };
}

L2Counters counters_from_json(const nlohmann::json& json) {
  L2Counters counters;
  counters.l2_sectors_from_tex = read_optional<double>(json, "l2_sectors_from_tex");
  counters.l2_sector_misses_from_tex = read_optional<double>(json, "l2_sector_misses_from_tex");
  counters.l2_hit_rate_percent = read_optional<double>(json, "l2_hit_rate_percent");
  counters.dram_bytes_read = read_optional<double>(json, "dram_bytes_read");
  counters.dram_bytes_written = read_optional<double>(json, "dram_bytes_written");
  counters.dram_source = json.value("dram_source", std::string());
  return counters;
}

}  // namespace

nlohmann::json measured_gpu_to_json(const GpuProfile& gpu) {
  return {{"name", gpu.name},
          {"arch", gpu.arch},
          {"sm_count", gpu.sm_count},
          {"l2_bytes", gpu.l2_bytes}};
}

GpuProfile measured_gpu_from_json(const nlohmann::json& json) {
  GpuProfile gpu;
  gpu.name = json.at("name").get<std::string>();
  gpu.arch = json.at("arch").get<std::string>();
  gpu.sm_count = json.at("sm_count").get<int>();
  gpu.l2_bytes = json.at("l2_bytes").get<std::int64_t>();
  return gpu;
}

DataType data_type_field(const nlohmann::json& problem, const std::string& where) {
  const std::string dtype = problem.at("dtype").get<std::string>();
  const std::optional<DataType> parsed = parse_data_type(dtype);
  if (!parsed) throw std::invalid_argument("unknown dtype '" + dtype + "' in " + where);
  return *parsed;
}

nlohmann::json attention_problem_to_json(const AttentionProblem& problem) {
  return {
      {"batch", problem.batch},       {"heads", problem.heads},
      {"seq_q", problem.seq_q},       {"seq_kv", problem.seq_kv},
      {"head_dim", problem.head_dim}, {"dtype", std::string(to_string(problem.dtype))},
      {"causal", problem.causal},
  };
}

AttentionProblem attention_problem_from_json(const nlohmann::json& json) {
  AttentionProblem problem;
  problem.batch = json.at("batch").get<int>();
  problem.heads = json.at("heads").get<int>();
  problem.seq_q = json.at("seq_q").get<int>();
  problem.seq_kv = json.at("seq_kv").get<int>();
  problem.head_dim = json.at("head_dim").get<int>();
  problem.dtype = data_type_field(json, "a problem");
  problem.causal = json.at("causal").get<bool>();
  return problem;
}

nlohmann::json measure_request(const VariantJob& job) {
  nlohmann::json request = {
      {"type", "measure"},
      {"problem", attention_problem_to_json(job.problem)},
      {"config", job.config.to_json()},
      {"stop_timing_above_ms", job.stop_timing_above_ms ? nlohmann::json(*job.stop_timing_above_ms)
                                                        : nlohmann::json(nullptr)},
  };
  add_kernel_fields(request, job);
  return request;
}

VariantJob job_from_measure_request(const nlohmann::json& request) {
  VariantJob job;
  job.problem = attention_problem_from_json(request.at("problem"));
  job.config = AttentionConfig::from_json(request.at("config"));
  read_kernel_fields(request, job);
  if (request.contains("stop_timing_above_ms") && !request["stop_timing_above_ms"].is_null()) {
    job.stop_timing_above_ms = request["stop_timing_above_ms"].get<double>();
  }
  return job;
}

nlohmann::json result_message(const WorkerReply& reply) {
  const VariantOutcome& outcome = reply.outcome;
  return {
      {"type", "result"},
      {"status", std::string(db::to_string(outcome.status))},
      {"error", outcome.error},
      {"times_ms", outcome.times_ms},
      {"relative_error", optional_number(outcome.relative_error)},
      {"non_finite", outcome.non_finite},
      {"counters", counters_to_json(outcome.counters)},
      {"counters_unavailable", outcome.counters_unavailable},
      {"registers", optional_number(outcome.registers)},
      {"blocks_per_sm", optional_number(outcome.blocks_per_sm)},
      {"method", outcome.method},
      {"context_lost", reply.context_lost},
  };
}

WorkerReply reply_from_result_message(const nlohmann::json& message) {
  if (message_type(message) != "result") {
    throw std::invalid_argument("expected a result message, got: " + message.dump());
  }
  WorkerReply reply;
  VariantOutcome& outcome = reply.outcome;
  const std::string status = message.at("status").get<std::string>();
  const std::optional<db::MeasurementStatus> parsed = db::parse_measurement_status(status);
  if (!parsed) throw std::invalid_argument("unknown status '" + status + "' in a worker result");
  outcome.status = *parsed;
  outcome.error = message.value("error", std::string());
  outcome.times_ms = message.value("times_ms", std::vector<double>());
  outcome.relative_error = read_optional<double>(message, "relative_error");
  outcome.non_finite = message.value("non_finite", std::int64_t{0});
  if (message.contains("counters")) outcome.counters = counters_from_json(message.at("counters"));
  outcome.counters_unavailable = message.value("counters_unavailable", std::string());
  outcome.registers = read_optional<int>(message, "registers");
  outcome.blocks_per_sm = read_optional<int>(message, "blocks_per_sm");
  outcome.method = message.value("method", nlohmann::json::object());
  reply.context_lost = message.value("context_lost", false);
  return reply;
}

nlohmann::json ready_message(const std::string& device_name) {
  return {{"type", "ready"}, {"device", device_name}, {"pid", static_cast<long long>(getpid())}};
}

nlohmann::json startup_error_message(const std::string& error) {
  return {{"type", "startup_error"}, {"error", error}};
}

nlohmann::json quit_message() {
  return {{"type", "quit"}};
}

std::string message_type(const nlohmann::json& message) {
  if (!message.is_object()) return {};
  const auto found = message.find("type");
  return found != message.end() && found->is_string() ? found->get<std::string>() : std::string();
}

}  // namespace swr
