#include "generator/attention_space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "generator/resource_model.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

constexpr std::size_t kEnumeratedCount = 5 * 3 * 2 * 3 * 3;  // tiles x stages x order x ...
// wgmma (sm_90a targets only): 6 consumer modes x 4 block_n x 2 stages x 2 P forms (registers,
// shared memory) on the default schedule, and on 2 base tiles every schedule (2 orders x 3
// persistences x 3 swizzles x 2 hints) but the default one.
constexpr std::size_t kWgmmaEnumeratedCount = 6 * 4 * 2 * 2 + 2 * (2 * 3 * 3 * 2 - 1);

GpuProfile profile(const char* name) {
  return find_gpu_profile(name).value();
}

AttentionProblem big_problem(int head_dim = 128) {
  return {.batch = 4, .heads = 8, .seq_q = 16384, .seq_kv = 16384, .head_dim = head_dim};
}

// The mma_sync variants (the tests written before the wgmma path keep their meaning on them).
std::vector<AttentionConfig> mma_sync_only(std::vector<AttentionConfig> configs) {
  std::erase_if(configs, [](const AttentionConfig& config) { return config.is_wgmma(); });
  return configs;
}

AttentionSpace mma_sync_only(AttentionSpace space) {
  space.configs = mma_sync_only(std::move(space.configs));
  std::erase_if(space.pruned, [](const PrunedConfig& pruned) { return pruned.config.is_wgmma(); });
  return space;
}

std::size_t count_reason(const AttentionSpace& space, const std::string& fragment) {
  std::size_t count = 0;
  for (const PrunedConfig& pruned : space.pruned) {
    count += pruned.reason.find(fragment) != std::string::npos;
  }
  return count;
}

TEST(AttentionSpace, HeadGroupFittingL2) {
  // K + V of one head: 2 x 16384 x 128 x 2 B = 8 MiB.
  const AttentionProblem problem = big_problem();
  // H200: half of 60 MiB is usable for shared data -> 30 / 8 = 3.
  EXPECT_EQ(head_group_fitting_l2(problem, profile("h200")), 3);
  // H100: 25 / 8 = 3; GB10 (one partition): 24 / 8 = 3.
  EXPECT_EQ(head_group_fitting_l2(problem, profile("h100")), 3);
  EXPECT_EQ(head_group_fitting_l2(problem, profile("gb10")), 3);
  // D=64, S=4096: 1 MiB a head -> H200 30, GB10 24, both below the 32 pairs.
  AttentionProblem small = {.batch = 4, .heads = 8, .seq_q = 4096, .seq_kv = 4096, .head_dim = 64};
  EXPECT_EQ(head_group_fitting_l2(small, profile("h200")), 30);
  EXPECT_EQ(head_group_fitting_l2(small, profile("gb10")), 24);
  // Clamped to batch*heads, and at least 1.
  small.seq_kv = 1024;
  EXPECT_EQ(head_group_fitting_l2(small, profile("h200")), 32);
  AttentionProblem huge = {
      .batch = 8, .heads = 1, .seq_q = 131072, .seq_kv = 131072, .head_dim = 128};
  EXPECT_EQ(head_group_fitting_l2(huge, profile("h200")), 1);
}

TEST(AttentionSpace, EnumerationCoversEveryKnobInAStableOrder) {
  const auto configs = mma_sync_only(enumerate_attention_configs(big_problem(), profile("h200")));
  ASSERT_EQ(configs.size(), kEnumeratedCount);
  EXPECT_EQ(configs.front().key(), "m64n64w4s1-cyclic-grid-head_major");
  EXPECT_EQ(configs[2].key(), "m64n64w4s1-cyclic-grid-groups3");
  EXPECT_EQ(configs.back().key(), "m64n128w4s3-sawtooth-dynamic-groups3");
  EXPECT_EQ(configs, mma_sync_only(enumerate_attention_configs(big_problem(), profile("h200"))));
}

