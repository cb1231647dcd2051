// The messages between the tuner and its measurement worker: one JSON object per line.
//   worker -> tuner, once at start: {"type":"ready", "device":..., "pid":...}, or
//                                   {"type":"startup_error", "error":...} (then it exits)
//   tuner -> worker, per variant:   {"type":"measure", problem, config, cubin (base64), ...}
//                                   (a GEMM request adds "family": "gemm")
//   worker -> tuner, per variant:   {"type":"result", status, times, counters, ..., context_lost}
//   tuner -> worker, per batch:     {"type":"measure_batch", "session_size": 0|1,
//                                    "requests": [measure requests]} (the attention forward)
//   worker -> tuner, per batch:     {"type":"started","index":i} before each variant,
//                                   {"type":"counting"} before the batch's counters, then
//                                   {"type":"batch_result","results":[result messages]}
//   tuner -> worker, at the end:    {"type":"quit"} (or its stdin closes)
// A worker whose CUDA context died (illegal address, trap) says context_lost and exits.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

// Base64 (RFC 4648, with padding; OpenSSL's): how a cubin travels inside a JSON line.
std::string encode_base64(const std::vector<char>& bytes);
// Throws std::invalid_argument for text that is not padded base64.
std::vector<char> decode_base64(std::string_view text);

// The GPU a request's kernel runs on, as the worker needs it: name, arch, SM count, L2 size.
nlohmann::json measured_gpu_to_json(const GpuProfile& gpu);
GpuProfile measured_gpu_from_json(const nlohmann::json& json);
// A problem's "dtype" field; std::invalid_argument names `where` for an unknown one.
DataType data_type_field(const nlohmann::json& problem, const std::string& where);

// The fields every family's measure request carries besides its problem and config: the cubin,
// its dynamic shared memory, the GPU and the seed of the inputs (VariantJob, GemmVariantJob).
template <class Job>
void add_kernel_fields(nlohmann::json& request, const Job& job) {
  request["cubin_base64"] = encode_base64(job.cubin);
  request["dynamic_shared_bytes"] = job.dynamic_shared_bytes;
  request["gpu"] = measured_gpu_to_json(job.gpu);
  request["seed"] = job.seed;
  request["counters"] = job.collect_counters;
}
template <class Job>
void read_kernel_fields(const nlohmann::json& request, Job& job) {
  job.cubin = decode_base64(request.at("cubin_base64").get<std::string>());
  job.dynamic_shared_bytes = request.at("dynamic_shared_bytes").get<int>();
  job.gpu = measured_gpu_from_json(request.at("gpu"));
  job.seed = request.at("seed").get<std::uint64_t>();
  job.collect_counters = request.value("counters", true);
}

nlohmann::json measure_request(const VariantJob& job);
VariantJob job_from_measure_request(const nlohmann::json& request);
// The attention backward's ("family": "attention-backward"; otherwise the forward's form).
nlohmann::json measure_request(const BackwardVariantJob& job);
BackwardVariantJob backward_job_from_measure_request(const nlohmann::json& request);

struct WorkerReply {
  VariantOutcome outcome;
  bool context_lost = false;  // the worker exits after sending it
};
nlohmann::json result_message(const WorkerReply& reply);
WorkerReply reply_from_result_message(const nlohmann::json& message);

// A batch of attention variants (variant_batches.hpp); `one_session_each`: each counted right
// after its timing in its own profiling session.
nlohmann::json measure_batch_request(const std::vector<VariantJob>& jobs, bool one_session_each);
std::vector<VariantJob> jobs_from_measure_batch_request(const nlohmann::json& request);
nlohmann::json batch_result_message(const std::vector<WorkerReply>& replies);
std::vector<WorkerReply> replies_from_batch_result(const nlohmann::json& message);

nlohmann::json ready_message(const std::string& device_name);
nlohmann::json startup_error_message(const std::string& error);
nlohmann::json quit_message();

// The message's "type", or "" when it has none.
std::string message_type(const nlohmann::json& message);

// The GEMM request ("family": "gemm"; the result message is the attention one).
nlohmann::json gemm_measure_request(const GemmVariantJob& job);
GemmVariantJob gemm_job_from_measure_request(const nlohmann::json& request);

// Generous time for one measurement: ~1 s of timed runs plus 60 runs at the roofline (check,
// warm-up, counter passes, and a variant many times slower than the roofline), plus the fp32
// reference of new inputs.
double gemm_measurement_timeout_seconds(const GemmProblem& problem, const GpuProfile& gpu);

}  // namespace swr
