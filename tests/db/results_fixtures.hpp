// Shared pieces of the results-database tests: a sample GPU and problem, distinct configs, and
// measurement records that pass the database's rules.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "db/records.hpp"
#include "swr/attention_config.hpp"
#include "swr/attention_problem.hpp"

namespace swr::testing {

inline db::GpuRecord sample_gpu() {
  db::GpuRecord gpu;
  gpu.name = "h200";
  gpu.arch = "sm_90a";
  gpu.sm_count = 132;
  gpu.l2_bytes = 60 * 1024 * 1024;
  gpu.device_name = "NVIDIA H200";
  gpu.driver_version = "580.65";
  gpu.cuda_version = "13.0";
  return gpu;
}

inline AttentionProblem sample_problem(int seq = 4096, bool causal = false) {
  AttentionProblem problem;
  problem.batch = 8;
  problem.heads = 1;
  problem.seq_q = seq;
  problem.seq_kv = seq;
  problem.head_dim = 128;
  problem.causal = causal;
  return problem;
}

// Config number `index` of 216 distinct ones (tile, warps, stages, order, persistence vary).
inline AttentionConfig numbered_config(int index) {
  AttentionConfig config;
  config.block_m = (index % 2 == 0) ? 64 : 128;
  index /= 2;
  config.block_n = 32 << (index % 3);
  index /= 3;
  config.warps = (index % 2 == 0) ? 4 : 8;
  index /= 2;
  config.stages = 1 + index % 3;
  index /= 3;
  config.order = (index % 2 == 0) ? KvOrder::cyclic : KvOrder::sawtooth;
  index /= 2;
  config.persistence = static_cast<Persistence>(index % 3);
  return config;
}

inline db::MeasurementRecord ok_measurement(db::GpuId gpu, db::ProblemId problem,
                                            db::ConfigId config, double median_ms) {
  db::MeasurementRecord record;
  record.gpu = gpu;
  record.problem = problem;
  record.config = config;
  record.status = db::MeasurementStatus::ok;
  record.median_ms = median_ms;
  record.p95_ms = median_ms * 1.05;
  record.min_ms = median_ms * 0.98;
  record.timed_runs = 20;
  record.method = {{"warmup", 3}, {"l2", "flush"}};
  record.source_hash = "hash-" + std::to_string(static_cast<long long>(raw(config)));
  record.toolkit_version = "13.0";
  record.driver_version = "580.65";
  return record;
}

inline db::MeasurementRecord failed_measurement(db::GpuId gpu, db::ProblemId problem,
                                                db::ConfigId config, db::MeasurementStatus status,
                                                std::string error) {
  db::MeasurementRecord record = ok_measurement(gpu, problem, config, 1.0);
  record.status = status;
  record.error = std::move(error);
  record.median_ms.reset();
  record.p95_ms.reset();
  record.min_ms.reset();
  return record;
}

inline std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary);
  file << bytes;
}

}  // namespace swr::testing