TEST(AttentionSpace, BigProblemOnH200KeepsEverything) {
  // Every tile and stage count fits 227 KiB at D=128, the largest (128,128,8,s3) at 229376 B.
  const AttentionSpace space = mma_sync_only(build_attention_space(big_problem(), profile("h200")));
  EXPECT_EQ(space.configs.size(), kEnumeratedCount);
  EXPECT_TRUE(space.pruned.empty());
  std::set<int> block_m, block_n, warps, stages, head_groups;
  std::set<KvOrder> orders;
  std::set<Persistence> persistences;
  std::set<TileSwizzle> swizzles;
  for (const AttentionConfig& config : space.configs) {
    block_m.insert(config.block_m);
    block_n.insert(config.block_n);
    warps.insert(config.warps);
    stages.insert(config.stages);
    orders.insert(config.order);
    persistences.insert(config.persistence);
    swizzles.insert(config.swizzle);
    if (config.swizzle == TileSwizzle::head_groups) head_groups.insert(config.head_group);
  }
  EXPECT_EQ(block_m, (std::set<int>{64, 128}));
  EXPECT_EQ(block_n, (std::set<int>{64, 128}));
  EXPECT_EQ(warps, (std::set<int>{4, 8}));
  EXPECT_EQ(stages, (std::set<int>{1, 2, 3}));
  EXPECT_EQ(orders.size(), 2u);
  EXPECT_EQ(persistences.size(), 3u);
  EXPECT_EQ(swizzles.size(), 3u);
  EXPECT_EQ(head_groups, (std::set<int>{3}));
}

TEST(AttentionSpace, Gb10DropsWhatExceeds99KiB) {
  // At D=128 a CTA may use 396 rows of 256 B: (64,64) s1-s2, (128,64,x) s1-s2, (128,128) s1,
  // (64,128) s1 = 8 tile/stage pairs of 15, each with 2 x 3 x 3 schedules.
  const GpuProfile gb10 = profile("gb10");
  const AttentionSpace space = build_attention_space(big_problem(), gb10);
  EXPECT_EQ(space.configs.size(), 8u * 18);
  EXPECT_EQ(space.pruned.size(), 7u * 18);
  EXPECT_EQ(count_reason(space, "B of shared memory per CTA, gb10 allows 101376"), 7u * 18);
  for (const AttentionConfig& config : space.configs) {
    EXPECT_TRUE(attention_resource_use(big_problem(), config, gb10).does_not_fit.empty());
  }
  for (const PrunedConfig& pruned : space.pruned) {
    EXPECT_EQ(pruned.reason,
              attention_resource_use(big_problem(), pruned.config, gb10).does_not_fit);
  }
}

TEST(AttentionSpace, OneHeadKeepsOnlyHeadMajor) {
  const AttentionProblem problem = {
      .batch = 1, .heads = 1, .seq_q = 16384, .seq_kv = 16384, .head_dim = 64};
  const AttentionSpace space = mma_sync_only(build_attention_space(problem, profile("h200")));
  EXPECT_EQ(space.configs.size(), kEnumeratedCount / 3);
  for (const AttentionConfig& config : space.configs) {
    EXPECT_EQ(config.swizzle, TileSwizzle::head_major);
  }
  EXPECT_EQ(count_reason(space, "batch*heads is 1: every swizzle is the same as head_major"),
            kEnumeratedCount * 2 / 3);
}

TEST(AttentionSpace, DegenerateHeadGroupsArePruned) {
  // One head's K/V (64 MiB) is larger than the usable L2: a group of 1 is head_major.
  const AttentionProblem huge = {
      .batch = 8, .heads = 1, .seq_q = 131072, .seq_kv = 131072, .head_dim = 128};
  const AttentionSpace space = mma_sync_only(build_attention_space(huge, profile("h200")));
  for (const AttentionConfig& config : space.configs) {
    EXPECT_NE(config.swizzle, TileSwizzle::head_groups);
  }
  EXPECT_EQ(count_reason(space, "a head group of 1"), kEnumeratedCount / 3);
  // All 32 pairs fit at once: a single group is heads_interleaved.
  const AttentionProblem short_kv = {
      .batch = 4, .heads = 8, .seq_q = 4096, .seq_kv = 1024, .head_dim = 64};
  const AttentionSpace short_space =
      mma_sync_only(build_attention_space(short_kv, profile("h200")));
  EXPECT_EQ(count_reason(short_space, "covers all 32 (batch, head) pairs"), kEnumeratedCount / 3);
}

