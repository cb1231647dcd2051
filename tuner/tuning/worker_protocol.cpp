#include "tuner/tuning/worker_protocol.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "generator/kernel_family.hpp"
#include "tuner/tuning/variant_record.hpp"

namespace swr {
namespace {

bool is_base64_character(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

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

std::string encode_base64(const std::vector<char>& bytes) {
  std::string text(4 * ((bytes.size() + 2) / 3) + 1, '\0');  // EVP_EncodeBlock adds a '\0'
  const int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()),
                                     reinterpret_cast<const unsigned char*>(bytes.data()),
                                     static_cast<int>(bytes.size()));
  text.resize(static_cast<std::size_t>(length));
  return text;
}

std::vector<char> decode_base64(std::string_view text) {
  if (text.size() % 4 != 0) {
    throw std::invalid_argument("base64 text length is not a multiple of 4");
  }
  // EVP_DecodeBlock skips blanks and accepts '=' anywhere, and counts padding as zero bytes:
  // check the text strictly first, then drop the padding's bytes from its output.
  const std::size_t padding = text.size() - std::min(text.size(), text.find_last_not_of('=') + 1);
  if (padding > 2 || !std::all_of(text.begin(), text.end() - padding, is_base64_character)) {
    throw std::invalid_argument("bad character in base64 text");
  }
  std::vector<char> bytes(text.size() / 4 * 3);
  const int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                     reinterpret_cast<const unsigned char*>(text.data()),
                                     static_cast<int>(text.size()));
  if (length < 0) throw std::invalid_argument("bad base64 text");
  bytes.resize(static_cast<std::size_t>(length) - padding);
  return bytes;
}

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

namespace {

// A variant of a family whose variants are one binary each; `family` names it in the request
// (none for the attention forward, whose requests keep the form they always had).
template <class Job>
nlohmann::json variant_request(const Job& job, const char* family) {
  nlohmann::json request = {
      {"type", "measure"},
      {"problem", job.problem.to_json()},
      {"config", job.config.to_json()},
      {"stop_timing_above_ms", job.stop_timing_above_ms ? nlohmann::json(*job.stop_timing_above_ms)
                                                        : nlohmann::json(nullptr)},
  };
  if (family != nullptr) request["family"] = family;
  add_kernel_fields(request, job);
  return request;
}

template <class Job>
Job variant_job(const nlohmann::json& request, const char* family) {
  const std::string asked = request.value("family", std::string());
  if (asked != (family != nullptr ? family : "")) {
    throw std::invalid_argument("a measure request of family \"" + asked + "\" is not for this " +
                                "worker: " + request.dump().substr(0, 200));
  }
  Job job;
  job.problem = decltype(job.problem)::from_json(request.at("problem"));
  job.config = decltype(job.config)::from_json(request.at("config"));
  read_kernel_fields(request, job);
  if (request.contains("stop_timing_above_ms") && !request["stop_timing_above_ms"].is_null()) {
    job.stop_timing_above_ms = request["stop_timing_above_ms"].get<double>();
  }
  return job;
}

}  // namespace

nlohmann::json measure_request(const VariantJob& job) {
  return variant_request(job, nullptr);
}

VariantJob job_from_measure_request(const nlohmann::json& request) {
  return variant_job<VariantJob>(request, nullptr);
}

nlohmann::json measure_request(const BackwardVariantJob& job) {
  return variant_request(job, kAttentionBackwardFamilyName);
}

BackwardVariantJob backward_job_from_measure_request(const nlohmann::json& request) {
  return variant_job<BackwardVariantJob>(request, kAttentionBackwardFamilyName);
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
      {"counters_skipped", outcome.counters_skipped},
      {"counters_failed", outcome.counters_failed},
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
  outcome.counters_skipped = message.value("counters_skipped", false);
  outcome.counters_failed = message.value("counters_failed", std::string());
  outcome.registers = read_optional<int>(message, "registers");
  outcome.blocks_per_sm = read_optional<int>(message, "blocks_per_sm");
  outcome.method = message.value("method", nlohmann::json::object());
  reply.context_lost = message.value("context_lost", false);
  return reply;
}

nlohmann::json measure_batch_request(const std::vector<VariantJob>& jobs, bool one_session_each) {
  nlohmann::json requests = nlohmann::json::array();
  for (const VariantJob& job : jobs) requests.push_back(measure_request(job));
  return {{"type", "measure_batch"},
          {"session_size", one_session_each ? 1 : 0},
          {"requests", std::move(requests)}};
}

std::vector<VariantJob> jobs_from_measure_batch_request(const nlohmann::json& request) {
  if (message_type(request) != "measure_batch") {
    throw std::invalid_argument("not a measure_batch request: " + request.dump().substr(0, 200));
  }
  std::vector<VariantJob> jobs;
  for (const nlohmann::json& one : request.at("requests")) {
    jobs.push_back(job_from_measure_request(one));
  }
  return jobs;
}

nlohmann::json batch_result_message(const std::vector<WorkerReply>& replies) {
  nlohmann::json results = nlohmann::json::array();
  for (const WorkerReply& reply : replies) results.push_back(result_message(reply));
  return {{"type", "batch_result"}, {"results", std::move(results)}};
}

std::vector<WorkerReply> replies_from_batch_result(const nlohmann::json& message) {
  if (message_type(message) != "batch_result") {
    throw std::invalid_argument("expected a batch result, got: " + message.dump().substr(0, 200));
  }
  std::vector<WorkerReply> replies;
  for (const nlohmann::json& one : message.at("results")) {
    replies.push_back(reply_from_result_message(one));
  }
  return replies;
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

nlohmann::json gemm_measure_request(const GemmVariantJob& job) {
  nlohmann::json request = {
      {"type", "measure"},
      {"family", "gemm"},
      {"problem", job.problem.to_json()},
      {"cublas", job.cublas},
      {"config", job.cublas ? nlohmann::json(nullptr) : job.config.to_json()},
  };
  add_kernel_fields(request, job);
  return request;
}

GemmVariantJob gemm_job_from_measure_request(const nlohmann::json& request) {
  if (request.value("family", std::string()) != "gemm") {
    throw std::invalid_argument("not a GEMM measure request: " + request.dump().substr(0, 200));
  }
  GemmVariantJob job;
  job.problem = GemmProblem::from_json(request.at("problem"));
  job.cublas = request.at("cublas").get<bool>();
  if (!job.cublas) job.config = GemmConfig::from_json(request.at("config"));
  read_kernel_fields(request, job);
  return job;
}

double gemm_measurement_timeout_seconds(const GemmProblem& problem, const GpuProfile& gpu) {
  const double roofline = roofline_seconds(problem.flops(), problem.compulsory_bytes(), gpu);
  // The fp32 reference runs at a few TFLOP/s: allow 1 TFLOP/s.
  const double reference = problem.flops() / 1e12;
  return std::max(60.0, 20.0 * (2.0 + 60.0 * roofline) + 4.0 * reference);
}

}  // namespace swr
