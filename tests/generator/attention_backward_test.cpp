// The attention backward family without a GPU: its config's key and JSON forms (round trips and
// refusals), its problem's key and work, the resource model's tile rules and shared memory against
// the template's own (a rendered static_assert proves them equal when it compiles), the space on
// GB10 and the H200 (every knob value kept somewhere, what is pruned and why), the workspace's
// layout, and the rendered module's entries.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

AttentionBackwardProblem problem(int head_dim, bool causal = true, int kv_heads = 0) {
  AttentionProblem shape{2, 16, 4096, 4096, head_dim, DataType::bf16, causal};
  shape.kv_heads = kv_heads;
  return {shape};
}

TEST(AttentionBackwardConfig, KeysRoundTrip) {
  AttentionBackwardConfig config;
  EXPECT_EQ(config.key(), "bwd-m64n128w8s2-cyclic-grid-head_major");
  config.order = KvOrder::sawtooth;
  config.persistence = Persistence::static_loop;
  config.swizzle = TileSwizzle::head_groups;
  config.head_group = 4;
  config.dq = DqAccumulation::deterministic;
  EXPECT_EQ(config.key(), "bwd-m64n128w8s2-sawtooth-static-groups4-det");
  for (const std::string key :
       {"bwd-m64n128w8s2-cyclic-grid-head_major", "bwd-m32n64w4s1-sawtooth-dynamic-det",
        "bwd-m64n128w8s2-sawtooth-static-groups4-det",
        "bwd-m32n64w8s3-cyclic-grid-head_major-fault",
        "bwd-wgmma-m64n128w12s2-cyclic-grid-heads_interleaved",
        "bwd-wgmma-m64n128w12s2-sawtooth-dynamic-head_major-lag",
        "bwd-wgmma-m128n128w12s2-cyclic-grid-groups3-lag-det",
        "bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-pair",
        "bwd-wgmma-m64n128w12s2-cyclic-grid-groups3-pair-lag",
        "bwd-wgmma-m128n128w12s3-cyclic-dynamic-head_major-lag-red",
        "bwd-wgmma-m128n128w12s3-sawtooth-grid-head_major-pair-red"}) {
    const auto parsed = AttentionBackwardConfig::from_key(key);
    if (key == "bwd-m32n64w4s1-sawtooth-dynamic-det") {
      EXPECT_FALSE(parsed) << "a key without its swizzle";
      continue;
    }
    ASSERT_TRUE(parsed) << key;
    EXPECT_EQ(parsed->key(), key);
    EXPECT_EQ(AttentionBackwardConfig::from_json(parsed->to_json()), *parsed);
  }
}

TEST(AttentionBackwardConfig, OnlyCanonicalKeysParse) {
  for (const char* key :
       {"m64n128w8s2-cyclic-grid-head_major", "bwd-m64n128w8-cyclic-grid-head_major",
        "bwd-m064n128w8s2-cyclic-grid-head_major", "bwd-m64n128w8s2-static-grid-head_major",
        "bwd-m64n128w8s2-cyclic-static_loop-head_major", "bwd-m64n128w8s2-cyclic-grid-groups0",
        "bwd-m64n128w8s2-cyclic-grid-head_major-det-det", "bwd-m64n128w8s2-cyclic-grid-head_groups",
        "bwd-m64n128w8s2-cyclic-grid-head_major-fault-det",
        "bwd-wgmma-m64n128w12s2-cyclic-grid-head_major-det-lag",
        "bwd-wgmma-m64n128w12s2-cyclic-grid-head_major-lag-lag",
        "bwd-wgmma-m64n128w12s2-cyclic-grid-head_major-lag-pair",
        "bwd-wgmma-m64n128w12s2-cyclic-grid-head_major-pair-pair",
        "bwd-wgmma-m128n128w12s3-cyclic-grid-head_major-red-lag",
        "bwd-wgmma-m128n128w12s3-cyclic-grid-head_major-red-red",
        "bwd-wgmma-m128n128w12s3-cyclic-grid-head_major-red-pair", ""}) {
    EXPECT_FALSE(AttentionBackwardConfig::from_key(key)) << key;
  }
}