TEST(AttentionSpace, TilesLargerThanTheSequenceArePruned) {
  const AttentionProblem problem = {
      .batch = 2, .heads = 4, .seq_q = 20, .seq_kv = 4096, .head_dim = 64};
  const AttentionSpace space = mma_sync_only(build_attention_space(problem, profile("h200")));
  for (const AttentionConfig& config : space.configs) EXPECT_EQ(config.block_m, 64);
  // Three of the five tiles have block_m 128.
  EXPECT_EQ(count_reason(space, "block_m 128 is larger than twice seq_q 20"),
            kEnumeratedCount * 3 / 5);
  // seq_q 33 -> 66 rounds up to 128: the 128-row tiles stay.
  AttentionProblem longer = problem;
  longer.seq_q = 33;
  EXPECT_EQ(count_reason(mma_sync_only(build_attention_space(longer, profile("h200"))), "block_m"),
            0u);
}

TEST(AttentionSpace, EveryDropHasAReasonAndNothingIsLost) {
  for (const GpuProfile& gpu : builtin_gpu_profiles()) {
    for (int seq : {17, 1000, 131072}) {
      const AttentionProblem problem = {
          .batch = 2, .heads = 3, .seq_q = seq, .seq_kv = seq, .head_dim = 128};
      const AttentionSpace space = build_attention_space(problem, gpu);
      EXPECT_EQ(
          space.configs.size() + space.pruned.size(),
          kEnumeratedCount + (supports(gpu, InstructionPath::wgmma) ? kWgmmaEnumeratedCount : 0));
      for (const PrunedConfig& pruned : space.pruned) EXPECT_FALSE(pruned.reason.empty());
      EXPECT_FALSE(space.configs.empty()) << gpu.name << " seq " << seq;
    }
  }
}

TEST(AttentionSpace, WgmmaVariantsOnlyForSm90a) {
  for (const GpuProfile& gpu : builtin_gpu_profiles()) {
    std::size_t wgmma = 0;
    for (const AttentionConfig& config : enumerate_attention_configs(big_problem(), gpu)) {
      wgmma += config.is_wgmma();
    }
    EXPECT_EQ(wgmma, supports(gpu, InstructionPath::wgmma) ? kWgmmaEnumeratedCount : 0u)
        << gpu.name;
  }
  EXPECT_TRUE(supports(profile("h100"), InstructionPath::wgmma));
  EXPECT_FALSE(supports(profile("gb10"), InstructionPath::wgmma));
}

TEST(AttentionSpace, WgmmaSpaceCoversTheKernelsKnobsAndNothingItLacks) {
  std::set<std::string> seen;
  for (int head_dim : {64, 128}) {
    const AttentionSpace space = build_attention_space(big_problem(head_dim), profile("h200"));
    for (const AttentionConfig& c : space.configs) {
      if (!c.is_wgmma()) continue;
      // Three overlapped warpgroups always take turns (attention_space.cpp).
      if (c.consumer_warpgroups() == 3 && c.overlap) EXPECT_TRUE(c.pingpong) << c.key();
      EXPECT_EQ(c.warps, 4 * (1 + c.consumer_warpgroups())) << c.key();
      EXPECT_LE(attention_dynamic_shared_bytes(big_problem(head_dim), c), 232448) << c.key();
      EXPECT_LE(estimate_wgmma_consumer_registers(big_problem(head_dim), c),
                wgmma_consumer_registers(c))
          << c.key();
      seen.insert("wg" + std::to_string(c.consumer_warpgroups()));
      seen.insert("n" + std::to_string(c.block_n));
      seen.insert("s" + std::to_string(c.stages));
      seen.insert(c.overlap ? "ov" : "no-ov");
      seen.insert(c.pingpong ? "pp" : "no-pp");
      if (c.pingpong) seen.insert("pp-wg" + std::to_string(c.consumer_warpgroups()));
      seen.insert(std::string(to_string(c.kv_cache_hint)));
      seen.insert(std::string(to_string(c.order)));
      seen.insert(std::string(to_string(c.persistence)));
      seen.insert(std::string(to_string(c.swizzle)));
      seen.insert(c.p_in_smem ? "psm" : "no-psm");
    }
  }
  const std::set<std::string> every_value = {
      "wg2",         "wg3",    "n128",    "n160",   "n176",     "n192",       "s2",
      "s3",          "ov",     "no-ov",   "pp",     "no-pp",    "none",       "evict_last",
      "grid",        "static", "dynamic", "cyclic", "sawtooth", "head_major", "heads_interleaved",
      "head_groups", "psm",    "no-psm",  "pp-wg2", "pp-wg3"};
  EXPECT_EQ(seen, every_value);
}

