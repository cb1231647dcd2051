#include "generator/resource_model.hpp"

#include <gtest/gtest.h>

#include <utility>

namespace swr {
namespace {

AttentionProblem problem_with_head_dim(int head_dim) {
  return {.batch = 8, .heads = 16, .seq_q = 16384, .seq_kv = 16384, .head_dim = head_dim};
}

AttentionConfig tile(int block_m, int block_n, int warps, int stages) {
  AttentionConfig config;
  config.block_m = block_m;
  config.block_n = block_n;
  config.warps = warps;
  config.stages = stages;
  return config;
}

const GpuProfile& gpu(const char* name) {
  static const GpuProfile gb10 = find_gpu_profile("gb10").value();
  static const GpuProfile h200 = find_gpu_profile("h200").value();
  return std::string(name) == "gb10" ? gb10 : h200;
}

TEST(ResourceModel, SharedMemoryFormula) {
  // (128 + 2 * 2 * 64) rows x 128 x 2 B
  EXPECT_EQ(attention_dynamic_shared_bytes(problem_with_head_dim(128), tile(128, 64, 8, 2)), 98304);
  // (64 + 2 * 1 * 64) x 64 x 2
  EXPECT_EQ(attention_dynamic_shared_bytes(problem_with_head_dim(64), tile(64, 64, 4, 1)), 24576);
  // (128 + 2 * 3 * 128) x 128 x 2
  EXPECT_EQ(attention_dynamic_shared_bytes(problem_with_head_dim(128), tile(128, 128, 8, 3)),
            229376);
}

TEST(ResourceModel, RegisterEstimate) {
  // 16 rows per warp: O 16x128/32 = 64, S 16x64/32 = 32, plus 40.
  EXPECT_EQ(estimate_attention_registers(problem_with_head_dim(128), tile(128, 64, 8, 2)), 136);
  // 32 rows per warp: O 32x128/32 = 128, S 32x64/32 = 64, plus 40.
  EXPECT_EQ(estimate_attention_registers(problem_with_head_dim(128), tile(128, 64, 4, 2)), 232);
}

TEST(ResourceModel, H200FitsTwoCtasBySharedMemory) {
  const ResourceUse use =
      attention_resource_use(problem_with_head_dim(128), tile(128, 64, 8, 2), gpu("h200"), 128);
  EXPECT_TRUE(use.does_not_fit.empty()) << use.does_not_fit;
  EXPECT_EQ(use.threads_per_block, 256);
  EXPECT_EQ(use.dynamic_shared_bytes, 98304);
  // 233472 / (98304 + 1024) = 2; 128 registers x 256 threads allow 2 as well.
  EXPECT_EQ(use.blocks_per_sm, 2);
  EXPECT_EQ(use.limited_by, "shared memory");
}

TEST(ResourceModel, EstimatedRegistersLimitOccupancy) {
  // 136 -> 136 x 32 = 4352 registers a warp; 65536 / 4352 = 15 warps: one CTA of 8 warps.
  const ResourceUse use =
      attention_resource_use(problem_with_head_dim(128), tile(128, 64, 8, 2), gpu("h200"));
  EXPECT_TRUE(use.does_not_fit.empty());
  EXPECT_EQ(use.estimated_registers, 136);
  EXPECT_EQ(use.blocks_per_sm, 1);
  EXPECT_EQ(use.limited_by, "registers");
}

TEST(ResourceModel, Gb10Occupancy) {
  // 102400 / (24576 + 1024) = 4; 104 registers: 65536 / 3328 = 19 warps = 4 CTAs of 4 warps.
  const ResourceUse use =
      attention_resource_use(problem_with_head_dim(64), tile(64, 64, 4, 1), gpu("gb10"));
  EXPECT_TRUE(use.does_not_fit.empty());
  EXPECT_EQ(use.blocks_per_sm, 4);
  // Compiled at 64 registers: registers allow 8, threads 12, shared memory still 4.
  EXPECT_EQ(attention_resource_use(problem_with_head_dim(64), tile(64, 64, 4, 1), gpu("gb10"), 64)
                .limited_by,
            "shared memory");
}

TEST(ResourceModel, Gb10RejectsMoreThan99KiBWithTheNumbers) {
  const ResourceUse use =
      attention_resource_use(problem_with_head_dim(128), tile(128, 64, 8, 3), gpu("gb10"));
  EXPECT_EQ(use.dynamic_shared_bytes, 131072);
  EXPECT_EQ(use.does_not_fit, "needs 131072 B of shared memory per CTA, gb10 allows 101376");
  EXPECT_EQ(use.blocks_per_sm, 0);
  // The same tile fits the H200's 227 KiB.
  EXPECT_TRUE(attention_resource_use(problem_with_head_dim(128), tile(128, 64, 8, 3), gpu("h200"))
                  .does_not_fit.empty());
}

TEST(ResourceModel, H200RejectsAboveItsOptIn) {
  AttentionProblem problem = problem_with_head_dim(128);
  // (128 + 2 * 4 * 128) x 256 = 294912 > 232448; stages are checked first.
  EXPECT_EQ(attention_resource_use(problem, tile(128, 128, 8, 4), gpu("h200")).does_not_fit,
            "stages 4 must be 1, 2 or 3");
  // (256 + 2 * 3 * 128) x 256 = 262144
  EXPECT_EQ(attention_resource_use(problem, tile(256, 128, 16, 3), gpu("h200")).does_not_fit,
            "needs 262144 B of shared memory per CTA, h200 allows 232448");
}

TEST(ResourceModel, ShapeRules) {
  const AttentionProblem problem = problem_with_head_dim(64);
  EXPECT_EQ(attention_resource_use(problem, tile(128, 64, 2, 1), gpu("h200")).does_not_fit,
            "rows per warp (block_m 128 / warps 2) must be 16 or 32");
  EXPECT_EQ(attention_resource_use(problem, tile(64, 64, 8, 1), gpu("h200")).does_not_fit,
            "rows per warp (block_m 64 / warps 8) must be 16 or 32");
  EXPECT_EQ(attention_resource_use(problem, tile(128, 64, 4, 1), gpu("h200")).does_not_fit, "");
  EXPECT_EQ(attention_resource_use(problem, tile(64, 40, 4, 1), gpu("h200")).does_not_fit,
            "block_n 40 must be a multiple of 16 up to 128");
  EXPECT_EQ(attention_resource_use(problem, tile(64, 256, 4, 1), gpu("h200")).does_not_fit,
            "block_n 256 must be a multiple of 16 up to 128");
  EXPECT_EQ(attention_resource_use(problem, tile(64, 64, 4, 0), gpu("h200")).does_not_fit,
            "stages 0 must be 1, 2 or 3");
  EXPECT_EQ(attention_resource_use(problem, tile(64, 64, 0, 1), gpu("h200")).does_not_fit,
            "rows per warp (block_m 64 / warps 0) must be 16 or 32");
  EXPECT_EQ(attention_resource_use(problem, tile(2048, 64, 64, 1), gpu("h200")).does_not_fit,
            "needs 2048 threads per CTA, at most 1024");
}

TEST(ResourceModel, RegisterCeiling) {
  // 32 rows per warp, d128, n128: 128 + 128 + 40 = 296 registers.
  const ResourceUse use =
      attention_resource_use(problem_with_head_dim(128), tile(128, 128, 4, 1), gpu("h200"));
  EXPECT_EQ(use.does_not_fit, "needs an estimated 296 registers per thread, at most 255");
  // A compiled count is reported as such.
  EXPECT_EQ(
      attention_resource_use(problem_with_head_dim(128), tile(128, 64, 8, 1), gpu("h200"), 300)
          .does_not_fit,
      "needs 300 registers per thread, at most 255");
}

}  // namespace
}  // namespace swr