TEST(AttentionBackwardConfig, BadJsonFieldsAreNamed) {
  // A field set to a value it does not take: one UsageError naming the field and its values.
  const auto expect_named = [](const char* field, const char* value, const std::string& message) {
    nlohmann::json json = AttentionBackwardConfig{}.to_json();
    json[field] = value;
    try {
      AttentionBackwardConfig::from_json(json);
      ADD_FAILURE() << "accepted " << field << " \"" << value << "\"";
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
    }
  };
  expect_named("dq", "sometimes", "\"dq\" must be one of atomic, deterministic");
  expect_named("consumers", "eventually", "\"consumers\" must be one of lockstep, lagged");
  expect_named("cta_pairs", "yes", "\"cta_pairs\"");
  // Configs written before CTA pairs have no field: single CTAs.
  nlohmann::json before = AttentionBackwardConfig{}.to_json();
  before.erase("cta_pairs");
  EXPECT_FALSE(AttentionBackwardConfig::from_json(before).cta_pairs);
  nlohmann::json json = AttentionBackwardConfig{}.to_json();
  json["key"] = "bwd-m64n64w4s2-cyclic-grid-head_major";
  EXPECT_THROW(AttentionBackwardConfig::from_json(json), UsageError);
  // A config written before the consumers' knob is lockstep.
  json = AttentionBackwardConfig{}.to_json();
  json.erase("consumers");
  EXPECT_EQ(AttentionBackwardConfig::from_json(json).consumers, ConsumerSync::lockstep);
}

TEST(AttentionBackwardProblem, KeyAndWork) {
  const AttentionBackwardProblem p = problem(128);
  EXPECT_EQ(p.key(), "bwd_" + p.shape.key());
  EXPECT_DOUBLE_EQ(p.flops(), 2.5 * p.shape.flops());
  EXPECT_EQ(AttentionBackwardProblem::from_json(p.to_json()), p);
  AttentionBackwardProblem bad = p;
  bad.shape.head_dim = 48;
  EXPECT_THROW(bad.validate(), UsageError);
}