TEST(AttentionSpace, WgmmaPrunesByRegistersAndSharedMemoryAtD128) {
  // D=128: 3 consumer warpgroups hold O (64) + S (block_n / 2) + 32 in 160 registers only for
  // block_n 128, and overlapped only with P in shared memory (in registers P(j-1), 32 more, waits
  // next to S(j)): 2 modes x 3 block_n x 2 stages x 2 P forms + 4 block_n x 2 stages (ov+pp, RS)
  // + 3 x 2 (ov+pp, P in shared memory) refused; 3 stages fit 227 KiB only with block_n 128 and 2
  // warpgroups, and P in shared memory only block_n 128 with 2 stages.
  const AttentionSpace space = build_attention_space(big_problem(128), profile("h200"));
  std::size_t kept = 0, kept_psm = 0;
  for (const AttentionConfig& c : space.configs) {
    kept += c.is_wgmma();
    kept_psm += c.is_wgmma() && c.p_in_smem;
    if (c.p_in_smem) EXPECT_EQ(c.block_n, 128) << c.key();
    if (c.p_in_smem) EXPECT_EQ(c.stages, 2) << c.key();
  }
  EXPECT_EQ(kept, kWgmmaEnumeratedCount - 69);
  // 4 modes with 2 warpgroups and 2 with 3; the latter by 1792 B: (192 + 2 * 2 * 128) * 256
  // + 3 * 8192 + 1024 + 256 = 230656 of 232448.
  EXPECT_EQ(kept_psm, 6u);
  EXPECT_EQ(count_reason(space, "setmaxnreg gives 160 with 3 consumer warpgroups"), 26u);
  // (192 + 2 * 3 * 128) * 256 + 1024 + 256 (3 warpgroups, plain), and P's 2 x 3 x 8192 on
  // (128 + 2 * 2 * 160) * 256 + 1280 (4 modes): the register form of the latter fits.
  EXPECT_EQ(count_reason(space, "needs 247040 B of shared memory per CTA"), 5u);
  AttentionConfig twin = *AttentionConfig::from_key("wgmma-m128n160s2-cyclic-grid-head_major");
  EXPECT_TRUE(attention_resource_use(big_problem(128), twin, profile("h200")).does_not_fit.empty());
  twin.p_in_smem = true;
  EXPECT_EQ(wgmma_p_shared_bytes(twin), 2 * 3 * 8192);
  EXPECT_EQ(attention_dynamic_shared_bytes(big_problem(128), twin), 247040);

  // D=64: P in shared memory on 3 warpgroups, block_n 176 or 192, 3 stages outgrows it:
  // (192 + 2 * 3 * 176) * 128 + 3 * 3 * 8192 + 1280 = 234752 and 247040 for block_n 192; and 3
  // warpgroups overlapped with P in registers hold 32 + S + S/2 + 32 only up to block_n 128.
  const AttentionSpace d64 = build_attention_space(big_problem(64), profile("h200"));
  std::size_t d64_pruned = 0;
  for (const PrunedConfig& pruned : d64.pruned) {
    if (!pruned.config.is_wgmma()) continue;
    ++d64_pruned;
    const AttentionConfig& c = pruned.config;
    const bool shared = c.p_in_smem && c.stages == 3 && c.block_n >= 176;
    const bool registers = c.overlap && !c.p_in_smem && c.block_n >= 160;
    EXPECT_TRUE(c.consumer_warpgroups() == 3 && (shared || registers))
        << c.key() << ": " << pruned.reason;
  }
  EXPECT_EQ(d64_pruned, 10u);
  EXPECT_EQ(count_reason(d64, "needs 234752 B of shared memory per CTA"), 2u);
}

