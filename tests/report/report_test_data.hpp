// A results database and a bench result with what a report draws: attention shapes at three
// sequence lengths with twin variants (cyclic and sawtooth) and their L2 and DRAM counters, GEMM
// problems at several swizzle strides, and a peer-grid result file.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "db/results_database.hpp"
#include "tests/db/results_fixtures.hpp"

namespace swr::testing {

inline constexpr int kReportSeqs[] = {16384, 32768, 65536};

// Attention: B8 H1 D128 f16 non-causal at kReportSeqs, four variants each (grid and static,
// cyclic and sawtooth); sawtooth misses fewer sectors, and the counters are complete.
inline void add_attention_results(const std::filesystem::path& path) {
  db::ResultsDatabase database(path);
  const db::GpuId gpu = database.upsert_gpu(sample_gpu());
  for (int seq : kReportSeqs) {
    AttentionProblem problem = sample_problem(seq);
    const db::ProblemId problem_id = database.upsert_problem(problem);
    int index = 0;
    for (const char* key :
         {"m128n64w4s2-cyclic-grid-head_major", "m128n64w4s2-sawtooth-grid-head_major",
          "m128n64w4s2-cyclic-static-head_major", "m128n64w4s2-sawtooth-static-head_major"}) {
      const AttentionConfig config = *AttentionConfig::from_key(key);
      const double ms = 1.0 * seq / 16384 * seq / 16384 * (1.0 + 0.05 * index);
      db::MeasurementRecord record =
          ok_measurement(gpu, problem_id, database.upsert_config(config), ms);
      const double cold = 4.0 * 8 * seq * 256 / 32;  // Q, K, V, O once, in 32-byte sectors
      record.l2_sector_misses = cold * (config.order == KvOrder::cyclic ? 3.0 : 1.5) * seq / 16384;
      record.l2_sectors_from_tex = *record.l2_sector_misses * 20;
      record.l2_hit_rate = 0.95;
      record.dram_read_bytes = *record.l2_sector_misses * 32;
      record.dram_write_bytes = 8.0 * seq * 256;
      record.tflops = problem.flops() / (ms * 1e9);
      record.observed_intensity =
          problem.flops() / (*record.dram_read_bytes + *record.dram_write_bytes);
      record.algorithmic_intensity = problem.flops() / (4.0 * 8 * seq * 256);
      record.roofline_fraction = *record.tflops / 989.0;
      record.blocks_per_sm = 2;
      database.record_measurement(record);
      ++index;
    }
  }
}

// GEMM through the generic tables (family 'gemm'): squares 1024..4096 at strides 0..2048, the
// best stride moving with the size. Rows are written with SQL, as any GEMM writer would store
// them; the measurements go through record_measurement.
inline void add_gemm_results(const std::filesystem::path& path) {
  std::vector<std::pair<std::int64_t, int>> problem_sizes;
  std::vector<std::pair<std::int64_t, int>> config_strides;
  {
    SQLite::Database sqlite(path, SQLite::OPEN_READWRITE);
    for (int size : {1024, 2048, 4096}) {
      const nlohmann::json json = {{"m", size}, {"n", size}, {"k", size}, {"dtype", "f16"}};
      SQLite::Statement insert(sqlite,
                               "INSERT INTO problems (family, key, json) VALUES ('gemm', ?, ?)");
      insert.bind(1, "gemm_m" + std::to_string(size) + "_f16");
      insert.bind(2, json.dump());
      insert.exec();
      problem_sizes.emplace_back(sqlite.getLastInsertRowid(), size);
    }
    for (int stride : {0, 512, 1024, 2048}) {
      const nlohmann::json json = {
          {"block_m", 128}, {"block_n", 128}, {"swizzle_stride", stride}, {"swizzle_axis", "n"}};
      SQLite::Statement insert(sqlite,
                               "INSERT INTO configs (family, key, json) VALUES ('gemm', ?, ?)");
      insert.bind(1, "m128n128-swz" + std::to_string(stride));
      insert.bind(2, json.dump());
      insert.exec();
      config_strides.emplace_back(sqlite.getLastInsertRowid(), stride);
    }
  }
  db::ResultsDatabase database(path);
  const db::GpuId gpu = database.upsert_gpu(sample_gpu());
  for (const auto& [problem, size] : problem_sizes) {
    for (const auto& [config, stride] : config_strides) {
      const double best_stride = size / 2.0;
      const double tflops = 300.0 - 50.0 * std::abs(stride - best_stride) / 2048.0;
      db::MeasurementRecord record =
          ok_measurement(gpu, db::ProblemId{problem}, db::ConfigId{config},
                         2.0 * size * size * size / (tflops * 1e9));
      record.tflops = tflops;
      record.method["cublas_median_ms"] = 2.0 * size * size * size / (400.0 * 1e9);
      database.record_measurement(record);
    }
  }
}

// A bench/peer_grid.py result: the three attention shapes with swr, flash2, cudnn and a missing
// peer; swr twice as fast as flash2 and half as fast as cudnn at every point.
inline nlohmann::json bench_document() {
  nlohmann::json points = nlohmann::json::array();
  for (int seq : kReportSeqs) {
    const double swr_ms = 1.0 * seq / 16384;
    const double flops = 4.0 * 8 * seq * double(seq) * 128;
    auto candidate = [&](double ms) {
      return nlohmann::json{{"status", "ok"}, {"median_ms", ms}, {"p95_ms", ms * 1.01},
                            {"min_ms", ms},   {"runs", 5},       {"tflops", flops / ms / 1e9}};
    };
    nlohmann::json swr = candidate(swr_ms);
    swr["l2_sector_misses"] = 1.0e6 * seq / 16384;
    nlohmann::json flash2 = candidate(swr_ms * 2);
    if (seq == kReportSeqs[0]) flash2["l2_sector_misses"] = 3.0e6;  // counted with ncu
    points.push_back(
        {{"family", "attention"},
         {"regime", "long"},
         {"key", sample_problem(seq).key()},
         {"describe", "B8 H1 S" + std::to_string(seq) + " D128 f16"},
         {"batch", 8},
         {"heads", 1},
         {"seq", seq},
         {"head_dim", 128},
         {"dtype", "f16"},
         {"causal", false},
         {"swr_config", "m128n64w4s2-cyclic-grid-head_major"},
         {"swr_config_source", "tuned"},
         {"candidates",
          {{"swr", swr},
           {"flash2", flash2},
           {"cudnn", candidate(swr_ms / 2)},
           {"efficient",
            {{"status", "missing"}, {"note", "this PyTorch has no efficient backend"}}}}}});
  }
  return {
      {"schema", "swr-peer-grid/1"},
      {"record",
       {{"gpu", "NVIDIA H200"},
        {"driver", "580.159.04"},
        {"torch", "2.11.0+cu130"},
        {"cudnn", "91900"},
        {"command", "python3 bench/peer_grid.py --out x"}}},
      {"method", {{"timing", "device events"}, {"regimes", {{"long", "Sawtooth long sequences"}}}}},
      {"points", points}};
}

}  // namespace swr::testing