TEST(AttentionBackwardResources, TileRulesInWords) {
  AttentionBackwardConfig config;
  config.warps = 8;
  config.block_n = 64;  // 8 rows a warp at head dim 128
  EXPECT_NE(attention_backward_tile_problem(problem(128), config).find("whole m16 slices"),
            std::string::npos);
  EXPECT_EQ(attention_backward_tile_problem(problem(256), config), "")
      << "above 128 two warps share 16 rows";
  config = {};
  config.block_m = 32;  // 2 row slices over 8 warps: 4 column parts
  EXPECT_NE(attention_backward_tile_problem(problem(80), config).find("n16 pairs"),
            std::string::npos);
  // The wgmma kernel: two warpgroups of 64 K/V rows, whole 64-column chunks, and S^T, dP^T, dK
  // and dV in a warpgroup's registers (block_m x head dim at most 8192).
  config = {};
  config.path = InstructionPath::wgmma;  // m64 n128 w8
  EXPECT_EQ(attention_backward_tile_problem(problem(128), config), "");
  EXPECT_NE(attention_backward_tile_problem(problem(64), config).find("not a multiple of 128"),
            std::string::npos)
      << "64 Q rows split dQ's columns over the warpgroups";
  EXPECT_NE(attention_backward_tile_problem(problem(96), config).find("64-column chunks"),
            std::string::npos);
  EXPECT_NE(attention_backward_tile_problem(problem(256), config).find("registers"),
            std::string::npos);
  config.block_m = 128;
  EXPECT_EQ(attention_backward_tile_problem(problem(64), config), "");
  EXPECT_NE(attention_backward_tile_problem(problem(128), config).find("registers"),
            std::string::npos);
  config.warps = 4;
  EXPECT_NE(attention_backward_tile_problem(problem(64), config).find("two warpgroups"),
            std::string::npos);
  // 80 Q rows a step (dQ transposed): the warp-specialized kernel's (the one without a producer
  // has no transposed dQ), at head dim 128 alone; no other width between 64 and 128.
  struct QRowsCase {
    int warps, block_m, head_dim;
    const char* reason;  // a part of the refusal, or "" where the tile fits
  };
  for (const QRowsCase& c :
       {QRowsCase{8, 80, 128, "warp-specialized"}, QRowsCase{12, 80, 128, ""},
        QRowsCase{12, 80, 64, "head dim 128"}, QRowsCase{12, 96, 128, "64, 80 or 128"}}) {
    config = {};
    config.path = InstructionPath::wgmma;
    config.warps = c.warps;
    config.block_m = c.block_m;
    const std::string refusal = attention_backward_tile_problem(problem(c.head_dim), config);
    if (*c.reason == '\0') {
      EXPECT_EQ(refusal, "") << config.key();
    } else {
      EXPECT_NE(refusal.find(c.reason), std::string::npos) << config.key() << ": " << refusal;
    }
  }
  // The wide-head kernel (a producer and 64 K/V rows): head dims above 128 in whole 128-column
  // halves, 64 Q rows a step, one or two stages.
  config = {};
  config.path = InstructionPath::wgmma;
  config.warps = 12;
  config.block_n = 64;
  ASSERT_TRUE(config.splits_products());
  EXPECT_EQ(attention_backward_tile_problem(problem(256), config), "");
  EXPECT_NE(attention_backward_tile_problem(problem(128), config).find("above 128"),
            std::string::npos);
  EXPECT_NE(attention_backward_tile_problem(problem(192), config).find("multiple of 128"),
            std::string::npos);
  config.stages = 3;
  EXPECT_NE(attention_backward_tile_problem(problem(256), config).find("stages 3"),
            std::string::npos);
  config.stages = 2;
  config.block_m = 128;
  EXPECT_NE(attention_backward_tile_problem(problem(256), config).find("block_m 128"),
            std::string::npos);
  config.warps = 8;  // without a producer, 64 K/V rows are no wgmma tile
  EXPECT_FALSE(config.splits_products());
  EXPECT_NE(attention_backward_tile_problem(problem(256), config).find("block_n 64"),
            std::string::npos);
  // Lagged consumers: the warp-specialized kernel of two 64-row K/V warpgroups alone.
  config = {};
  config.consumers = ConsumerSync::lagged;
  EXPECT_NE(attention_backward_tile_problem(problem(128), config).find("consumers lagged"),
            std::string::npos)
      << "mma.sync";
  config.path = InstructionPath::wgmma;
  EXPECT_NE(attention_backward_tile_problem(problem(128), config).find("consumers lagged"),
            std::string::npos)
      << "wgmma without a producer";
  config.warps = 12;
  EXPECT_EQ(attention_backward_tile_problem(problem(128), config), "");
  config.block_n = 64;
  EXPECT_NE(attention_backward_tile_problem(problem(256), config).find("consumers lagged"),
            std::string::npos)
      << "the wide-head kernel";
  // CTA pairs: that kernel alone, taking a grid's tiles, adding dQ atomically.
  config = {};
  config.cta_pairs = true;
  EXPECT_NE(attention_backward_tile_problem(problem(128), config).find("cta_pairs: only"),
            std::string::npos)
      << "mma.sync";
  config.path = InstructionPath::wgmma;
  config.warps = 12;
  EXPECT_EQ(attention_backward_tile_problem(problem(128), config), "");
  config.persistence = Persistence::dynamic;
  EXPECT_NE(attention_backward_tile_problem(problem(128), config).find("persistence dynamic"),
            std::string::npos);
  config.persistence = Persistence::grid;
  config.dq = DqAccumulation::deterministic;
  EXPECT_NE(attention_backward_tile_problem(problem(128), config).find("deterministic dQ"),
            std::string::npos);
  config.dq = DqAccumulation::atomic;
  config.block_n = 64;
  EXPECT_NE(attention_backward_tile_problem(problem(256), config).find("cta_pairs: only"),
            std::string::npos)
      << "the wide-head kernel";
  // dQ from the consumers' registers: that kernel alone, adding dQ atomically.
  config = {};
  config.dq_from_registers = true;
  EXPECT_NE(attention_backward_tile_problem(problem(128), config).find("dq_from_registers: only"),
            std::string::npos)
      << "mma.sync";
  config.path = InstructionPath::wgmma;
  config.warps = 12;
  EXPECT_EQ(attention_backward_tile_problem(problem(128), config), "");
  config.dq = DqAccumulation::deterministic;
  EXPECT_NE(attention_backward_tile_problem(problem(128), config).find("deterministic dQ"),
            std::string::npos);
  config.dq = DqAccumulation::atomic;
  config.block_n = 64;
  EXPECT_NE(attention_backward_tile_problem(problem(256), config).find("dq_from_registers: only"),
            std::string::npos)
      << "the wide-head kernel";
}