TEST(AttentionSpace, WgmmaDynamicPersistenceAndPInSmemKeepTheirTwins) {
  // Each new knob value has its twin (the same variant with the knob at its old value) in the
  // space, so the tuner measures what the knob changes.
  const AttentionSpace space = build_attention_space(big_problem(128), profile("h200"));
  auto kept = [&](const AttentionConfig& c) {
    return std::find(space.configs.begin(), space.configs.end(), c) != space.configs.end();
  };
  std::size_t dynamic = 0, psm = 0;
  for (const AttentionConfig& c : space.configs) {
    if (!c.is_wgmma()) continue;
    if (c.persistence == Persistence::dynamic) {
      ++dynamic;
      AttentionConfig twin = c;
      twin.persistence = Persistence::static_loop;
      EXPECT_TRUE(kept(twin)) << c.key();
    }
    if (c.p_in_smem) {
      ++psm;
      AttentionConfig twin = c;
      twin.p_in_smem = false;
      // Overlapped on 3 warpgroups, P in registers waits next to S: no twin in 160 registers.
      if (estimate_wgmma_consumer_registers(big_problem(128), twin) > wgmma_consumer_registers(c))
        continue;
      EXPECT_TRUE(kept(twin)) << c.key();
    }
  }
  EXPECT_EQ(dynamic, 2u * 2 * 3 * 2);  // base modes x orders x swizzles x hints
  EXPECT_EQ(psm, 6u);
}

TEST(AttentionSpace, InvalidProblemIsAUsageError) {
  AttentionProblem problem = big_problem();
  problem.head_dim = 48;
  EXPECT_THROW(mma_sync_only(build_attention_space(problem, profile("h200"))), UsageError);
  problem.head_dim = 128;
  problem.kv_heads = 3;  // does not divide 8
  EXPECT_THROW(build_attention_space(problem, profile("h200")), UsageError);
}

// Every head dim has mma_sync variants on every GPU; what is dropped says why (the resource
// model's reason), and what is kept fits: shared memory (rows padded for head dims that are not a
// multiple of 64) and the estimated registers of the O and S accumulators.
TEST(AttentionSpace, EveryHeadDimOnEveryGpu) {
  for (const char* name : {"gb10", "h100", "h200"}) {
    const GpuProfile gpu = profile(name);
    for (int head_dim : kSupportedHeadDims) {
      const AttentionProblem problem = big_problem(head_dim);
      const AttentionSpace space = build_attention_space(problem, gpu);
      const AttentionSpace mma_sync = mma_sync_only(space);
      EXPECT_FALSE(mma_sync.configs.empty()) << name << " d" << head_dim;
      EXPECT_EQ(mma_sync.configs.size() + mma_sync.pruned.size(),
                (head_dim >= 160 ? 7u : 5u) * 3 * 2 * 3 * 3)
          << name << " d" << head_dim;
      for (const AttentionConfig& config : mma_sync.configs) {
        const ResourceUse use = attention_resource_use(problem, config, gpu);
        EXPECT_TRUE(use.does_not_fit.empty()) << config.key();
        EXPECT_LE(use.dynamic_shared_bytes, gpu.shared_memory_per_block_optin) << config.key();
        EXPECT_LE(use.estimated_registers, kMaxRegistersPerThread) << config.key();
      }
      for (const PrunedConfig& pruned : space.pruned) EXPECT_FALSE(pruned.reason.empty());
      // The wgmma kernel takes every head dim on sm_90a (WgmmaEveryHeadDim below), none on gb10.
      if (std::string(name) == "gb10") {
        EXPECT_EQ(space.configs.size(), mma_sync.configs.size()) << name << " d" << head_dim;
      } else {
        EXPECT_GT(space.configs.size(), mma_sync.configs.size()) << name << " d" << head_dim;
      }
    }
  }
  // Rows of a head dim that is not a multiple of 64 are padded by one 16-byte chunk.
  EXPECT_EQ(mma_sync_tile_row_bytes(64), 128);
  EXPECT_EQ(mma_sync_tile_row_bytes(256), 512);
  EXPECT_EQ(mma_sync_tile_row_bytes(80), 176);
  EXPECT_EQ(mma_sync_tile_row_bytes(32), 80);
  AttentionConfig tile;  // m128n64w8s2
  EXPECT_EQ(attention_dynamic_shared_bytes(big_problem(96), tile), (128 + 2 * 2 * 64) * 208);
}