namespace swr {
namespace {

AttentionConfig wgmma_tile(int consumer_warpgroups, int block_n, int stages) {
  AttentionConfig config = tile(64 * consumer_warpgroups, block_n,
                                AttentionConfig::wgmma_warps(64 * consumer_warpgroups), stages);
  config.path = InstructionPath::wgmma;
  return config;
}

TEST(ResourceModel, WgmmaSharedMemoryFormula) {
  // (BlockM + 2 Stages BlockN) D 2 + 1024 + 256: the README's 165120 and 214272.
  EXPECT_EQ(attention_dynamic_shared_bytes(problem_with_head_dim(128), wgmma_tile(2, 128, 2)),
            165120);
  EXPECT_EQ(attention_dynamic_shared_bytes(problem_with_head_dim(128), wgmma_tile(2, 176, 2)),
            214272);
}

TEST(ResourceModel, WgmmaPInSharedMemoryAddsEightKibPer64KeysPerConsumerWarpgroup) {
  AttentionConfig two = wgmma_tile(2, 128, 2);
  two.p_in_smem = true;
  EXPECT_EQ(wgmma_p_shared_bytes(two), 2 * 2 * 8192);
  EXPECT_EQ(attention_dynamic_shared_bytes(problem_with_head_dim(128), two), 165120 + 32768);
  // block_n 176 rounds up to 3 chunks of 64 keys (the 128B-swizzled rows are 64 keys wide).
  AttentionConfig three = wgmma_tile(3, 176, 2);
  three.p_in_smem = true;
  EXPECT_EQ(wgmma_p_shared_bytes(three), 3 * 3 * 8192);
  EXPECT_EQ(wgmma_p_shared_bytes(wgmma_tile(3, 176, 2)), 0);
  // D=128, 3 warpgroups, block_n 128, 2 stages: 181504 + 49152 = 230656 fits the 232448 of an
  // H200; the same with 3 stages (+ 2 * 128 * 256) does not.
  AttentionConfig fits = wgmma_tile(3, 128, 2);
  fits.p_in_smem = true;
  EXPECT_EQ(attention_dynamic_shared_bytes(problem_with_head_dim(128), fits), 230656);
  EXPECT_EQ(attention_resource_use(problem_with_head_dim(128), fits, gpu("h200")).does_not_fit, "");
  fits.stages = 3;
  EXPECT_EQ(attention_resource_use(problem_with_head_dim(128), fits, gpu("h200")).does_not_fit,
            "needs 296192 B of shared memory per CTA, h200 allows 232448");
  // Not a knob of the mma_sync kernel, and neither is the planted hang.
  AttentionConfig mma_sync = tile(128, 64, 8, 2);
  mma_sync.p_in_smem = true;
  EXPECT_EQ(attention_resource_use(problem_with_head_dim(128), mma_sync, gpu("h200")).does_not_fit,
            "p_in_smem and planted_hang are knobs of the wgmma path");
  mma_sync.p_in_smem = false;
  mma_sync.planted_hang = true;
  EXPECT_EQ(attention_resource_use(problem_with_head_dim(128), mma_sync, gpu("h200")).does_not_fit,
            "p_in_smem and planted_hang are knobs of the wgmma path");
}

TEST(ResourceModel, WgmmaOneCtaPerSmWithTheEntryCap) {
  const ResourceUse two =
      attention_resource_use(problem_with_head_dim(128), wgmma_tile(2, 128, 2), gpu("h200"));
  EXPECT_EQ(two.does_not_fit, "");
  EXPECT_EQ(two.threads_per_block, 384);
  EXPECT_EQ(two.estimated_registers, 168);
  EXPECT_EQ(two.blocks_per_sm, 1);
  const ResourceUse three =
      attention_resource_use(problem_with_head_dim(64), wgmma_tile(3, 192, 2), gpu("h200"));
  EXPECT_EQ(three.does_not_fit, "");
  EXPECT_EQ(three.threads_per_block, 512);
  EXPECT_EQ(three.estimated_registers, 128);
}

TEST(ResourceModel, WgmmaRules) {
  const AttentionProblem d128 = problem_with_head_dim(128);
  EXPECT_EQ(attention_resource_use(d128, wgmma_tile(2, 128, 2), gpu("gb10")).does_not_fit,
            "wgmma variants need sm_90a (H100/H200); gb10 is sm_121");
  EXPECT_EQ(attention_resource_use(d128, wgmma_tile(3, 160, 2), gpu("h200")).does_not_fit,
            "a consumer thread needs an estimated 176 registers, setmaxnreg gives 160 with 3 "
            "consumer warpgroups");
  // Three consumer warpgroups take turns as two do (forward_kernel_ws.cuh's order barriers).
  AttentionConfig pingpong3 = wgmma_tile(3, 128, 2);
  pingpong3.pingpong = true;
  EXPECT_EQ(attention_resource_use(d128, pingpong3, gpu("h200")).does_not_fit, "");
  AttentionConfig dynamic = wgmma_tile(3, 128, 2);
  dynamic.persistence = Persistence::dynamic;
  EXPECT_EQ(attention_resource_use(d128, dynamic, gpu("h200")).does_not_fit, "");
  AttentionConfig wrong_warps = wgmma_tile(2, 128, 2);
  wrong_warps.warps = 8;
  EXPECT_EQ(attention_resource_use(d128, wrong_warps, gpu("h200")).does_not_fit,
            "warps 8 must be 12 (a producer warpgroup and one consumer warpgroup per 64 rows)");
  EXPECT_EQ(attention_resource_use(d128, wgmma_tile(4, 128, 2), gpu("h200")).does_not_fit,
            "block_m 256 must be 128 or 192 (2 or 3 consumer warpgroups of 64 rows)");
  EXPECT_EQ(attention_resource_use(d128, wgmma_tile(2, 136, 2), gpu("h200")).does_not_fit,
            "block_n 136 must be a multiple of 16 up to 256");
  EXPECT_EQ(attention_resource_use(d128, wgmma_tile(2, 128, 5), gpu("h200")).does_not_fit,
            "stages 5 must be 1 to 4");
  EXPECT_EQ(attention_resource_use(d128, wgmma_tile(2, 192, 3), gpu("h200")).does_not_fit,
            "needs 328960 B of shared memory per CTA, h200 allows 232448");
}

TEST(ResourceModel, WgmmaRegistersCountPWaitingForTheOverlappedPv) {
  // O (D/2) + S (block_n/2) + 32, and P (block_n/4) next to S when overlapped in registers: the
  // rule that separates the spilling variants of the compiled matrix from the others.
  const AttentionProblem d128 = problem_with_head_dim(128);
  AttentionConfig three = wgmma_tile(3, 128, 2);
  EXPECT_EQ(estimate_wgmma_consumer_registers(d128, three), 64 + 64 + 32);
  EXPECT_EQ(attention_resource_use(d128, three, gpu("h200")).does_not_fit, "");
  three.overlap = true;  // ptxas: 544 bytes of spills
  EXPECT_EQ(attention_resource_use(d128, three, gpu("h200")).does_not_fit,
            "a consumer thread needs an estimated 192 registers, setmaxnreg gives 160 with 3 "
            "consumer warpgroups");
  three.p_in_smem = true;  // P goes to shared memory before S(j+1) is issued
  EXPECT_EQ(estimate_wgmma_consumer_registers(d128, three), 160);
  EXPECT_EQ(attention_resource_use(d128, three, gpu("h200")).does_not_fit, "");
  // D=256 (O alone is 128): 2 warpgroups with block_n 80 overlapped, FA3's tile, fit 240 ...
  const AttentionProblem d256 = problem_with_head_dim(256);
  AttentionConfig two = wgmma_tile(2, 80, 2);
  two.overlap = true;
  EXPECT_EQ(estimate_wgmma_consumer_registers(d256, two), 128 + 40 + 20 + 32);
  EXPECT_EQ(attention_resource_use(d256, two, gpu("h200")).does_not_fit, "");
  // ... 3 warpgroups never do.
  EXPECT_EQ(attention_resource_use(d256, wgmma_tile(3, 48, 2), gpu("h200")).does_not_fit,
            "a consumer thread needs an estimated 184 registers, setmaxnreg gives 160 with 3 "
            "consumer warpgroups");
}

TEST(ResourceModel, WgmmaHeadDimsStoreChunksOfTheWidestSwizzleThatDividesThem) {
  const std::pair<int, int> chunk_columns[] = {{32, 32},  {64, 64},  {80, 16},  {96, 32},
                                               {128, 64}, {160, 32}, {192, 64}, {256, 64}};
  for (const auto& [head_dim, columns] : chunk_columns) {
    EXPECT_EQ(wgmma_attention_chunk_columns(head_dim), columns) << head_dim;
  }
}

TEST(ResourceModel, WgmmaSharedMemoryBoundsBlockNAtLargeHeadDims) {
  // Q (128 x D) and 2 stages of K and V (4 x block_n x D), 2 bytes each, + 1280: FA3's 128x80 is
  // the widest step that fits at D=256, and 128x112 at D=192.
  const AttentionProblem d256 = problem_with_head_dim(256);
  EXPECT_EQ(attention_dynamic_shared_bytes(d256, wgmma_tile(2, 80, 2)), 230656);
  EXPECT_EQ(attention_resource_use(d256, wgmma_tile(2, 80, 2), gpu("h200")).does_not_fit, "");
  EXPECT_EQ(attention_resource_use(d256, wgmma_tile(2, 96, 2), gpu("h200")).does_not_fit,
            "needs 263424 B of shared memory per CTA, h200 allows 232448");
  // 3 stages: block_n 48 at most.
  EXPECT_EQ(attention_dynamic_shared_bytes(d256, wgmma_tile(2, 48, 3)), 214272);
  EXPECT_EQ(attention_resource_use(d256, wgmma_tile(2, 64, 3), gpu("h200")).does_not_fit,
            "needs 263424 B of shared memory per CTA, h200 allows 232448");
  const AttentionProblem d192 = problem_with_head_dim(192);
  EXPECT_EQ(attention_dynamic_shared_bytes(d192, wgmma_tile(2, 112, 2)), 222464);
  EXPECT_EQ(attention_resource_use(d192, wgmma_tile(2, 128, 2), gpu("h200")).does_not_fit,
            "needs 247040 B of shared memory per CTA, h200 allows 232448");
  // D=80 and 96 (FA3: 192x144 with P through shared memory): 3 warpgroups and 3 chunks of P.
  AttentionConfig fa3_d96 = wgmma_tile(3, 144, 2);
  fa3_d96.overlap = true;
  fa3_d96.p_in_smem = true;
  EXPECT_EQ(attention_dynamic_shared_bytes(problem_with_head_dim(96), fa3_d96),
            (192 + 4 * 144) * 96 * 2 + 3 * 3 * 8192 + 1280);
  EXPECT_EQ(attention_resource_use(problem_with_head_dim(96), fa3_d96, gpu("h200")).does_not_fit,
            "");
}

}  // namespace
}  // namespace swr