TEST(AttentionBackwardResources, TheWgmmaPathNeedsSm90a) {
  AttentionBackwardConfig config;
  config.path = InstructionPath::wgmma;
  const GpuProfile gb10 = find_gpu_profile("gb10").value();
  EXPECT_NE(attention_backward_resource_use(problem(128), config, gb10).does_not_fit.find("sm_90a"),
            std::string::npos);
  EXPECT_EQ(attention_backward_resource_use(problem(128), config, find_gpu_profile("h200").value())
                .does_not_fit,
            "");
}

TEST(AttentionBackwardResources, SharedMemoryOfTheTiles) {
  AttentionBackwardConfig config;  // m64 n128 s2
  // K, V: 2 x 128 rows x 256 B; stages: 2 x (2 x 64 x 256 + 2 x 64 x 4); dS^T: 128 x 128 B.
  EXPECT_EQ(attention_backward_shared_bytes(problem(128), config),
            2 * 128 * 256 + 2 * (2 * 64 * 256 + 512) + 128 * 128);
  config.block_m = 32;  // dS^T rows of 32 columns are padded to 5 chunks
  EXPECT_EQ(attention_backward_shared_bytes(problem(80), config),
            2 * 128 * 176 + 2 * (2 * 32 * 176 + 256) + 128 * 80);
  // wgmma (unpadded swizzled chunks): K, V; stages x (Q, dO); dS^T; stages x (L, delta); the
  // 1024 bytes that align the tiles.
  config = {};
  config.path = InstructionPath::wgmma;
  EXPECT_EQ(attention_backward_shared_bytes(problem(128), config),
            2 * 128 * 256 + 2 * (2 * 64 * 256) + 128 * 64 * 2 + 2 * 512 + 1024);
  // The wide-head kernel: K, V of 64 rows; stages x (Q, dO) of 64 rows; dS^T and P^T's hand-over
  // (64 x 64 each); stages x (L, delta); the barriers; 1024 to align. Under sm_90's 227 KiB.
  config.warps = 12;
  config.block_n = 64;
  EXPECT_EQ(attention_backward_shared_bytes(problem(256), config),
            2 * 64 * 512 + 2 * (2 * 64 * 512) + 2 * 64 * 64 * 2 + 2 * 512 + 256 + 1024);
  EXPECT_LE(attention_backward_shared_bytes(problem(256), config), 232448);
  // The warp-specialized kernel of two 64-row K/V warpgroups at head dim 64: K, V; stages x (Q,
  // dO); two dS^T slots; dQ's fp32 buffer, which the route from registers does without; stages x
  // (L, delta); the barriers; 1024 to align. A third stage fits only without the buffer.
  config = {};
  config.path = InstructionPath::wgmma;
  config.warps = 12;
  config.block_m = 128;
  config.stages = 3;
  const int without_buffer =
      2 * 128 * 128 + 3 * (2 * 128 * 128) + 2 * 128 * 128 * 2 + 3 * 1024 + 512 + 1024;
  EXPECT_EQ(attention_backward_shared_bytes(problem(64), config), without_buffer + 128 * 64 * 4);
  EXPECT_GT(attention_backward_shared_bytes(problem(64), config), 232448);
  config.dq_from_registers = true;
  EXPECT_EQ(attention_backward_shared_bytes(problem(64), config), without_buffer);
  EXPECT_LE(without_buffer, 232448);
}