// GB10's 99 KiB at D=256 (512-byte rows, 198 of them): only 64-row Q tiles with one stage of 64
// K/V rows or up to two of 32, and 128-row ones with one stage of 32.
TEST(AttentionSpace, Gb10HeadDim256KeepsTheShortTiles) {
  const AttentionSpace space = build_attention_space(big_problem(256), profile("gb10"));
  std::set<std::string> tiles;
  for (const AttentionConfig& config : space.configs) {
    tiles.insert("m" + std::to_string(config.block_m) + "n" + std::to_string(config.block_n) + "w" +
                 std::to_string(config.warps) + "s" + std::to_string(config.stages));
  }
  EXPECT_EQ(tiles,
            (std::set<std::string>{"m64n64w4s1", "m64n32w4s1", "m64n32w4s2", "m128n32w8s1"}));
  EXPECT_GT(count_reason(space, "B of shared memory per CTA, gb10 allows 101376"), 0u);
  // Where shared memory allows them, 32 rows a warp of D=256 need more registers than a thread
  // has: 256 x 32 / 32 for O + 64 for S + bookkeeping.
  const AttentionSpace h200 = build_attention_space(big_problem(256), profile("h200"));
  EXPECT_GT(count_reason(h200, "an estimated 360 registers per thread, at most 255"), 0u);
}

// GQA: the head groups the space offers hold whole K/V heads' query heads (a multiple of the
// ratio), sized by the K/V heads that fit the usable L2, at least one; both paths take grouped
// heads and a bottom-right shift (the wgmma kernel since issue 16's wgmma part), nothing pruned
// for either.
TEST(AttentionSpace, GroupedQueryHeadsAndAlignment) {
  AttentionProblem llama = {
      .batch = 1, .heads = 32, .seq_q = 131072, .seq_kv = 131072, .head_dim = 128, .causal = true};
  llama.kv_heads = 8;
  // One K/V head is 64 MiB, more than the usable L2: the group is the 4 query heads of one.
  EXPECT_EQ(head_group_fitting_l2(llama, profile("h200")), 4);
  llama.seq_q = llama.seq_kv = 8192;  // 4 MiB a K/V head: 7 fit H200's usable 30 MiB
  EXPECT_EQ(head_group_fitting_l2(llama, profile("h200")), 28);
  EXPECT_EQ(head_group_fitting_l2(llama, profile("gb10")), 24);  // 6 of 24 MiB
  llama.kv_heads = 1;                                            // MQA: one K/V head for all 32
  EXPECT_EQ(head_group_fitting_l2(llama, profile("h200")), 32);

  llama.kv_heads = 8;
  const AttentionSpace space = build_attention_space(llama, profile("h200"));
  std::size_t wgmma = 0;
  for (const AttentionConfig& config : space.configs) {
    wgmma += config.is_wgmma() ? 1 : 0;
    if (config.swizzle == TileSwizzle::head_groups) EXPECT_EQ(config.head_group % 4, 0);
  }
  EXPECT_GT(wgmma, 0u);
  EXPECT_EQ(count_reason(space, "grouped K/V heads"), 0u);

  AttentionProblem prefill = big_problem(128);
  prefill.causal = true;
  prefill.seq_q = 1024;
  prefill.causal_align = CausalAlignment::bottom_right;
  const AttentionSpace prefill_space = build_attention_space(prefill, profile("h100"));
  EXPECT_EQ(count_reason(prefill_space, "bottom-right"), 0u);
  EXPECT_FALSE(mma_sync_only(prefill_space).configs.empty());
  EXPECT_GT(prefill_space.configs.size(), mma_sync_only(prefill_space).configs.size());
}

}  // namespace
}  // namespace swr

