// A results database and a bench result with what a report draws: attention shapes at three
// sequence lengths with twin variants (cyclic and sawtooth) and their L2 and DRAM counters, GEMM
// problems at several swizzle strides, the attention backward (twins of its Q walk with counters,
// and a shape without), and a peer-grid result file.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "db/results_database.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
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

inline constexpr int kBackwardSeqs[] = {4096, 8192, 16384};

// The backward shape measured at kBackwardSeqs: B2 H4 D64 bf16 causal.
inline AttentionBackwardProblem backward_problem(int seq) {
  AttentionProblem shape;
  shape.batch = 2;
  shape.heads = 4;
  shape.seq_q = shape.seq_kv = seq;
  shape.head_dim = 64;
  shape.dtype = DataType::bf16;
  shape.causal = true;
  return {shape};
}

// Compulsory L2 sectors of backward_problem(seq) for a 64-row Q tile and 32-byte sectors, counted
// by hand: per (batch, head) S rows each of Q, dO, K and V (64 bf16 = 4 sectors a row) and of the
// fp32 dQ accumulator (8 sectors a row), and L and delta (2 floats a row: a quarter sector); the
// causal mask still reads every tile once. 8 heads x (16 + 8 + 1/4) sectors a row.
inline double backward_cold_misses(int seq) {
  return 8 * 24.25 * seq;
}

// The backward's results: backward_problem at kBackwardSeqs, its four variants (cyclic and
// sawtooth, atomic and deterministic dQ) with L2 and DRAM counters, the sawtooth one with atomic dQ
// the fastest; and B1 H8 S8192 D128 bf16 non-causal without counters, where the deterministic
// variant is the fastest and the sawtooth one failed. The stored TFLOP/s is the backward's FLOP
// count over the median, as the tuner stores it.
inline void add_attention_backward_results(const std::filesystem::path& path) {
  db::ResultsDatabase database(path);
  const db::GpuId gpu = database.upsert_gpu(sample_gpu());
  const auto record = [&](const AttentionBackwardProblem& problem, const char* key, double ms) {
    const AttentionBackwardConfig config = *AttentionBackwardConfig::from_key(key);
    db::MeasurementRecord measurement =
        ok_measurement(gpu, database.upsert_problem(problem), database.upsert_config(config), ms);
    measurement.tflops = problem.flops() / (ms * 1e9);
    measurement.blocks_per_sm = 1;
    return measurement;
  };
  struct Variant {
    const char* key;
    double time_factor;
    double miss_factor;  // of the cold misses
  };
  for (int seq : kBackwardSeqs) {
    const double base_ms = 1.0 * seq / 4096 * seq / 4096;
    for (const Variant& variant :
         {Variant{"bwd-m64n128w8s2-cyclic-grid-head_major", 1.0, 3.0},
          Variant{"bwd-m64n128w8s2-sawtooth-grid-head_major", 0.96, 1.5},
          Variant{"bwd-m64n128w8s2-cyclic-grid-head_major-det", 1.3, 3.5},
          Variant{"bwd-m64n128w8s2-sawtooth-grid-head_major-det", 1.25, 1.75}}) {
      db::MeasurementRecord measurement =
          record(backward_problem(seq), variant.key, base_ms * variant.time_factor);
      measurement.l2_sector_misses = backward_cold_misses(seq) * variant.miss_factor;
      measurement.l2_sectors_from_tex = *measurement.l2_sector_misses * 20;
      measurement.l2_hit_rate = 0.95;
      measurement.dram_read_bytes = *measurement.l2_sector_misses * 32;
      measurement.dram_write_bytes = 3.0 * 2 * 4 * seq * 64 * 2;  // dQ, dK, dV once
      measurement.observed_intensity =
          backward_problem(seq).flops() /
          (*measurement.dram_read_bytes + *measurement.dram_write_bytes);
      database.record_measurement(measurement);
    }
  }
  AttentionBackwardProblem wide = backward_problem(8192);
  wide.shape.batch = 1;
  wide.shape.heads = 8;
  wide.shape.head_dim = 128;
  wide.shape.causal = false;
  database.record_measurement(record(wide, "bwd-m64n128w8s2-cyclic-grid-head_major", 10.0));
  database.record_measurement(record(wide, "bwd-m64n128w8s2-cyclic-grid-head_major-det", 9.0));
  const db::ConfigId failed = database.upsert_config(
      *AttentionBackwardConfig::from_key("bwd-m64n128w8s2-sawtooth-grid-head_major"));
  database.record_measurement(failed_measurement(gpu, database.upsert_problem(wide), failed,
                                                 db::MeasurementStatus::wrong_result,
                                                 "dQ differs from the reference"));
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