TEST(AttentionBackwardSpace, EveryKnobValueIsKeptOnBothTargets) {
  for (const char* gpu_name : {"gb10", "h200"}) {
    const GpuProfile gpu = find_gpu_profile(gpu_name).value();
    std::set<std::string> seen;
    for (int head_dim : kSupportedHeadDims) {
      const AttentionBackwardSpace space = build_attention_backward_space(problem(head_dim), gpu);
      EXPECT_FALSE(space.configs.empty()) << gpu_name << " d" << head_dim;
      for (const AttentionBackwardConfig& config : space.configs) {
        const ResourceUse use = attention_backward_resource_use(problem(head_dim), config, gpu);
        EXPECT_TRUE(use.does_not_fit.empty()) << config.key();
        EXPECT_LE(use.dynamic_shared_bytes, gpu.shared_memory_per_block_optin) << config.key();
        // wgmma on sm_90a only, at the head dims its registers take: 64 and 128 on the kernels
        // of 64 K/V rows a warpgroup, 256 on the wide-head kernel (block_n 64) alone.
        if (config.path == InstructionPath::wgmma) {
          EXPECT_EQ(gpu.arch, "sm_90a") << config.key();
          EXPECT_TRUE(head_dim == 64 || head_dim == 128 || head_dim == 256) << config.key();
          EXPECT_EQ(config.splits_products(), head_dim == 256) << config.key();
          seen.insert("wgmma d" + std::to_string(head_dim));
        }
        seen.insert("m" + std::to_string(config.block_m) + "n" + std::to_string(config.block_n) +
                    "w" + std::to_string(config.warps));
        seen.insert("s" + std::to_string(config.stages));
        seen.insert(std::string(to_string(config.order)));
        seen.insert(std::string(to_string(config.persistence)));
        seen.insert(std::string(to_string(config.swizzle)));
        seen.insert(std::string(to_string(config.dq)));
        seen.insert(std::string(to_string(config.consumers)));
        if (config.consumers == ConsumerSync::lagged) {
          EXPECT_TRUE(config.warp_specialized() && !config.splits_products()) << config.key();
        }
        if (config.cta_pairs) {
          EXPECT_TRUE(config.pairs_kv_warpgroups() && config.persistence == Persistence::grid &&
                      config.dq == DqAccumulation::atomic)
              << config.key();
          seen.insert("cta_pairs");
        }
        if (config.dq_from_registers) seen.insert("dq_from_registers");
      }
      for (const Pruned<AttentionBackwardConfig>& pruned : space.pruned) {
        EXPECT_FALSE(pruned.reason.empty()) << pruned.config.key();
      }
    }
    for (const char* value :
         {"m64n128w8", "m32n128w8", "m64n64w4", "m32n64w4", "m32n32w4", "s2", "s3", "cyclic",
          "sawtooth", "grid", "static", "dynamic", "head_major", "heads_interleaved", "head_groups",
          "atomic", "deterministic", "lockstep"}) {
      EXPECT_TRUE(seen.count(value)) << gpu_name << " keeps no config with " << value;
    }
    EXPECT_EQ(seen.count("lagged"), std::string(gpu_name) == "h200" ? 1u : 0u);
    EXPECT_EQ(seen.count("cta_pairs"), std::string(gpu_name) == "h200" ? 1u : 0u);
    EXPECT_EQ(seen.count("dq_from_registers"), std::string(gpu_name) == "h200" ? 1u : 0u);
    for (const char* wgmma : {"wgmma d64", "wgmma d128", "wgmma d256", "m80n128w12"}) {
      EXPECT_EQ(seen.count(wgmma), std::string(gpu_name) == "h200" ? 1u : 0u) << wgmma;
    }
    // 64 K/V rows split over 8 warps serve head dims above 128 only, whose two stages outgrow
    // GB10's 99 KiB (32 K/V rows over 4 warps serve them there).
    for (const char* split_tile : {"m64n64w8", "m32n64w8"}) {
      EXPECT_EQ(seen.count(split_tile), std::string(gpu_name) == "h200" ? 1u : 0u) << split_tile;
    }
  }
}

TEST(AttentionBackwardSpace, GroupedHeadsGroupByKvHead) {
  const GpuProfile gpu = find_gpu_profile("h200").value();
  // 2 batches x 2 K/V heads: a head group of 4 would cover them all, 1 changes nothing.
  AttentionBackwardProblem gqa = problem(128, true, 2);
  gqa.shape.seq_q = gqa.shape.seq_kv = 131072;
  for (const AttentionBackwardConfig& config : build_attention_backward_space(gqa, gpu).configs) {
    if (config.swizzle == TileSwizzle::head_groups) {
      EXPECT_GT(config.head_group, 1) << config.key();
      EXPECT_LT(config.head_group, 4) << config.key();
    }
  }
}

TEST(AttentionBackwardWorkspace, PartsAreAlignedAndSized) {
  AttentionBackwardConfig config;
  config.dq = DqAccumulation::deterministic;
  AttentionBackwardProblem p = problem(64);
  p.shape.seq_q = 1000;  // 16 Q tiles of 64: lists of 1024 padded rows
  const BackwardWorkspaceLayout layout = backward_workspace_layout(p, config);
  const std::size_t heads = 2 * 16;
  EXPECT_EQ(layout.lse_log2, 0u);
  EXPECT_EQ(layout.delta, heads * 1024 * 4);
  EXPECT_EQ(layout.dq_accum, 2 * heads * 1024 * 4);
  // The dQ accumulator keeps whole Q tiles too (a tile's block may be added whole).
  EXPECT_EQ(layout.semaphores, layout.dq_accum + heads * 1024 * 64 * 4);
  EXPECT_EQ(layout.bytes, layout.semaphores + heads * 16 * 4);
  for (std::size_t offset : {layout.delta, layout.dq_accum, layout.semaphores, layout.bytes}) {
    EXPECT_EQ(offset % 256, 0u);
  }
  config.dq = DqAccumulation::atomic;  // no semaphores
  EXPECT_EQ(backward_workspace_layout(p, config).bytes, layout.semaphores);
}