namespace swr {
namespace {

// Every head dim has wgmma variants on h100 and h200 (none on gb10): the block_n of its class
// (FA3's tile and its neighbours), each kept one within 227 KiB and the consumers' registers, every
// pruned one with its reason; D=256 keeps only 2 consumer warpgroups and block_n up to 80.
TEST(AttentionSpace, WgmmaEveryHeadDim) {
  const std::map<int, std::set<int>> block_ns = {
      {32, {128, 160, 176, 192}}, {64, {128, 160, 176, 192}},  {80, {112, 128, 144, 160}},
      {96, {112, 128, 144, 160}}, {128, {128, 160, 176, 192}}, {160, {64, 96, 112, 128}},
      {192, {64, 96, 112, 128}},  {256, {48, 64, 80}}};
  for (const char* name : {"h100", "h200", "gb10"}) {
    const GpuProfile gpu = profile(name);
    for (const auto& [head_dim, expected_block_ns] : block_ns) {
      const AttentionProblem problem = big_problem(head_dim);
      const AttentionSpace space = build_attention_space(problem, gpu);
      std::size_t enumerated = 0, kept = 0;
      std::set<int> seen_block_ns;
      for (const AttentionConfig& c : space.configs) {
        if (!c.is_wgmma()) continue;
        ++kept;
        seen_block_ns.insert(c.block_n);
        EXPECT_LE(attention_dynamic_shared_bytes(problem, c), gpu.shared_memory_per_block_optin)
            << c.key();
        EXPECT_LE(estimate_wgmma_consumer_registers(problem, c), wgmma_consumer_registers(c))
            << c.key();
        if (head_dim == 256) EXPECT_EQ(c.consumer_warpgroups(), 2) << c.key();
      }
      for (const PrunedConfig& pruned : space.pruned) {
        if (pruned.config.is_wgmma()) seen_block_ns.insert(pruned.config.block_n);
        enumerated += pruned.config.is_wgmma();
        EXPECT_FALSE(pruned.reason.empty());
      }
      enumerated += kept;
      if (!supports(gpu, InstructionPath::wgmma)) {
        EXPECT_EQ(enumerated, 0u) << name;
        continue;
      }
      EXPECT_EQ(enumerated, head_dim == 256 ? 6 * 3 * 2 * 2 + 70u : kWgmmaEnumeratedCount)
          << name << " d" << head_dim;
      EXPECT_GE(kept, 70u) << name << " d" << head_dim;  // the schedule knobs on a base tile
      EXPECT_EQ(seen_block_ns, expected_block_ns) << name << " d" << head_dim;
    }
  }
}

// GQA, MQA and a bottom-right causal mask over a KV cache are the kernel's launch arguments: the
// same wgmma variants as for multi-head attention, their head groups in whole K/V heads.
TEST(AttentionSpace, WgmmaTakesGroupedHeadsAndEitherAlignment) {
  AttentionProblem mha = {
      .batch = 1, .heads = 32, .seq_q = 8192, .seq_kv = 8192, .head_dim = 128, .causal = true};
  auto wgmma_keys = [](const AttentionSpace& space) {
    std::set<std::string> keys;
    for (const AttentionConfig& c : space.configs) {
      if (c.is_wgmma() && c.swizzle != TileSwizzle::head_groups) keys.insert(c.key());
    }
    return keys;
  };
  const std::set<std::string> mha_keys = wgmma_keys(build_attention_space(mha, profile("h200")));
  EXPECT_GE(mha_keys.size(), 70u);
  for (int kv_heads : {8, 1}) {
    AttentionProblem gqa = mha;
    gqa.kv_heads = kv_heads;
    const AttentionSpace space = build_attention_space(gqa, profile("h200"));
    EXPECT_EQ(wgmma_keys(space), mha_keys) << kv_heads;
    for (const AttentionConfig& c : space.configs) {
      if (c.is_wgmma() && c.swizzle == TileSwizzle::head_groups) {
        EXPECT_EQ(c.head_group % (32 / kv_heads), 0) << c.key();
      }
    }
  }
  AttentionProblem prefill = mha;
  prefill.seq_q = 1000;
  prefill.causal_align = CausalAlignment::bottom_right;
  EXPECT_EQ(wgmma_keys(build_attention_space(prefill, profile("h100"))), mha_keys);
}

}  // namespace
}  // namespace swr