// The warp-specialized kernel's split parts (backward_last_wave): slots for kBackwardSplitUnits
// units' CTAs where it may split (atomic dQ, no causal mask), none elsewhere; and the split itself
// on the H100's and H200's 132 SMs.
TEST(AttentionBackwardWorkspace, SplitPartsHaveSlotsWhereTheKernelSplits) {
  AttentionBackwardProblem p = problem(128, false);
  p.shape.seq_q = p.shape.seq_kv = 16384;  // 2 x 16 heads x 128 K/V tiles: 31 waves and 4 tiles
  AttentionBackwardConfig config =
      AttentionBackwardConfig::from_key("bwd-wgmma-m80n128w12s2-cyclic-grid-head_major").value();
  ASSERT_TRUE(backward_splits_last_wave(p, config));
  BackwardWorkspaceLayout layout = backward_workspace_layout(p, config);
  EXPECT_EQ(layout.split_sums, layout.split_arrivals + 256);  // 32 CTAs x 2 counts, aligned
  EXPECT_EQ(layout.bytes, layout.split_sums + 32 * 2 * 128 * 128 * 4);
  EXPECT_EQ(backward_schedule_units(p, config), 4096);
  attention::BackwardLastWave split = backward_last_wave(p, config, 132);
  EXPECT_EQ(split.whole, 4092);
  EXPECT_EQ(split.parts, 8);

  config.cta_pairs = true;  // 2048 units of two CTAs, 66 a wave: 2 split
  layout = backward_workspace_layout(p, config);
  EXPECT_EQ(layout.bytes, layout.split_sums + 2 * 32 * 2 * 128 * 128 * 4);
  split = backward_last_wave(p, config, 132);
  EXPECT_EQ(split.whole, 2046);
  EXPECT_EQ(split.parts, 8);
  config.cta_pairs = false;

  const auto no_slots = [&](const AttentionBackwardProblem& problem,
                            const AttentionBackwardConfig& c) {
    EXPECT_FALSE(backward_splits_last_wave(problem, c)) << c.key();
    const BackwardWorkspaceLayout none = backward_workspace_layout(problem, c);
    EXPECT_EQ(none.bytes, none.split_arrivals) << c.key();
    EXPECT_EQ(backward_last_wave(problem, c, 132).parts, 1) << c.key();
  };
  AttentionBackwardProblem causal = p;
  causal.shape.causal = true;
  no_slots(causal, config);
  AttentionBackwardConfig groups = config;
  groups.swizzle = TileSwizzle::head_groups;
  groups.head_group = 3;
  no_slots(p, groups);
  AttentionBackwardConfig deterministic = config;
  deterministic.dq = DqAccumulation::deterministic;
  no_slots(p, deterministic);
  AttentionBackwardProblem wide = p;
  wide.shape.head_dim = 256;
  no_slots(
      wide,
      AttentionBackwardConfig::from_key("bwd-wgmma-m64n64w12s2-cyclic-grid-head_major").value());
  no_slots(
      p, AttentionBackwardConfig::from_key("bwd-wgmma-m64n128w8s2-cyclic-grid-head_major").value());
}

TEST(AttentionBackwardSource, RendersTheThreeEntriesInLaunchOrder) {
  const KernelSource source = render_attention_backward_kernel(problem(128), {});
  EXPECT_EQ(source.entry, kBackwardEntryName);
  EXPECT_EQ(source.launch_sequence,
            (std::vector<std::string>{kBackwardPreprocessEntryName, kBackwardEntryName,
                                      kBackwardPostprocessEntryName}));
  for (const std::string& entry : source.launch_sequence) {
    EXPECT_NE(source.text.find(entry + "("), std::string::npos) << entry;
  }
  EXPECT_EQ(source.name, "bwd-m64n128w8s2-cyclic-grid-head_major_d128_bf16_causal.cu");
  EXPECT_EQ(source.threads_per_block, 256);
  EXPECT_EQ(source.text.find("lagged_dq"), std::string::npos) << "only the warp-specialized traits";
}

// dQ from the consumers' registers comes only as the third stage it makes room for: with the
// causal mask, where the writer's buffer leaves no room for it (head dim 64 at 128 Q rows), each
// beside its two-stage twin whose writer adds dQ.
TEST(AttentionBackwardSpace, DqFromRegistersOnlyMakesRoomForAStage) {
  const GpuProfile h200 = find_gpu_profile("h200").value();
  for (int head_dim : {64, 128}) {
    for (bool causal : {true, false}) {
      const std::vector<AttentionBackwardConfig> configs =
          build_attention_backward_space(problem(head_dim, causal), h200).configs;
      const std::set<std::string> keys = [&] {
        std::set<std::string> all;
        for (const AttentionBackwardConfig& config : configs) all.insert(config.key());
        return all;
      }();
      std::size_t deeper = 0;
      for (const AttentionBackwardConfig& config : configs) {
        if (!config.dq_from_registers) continue;
        ++deeper;
        EXPECT_EQ(config.stages, 3) << config.key();
        EXPECT_EQ(config.dq, DqAccumulation::atomic) << config.key();
        AttentionBackwardConfig twin = config;
        twin.dq_from_registers = false;
        twin.stages = 2;
        EXPECT_TRUE(keys.count(twin.key())) << config.key();
        twin.stages = 3;
        EXPECT_FALSE(attention_backward_resource_use(problem(head_dim, causal), twin, h200)
                         .does_not_fit.empty())
            << twin.key() << " fits: the route would free no stage";
      }
      if (head_dim == 64 && causal) {
        // Both consumer syncs, each order, persistence and swizzle, and the pairs on grids.
        EXPECT_GE(deeper, 40u);
      } else {
        EXPECT_EQ(deeper, 0u) << "d" << head_dim << (causal ? " causal" : "");
      }
    }
  }
}

TEST(AttentionBackwardSpace, CtaPairsNeedTwoKvTilesAHead) {
  const GpuProfile h200 = find_gpu_profile("h200").value();
  AttentionBackwardProblem one_tile = problem(128);
  one_tile.shape.seq_q = 4096;
  one_tile.shape.seq_kv = 128;
  const AttentionBackwardSpace space = build_attention_backward_space(one_tile, h200);
  for (const AttentionBackwardConfig& config : space.configs) {
    EXPECT_FALSE(config.cta_pairs) << config.key();
  }
  std::size_t pruned_pairs = 0;
  for (const Pruned<AttentionBackwardConfig>& pruned : space.pruned) {
    if (!pruned.config.cta_pairs) continue;
    ++pruned_pairs;
    EXPECT_NE(pruned.reason.find("one K/V tile a head"), std::string::npos) << pruned.reason;
  }
  EXPECT_GT(pruned_pairs, 0u);
  // Two tiles: kept.
  one_tile.shape.seq_kv = 129;
  std::size_t kept_pairs = 0;
  for (const AttentionBackwardConfig& config :
       build_attention_backward_space(one_tile, h200).configs) {
    kept_pairs += config.cta_pairs;
  }
  EXPECT_EQ(kept_pairs, pruned_pairs);
}

TEST(AttentionBackwardSource, ConsumerSyncCtaPairsAndDqRouteAreTraitsOfTheWarpSpecializedKernel) {
  AttentionBackwardConfig config;
  config.path = InstructionPath::wgmma;
  config.warps = 12;
  const auto text = [&] { return render_attention_backward_kernel(problem(128), config).text; };
  EXPECT_NE(text().find("/*lagged_dq*/ false, /*cta_pairs*/ false, /*dq_from_registers*/ false>;"),
            std::string::npos);
  EXPECT_EQ(text().find("__cluster_dims__"), std::string::npos);
  config.consumers = ConsumerSync::lagged;
  EXPECT_NE(text().find("/*lagged_dq*/ true, /*cta_pairs*/ false,"), std::string::npos);
  // A pair is a cluster of two CTAs.
  config.cta_pairs = true;
  EXPECT_NE(text().find("/*cta_pairs*/ true,"), std::string::npos);
  EXPECT_NE(text().find("__cluster_dims__(2, 1, 1) __launch_bounds__"), std::string::npos);
  config.dq_from_registers = true;
  EXPECT_NE(text().find("/*dq_from_registers*/ true>;"), std::string::npos);
}

}  // namespace
}  // namespace swr
