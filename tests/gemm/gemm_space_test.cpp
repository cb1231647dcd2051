// The GEMM space and resource model: what is kept is runnable and distinct, what is pruned says
// why, and the shared-memory arithmetic matches the template's.
#include "generator/gemm_space.hpp"

#include <gtest/gtest.h>

#include <set>

#include "generator/gemm_kernel_source.hpp"
#include "generator/gemm_swizzle.hpp"
#include "generator/resource_model.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

GpuProfile profile(const char* name) {
  return *find_gpu_profile(name);
}

TEST(GemmResourceModel, SharedMemoryIsStagesOfATileAndBTile) {
  GemmConfig config;
  config.block_m = 128;
  config.block_n = 256;
  config.block_k = 32;
  config.stages = 4;
  EXPECT_EQ(gemm_dynamic_shared_bytes(config), 4 * (128 * 32 + 32 * 256) * 2);
  config.block_k = 64;
  const ResourceUse use = gemm_resource_use(config, profile("h200"));
  EXPECT_EQ(use.dynamic_shared_bytes, 4 * (128 * 64 + 64 * 256) * 2);
  EXPECT_TRUE(use.does_not_fit.empty()) << use.does_not_fit;
  EXPECT_EQ(use.blocks_per_sm, 1);
  // 192 KiB does not fit GB10's 99 KiB.
  EXPECT_NE(gemm_resource_use(config, profile("gb10")).does_not_fit.find("shared memory"),
            std::string::npos);
}

TEST(GemmResourceModel, ShapeRulesMirrorTheTemplate) {
  GemmConfig config;
  config.block_k = 16;
  EXPECT_NE(gemm_shape_problem(config).find("block_k"), std::string::npos);
  config = GemmConfig{};
  config.stages = 5;
  EXPECT_NE(gemm_shape_problem(config).find("stages"), std::string::npos);
  config = GemmConfig{};
  config.warps_n = 8;  // 16-column warp tiles
  EXPECT_NE(gemm_shape_problem(config).find("warp tile"), std::string::npos);
  config = GemmConfig{};
  config.warps_m = 3;
  EXPECT_NE(gemm_shape_problem(config).find("evenly"), std::string::npos);
  EXPECT_TRUE(gemm_shape_problem(GemmConfig{}).empty());
}

TEST(GemmSpace, KeptConfigsAreRunnableAndPrunedOnesSayWhy) {
  for (const char* gpu : {"h100", "h200", "gb10"}) {
    const GemmSpace space = build_gemm_space({4096, 4096, 4096, DataType::f16}, profile(gpu));
    EXPECT_FALSE(space.configs.empty()) << gpu;
    for (const GemmConfig& config : space.configs) {
      EXPECT_TRUE(gemm_resource_use(config, profile(gpu)).does_not_fit.empty()) << config.key();
    }
    for (const PrunedGemmConfig& pruned : space.pruned) EXPECT_FALSE(pruned.reason.empty());
    EXPECT_EQ(space.configs.size() + space.pruned.size(), enumerate_gemm_configs().size());
  }
}

TEST(GemmSpace, OneVariantPerBinaryAndTileOrder) {
  const GemmProblem problem{4096, 4096, 4096, DataType::f16};
  const GemmSpace space = build_gemm_space(problem, profile("h200"));
  std::set<std::string> seen;
  for (const GemmConfig& config : space.configs) {
    const std::string order =
        gemm_tile_order_name(gemm_raster_grid(problem, config), swizzle_launch(config));
    EXPECT_TRUE(seen.insert(gemm_binary_name(problem, config) + " " + order).second)
        << config.key();
  }
  // 4096 / 128 = 32 tile columns: stride 4096 is one band over all of them, i.e. row-major.
  bool pruned_as_plain = false;
  for (const PrunedGemmConfig& pruned : space.pruned) {
    if (pruned.config.key() == "m128n128k32w2x4s3-grid-swzn4096") {
      pruned_as_plain = pruned.reason.find("row-major") != std::string::npos;
    }
  }
  EXPECT_TRUE(pruned_as_plain);
}

TEST(GemmSpace, SweepKeepsEveryStride) {
  const GemmProblem problem{512, 512, 512, DataType::f16};
  GemmSpaceOptions options;
  options.keep_equivalent_orders = true;
  const GemmSpace space = build_gemm_space(problem, profile("h200"), options);
  std::set<int> strides;
  for (const GemmConfig& config : space.configs)
    if (config.swizzle_axis == SwizzleAxis::n) strides.insert(config.swizzle_stride);
  EXPECT_EQ(strides.size(), std::size(kPaperSwizzleStrides));
}

TEST(GemmSpace, StaticPersistenceIsPrunedWhenOneWaveHoldsEveryTile) {
  const GemmSpace space = build_gemm_space({512, 512, 512, DataType::f16}, profile("h200"));
  for (const GemmConfig& config : space.configs)
    if (config.path == InstructionPath::mma_sync)
      EXPECT_EQ(config.persistence, GemmPersistence::grid) << config.key();
}

TEST(GemmSpace, DynamicWgmmaIsPrunedWhenOneWaveHoldsEveryTile) {
  // 512 x 512 with 128 x 128 tiles: 16 tiles on 132 SMs; each CTA takes one, nothing to claim.
  const GemmSpace space = build_gemm_space({512, 512, 512, DataType::f16}, profile("h200"));
  bool wgmma_kept = false;
  for (const GemmConfig& config : space.configs) {
    if (config.path != InstructionPath::wgmma) continue;
    wgmma_kept = true;
    EXPECT_NE(config.persistence, GemmPersistence::dynamic_loop) << config.key();
  }
  EXPECT_TRUE(wgmma_kept);
}

TEST(GemmSpace, WgmmaVariantsOnlyWhereTheTargetIsSm90a) {
  const GemmProblem problem{4096, 4096, 4096, DataType::bf16};
  for (const char* gpu : {"h100", "h200"}) {
    std::set<std::string> binaries;
    for (const GemmConfig& config : build_gemm_space(problem, profile(gpu)).configs)
      if (config.path == InstructionPath::wgmma) binaries.insert(gemm_binary_name(problem, config));
    // Six tile/mode pairs x (static, dynamic, static 2x1, static 1x2, static 2x2), and the four
    // cooperative ones x (stream-K, stream-K 2x1, stream-K 2x2): 4096^3 leaves a partial last
    // wave for each of them; and the six widths that are not multiples of 64, static 2x2 only.
    // (No transposed ones: 4096 rows are whole 128-row tiles.)
    EXPECT_EQ(binaries.size(), 48u) << gpu;
  }
  const GemmSpace gb10 = build_gemm_space(problem, profile("gb10"));
  for (const GemmConfig& config : gb10.configs)
    EXPECT_EQ(config.path, InstructionPath::mma_sync) << config.key();
  for (const PrunedGemmConfig& pruned : gb10.pruned)
    if (pruned.config.path == InstructionPath::wgmma)
      EXPECT_EQ(pruned.reason, "wgmma variants need sm_90a (H100/H200); gb10 is sm_121");
  GemmConfig wgmma = gb10.pruned.back().config;
  ASSERT_EQ(wgmma.path, InstructionPath::wgmma) << "wgmma binaries come last in each swizzle";
  EXPECT_NE(gemm_resource_use(wgmma, profile("gb10")).does_not_fit.find("sm_121"),
            std::string::npos);
}

TEST(GemmSpace, WidthsThatAreNotMultiplesOf64AreCooperative128RowTilesIn2x2Clusters) {
  std::set<int> widths;
  for (const GemmConfig& config : enumerate_gemm_configs()) {
    if (config.path != InstructionPath::wgmma || config.block_n % 64 == 0 || config.transposed)
      continue;
    widths.insert(config.block_n);
    EXPECT_EQ(config.block_m, 128) << config.key();
    EXPECT_EQ(config.consumer_mode, GemmConsumerMode::cooperative) << config.key();
    EXPECT_EQ(config.persistence, GemmPersistence::static_loop) << config.key();
    EXPECT_EQ(config.cluster_size(), 4) << config.key();
    EXPECT_TRUE(gemm_resource_use(config, profile("h200")).does_not_fit.empty()) << config.key();
  }
  EXPECT_EQ(widths, (std::set<int>{144, 160, 176, 208, 224, 240}));
  // Why they are there: 3000x7000 in 2x2 clusters of 128x176 tiles is 12 x 20 = 240 cluster tiles,
  // 8 whole waves of the H200's 30 co-resident clusters (128x192: 228, 7.6 waves).
  GemmConfig config;
  config.path = InstructionPath::wgmma;
  config.cluster_m = 2;
  config.cluster_n = 2;
  config.block_n = 176;
  EXPECT_EQ(gemm_raster_grid({3000, 7000, 5000, DataType::bf16}, config).tiles(), 8 * 30);
  config.block_n = 192;
  EXPECT_EQ(gemm_raster_grid({3000, 7000, 5000, DataType::bf16}, config).tiles(), 228);
}

// A transposed config tiles C^T: its raster over 7000x3000 is the one of 3000x7000 above, and
// the kernel gets m and n swapped.
TEST(GemmSpace, TransposedConfigsTileCTransposed) {
  GemmConfig config =
      *GemmConfig::from_key("wgmma-m128n176k64s4-cooperative-c2x2-transposed-static-swz0");
  const GemmProblem problem{7000, 3000, 5000, DataType::bf16};
  EXPECT_EQ(gemm_kernel_problem(problem, config), (GemmProblem{3000, 7000, 5000, DataType::bf16}));
  const GemmTileGrid tiles = gemm_tile_grid(problem, config);
  EXPECT_EQ(tiles.tiles_m, 24);  // 3000 / 128 rows of C^T
  EXPECT_EQ(tiles.tiles_n, 40);  // 7000 / 176 columns of C^T
  EXPECT_EQ(gemm_raster_grid(problem, config).tiles(), 8 * 30);
  config.transposed = false;
  EXPECT_EQ(gemm_kernel_problem(problem, config), problem);
  EXPECT_EQ(gemm_raster_grid(problem, config).tiles(), 28 * 9);
  // In the space: eight widths, each cooperative 128-row 2x2 static, fitting the H200.
  std::set<int> widths;
  for (const GemmConfig& c : enumerate_gemm_configs()) {
    if (!c.transposed) continue;
    widths.insert(c.block_n);
    EXPECT_EQ(c.path, InstructionPath::wgmma) << c.key();
    EXPECT_EQ(c.block_m, 128) << c.key();
    EXPECT_EQ(c.cluster_size(), 4) << c.key();
    EXPECT_TRUE(gemm_resource_use(c, profile("h200")).does_not_fit.empty()) << c.key();
    EXPECT_FALSE(gemm_resource_use(c, profile("gb10")).does_not_fit.empty()) << c.key();
  }
  EXPECT_EQ(widths, (std::set<int>{144, 160, 176, 192, 208, 224, 240, 256}));
  // Kept where m is ragged, pruned with the reason where it is whole 128-row tiles.
  const auto transposed_kept = [](const GemmProblem& shape) {
    const GemmSpace space = build_gemm_space(shape, profile("h200"));
    int kept = 0;
    for (const GemmConfig& c : space.configs) kept += c.transposed;
    for (const PrunedGemmConfig& pruned : space.pruned) {
      if (pruned.config.transposed && shape.m % 128 == 0) {
        EXPECT_NE(pruned.reason.find("is whole 128-row tiles"), std::string::npos) << pruned.reason;
      }
    }
    return kept;
  };
  EXPECT_GT(transposed_kept(problem), 8);
  EXPECT_EQ(transposed_kept({7040, 3000, 5000, DataType::bf16}), 0);
}

TEST(GemmResourceModel, WgmmaSharedMemoryIsTheTemplatePlan) {
  GemmConfig config;
  config.path = InstructionPath::wgmma;
  config.block_m = 128;
  config.block_n = 256;
  config.block_k = 64;
  config.stages = 3;
  config.persistence = GemmPersistence::static_loop;
  // README: 214104 B for 128x256 s3 (cooperative: 64 rows of C staging per warpgroup).
  EXPECT_EQ(gemm_dynamic_shared_bytes(config), 214104);
  EXPECT_TRUE(gemm_resource_use(config, profile("h200")).does_not_fit.empty());
  config.stages = 4;  // 279640 B: more than 227 KB
  EXPECT_NE(gemm_resource_use(config, profile("h200")).does_not_fit.find("shared memory"),
            std::string::npos);
  // 176 columns take three 64-column chunks of B per stage and of C staging, as 192 do.
  config.block_n = 176;
  EXPECT_EQ(gemm_dynamic_shared_bytes(config), 214120);
  config.block_n = 192;
  EXPECT_EQ(gemm_dynamic_shared_bytes(config), 214120);
  // Transposed, A (the second operand) and C staging are 176 rows of 128 bytes each: the ring
  // (16 KB + 22 KB per stage) x 4 + 2 x 22 KB of C + barriers, as the template's plan.
  config.block_n = 176;
  config.stages = 4;
  config.transposed = true;
  EXPECT_EQ(gemm_dynamic_shared_bytes(config), 201832);
  config.transposed = false;
  config.stages = 3;
  for (int width : {40, 200, 272}) {
    config.block_n = width;
    EXPECT_EQ(gemm_shape_problem(config),
              "block_n " + std::to_string(width) + " must be 64..256 in steps of 16");
  }
  config.block_n = 256;
  config.stages = 3;
  config.consumer_mode = GemmConsumerMode::pingpong;  // 256 accumulators per thread
  EXPECT_NE(gemm_shape_problem(config).find("accumulators"), std::string::npos);
  config = GemmConfig{};
  config.path = InstructionPath::wgmma;
  config.block_k = 64;
  config.stages = 4;
  config.persistence = GemmPersistence::static_loop;
  config.cluster_n = 2;
  EXPECT_TRUE(gemm_shape_problem(config).empty()) << "1x2: A multicast along N";
  config.cluster_m = 2;
  EXPECT_TRUE(gemm_shape_problem(config).empty()) << "2x2: A along N and B along M";
  config.persistence = GemmPersistence::stream_k;
  EXPECT_TRUE(gemm_shape_problem(config).empty()) << "2x2 stream-K";
  config.persistence = GemmPersistence::dynamic_loop;
  EXPECT_NE(gemm_shape_problem(config).find("a 2x2 cluster needs static or stream-K persistence"),
            std::string::npos);
  config.persistence = GemmPersistence::static_loop;
  for (const auto& [cluster_m, cluster_n] : {std::pair{4, 1}, {1, 4}, {2, 4}, {0, 1}, {1, 0}}) {
    config.cluster_m = cluster_m;
    config.cluster_n = cluster_n;
    EXPECT_NE(gemm_shape_problem(config).find(std::to_string(cluster_m) + "x" +
                                              std::to_string(cluster_n) +
                                              " must be 1x1, 2x1, 1x2 or 2x2"),
              std::string::npos)
        << cluster_m << "x" << cluster_n;
  }
  config.cluster_m = 1;
  config.cluster_n = 2;
  config.persistence = GemmPersistence::dynamic_loop;
  EXPECT_NE(gemm_shape_problem(config).find("a 1x2 cluster needs static or stream-K persistence"),
            std::string::npos);
  config.persistence = GemmPersistence::static_loop;
  config.block_m = 64;
  config.consumer_mode = GemmConsumerMode::pingpong;
  EXPECT_TRUE(gemm_shape_problem(config).empty()) << "32-row A shares: four swizzle atoms";
  config.cluster_m = 2;
  EXPECT_TRUE(gemm_shape_problem(config).empty()) << "the same shares in a 2x2 cluster";
  config.persistence = GemmPersistence::stream_k;
  EXPECT_NE(gemm_shape_problem(config).find("cooperative"), std::string::npos);
  config.persistence = GemmPersistence::static_loop;
  config.cluster_m = 1;
  config.block_m = 128;
  config.consumer_mode = GemmConsumerMode::cooperative;
  config.cluster_n = 1;
  config.cluster_m = 2;
  config.persistence = GemmPersistence::dynamic_loop;
  EXPECT_NE(gemm_shape_problem(config).find("static or stream-K persistence"), std::string::npos);
  config.persistence = GemmPersistence::grid;
  EXPECT_NE(gemm_shape_problem(config).find("persistent"), std::string::npos);
  EXPECT_EQ(estimate_gemm_registers(config), 168);
  EXPECT_EQ(config.threads(), 384);
}

TEST(GemmSpace, StreamKIsPrunedWhenTheTilesFillWholeWaves) {
  GemmConfig config;
  config.path = InstructionPath::wgmma;
  config.block_m = 128;
  config.block_n = 256;
  config.block_k = 64;
  config.stages = 3;
  config.persistence = GemmPersistence::stream_k;
  const auto reason_for = [&](const GemmProblem& problem) {
    for (const PrunedGemmConfig& pruned : build_gemm_space(problem, profile("h200")).pruned)
      if (pruned.config == config) return pruned.reason;
    return std::string("kept");
  };
  // 132 SMs: 12 x 11 = 132 tiles fill one wave; 5000x3000 (40 x 12 = 480 tiles) does not.
  EXPECT_NE(reason_for({12 * 128, 11 * 256, 4096, DataType::f16}).find("whole waves"),
            std::string::npos);
  EXPECT_EQ(reason_for({5000, 3000, 7000, DataType::f16}), "kept");
  config.consumer_mode = GemmConsumerMode::pingpong;
  config.block_m = 64;
  EXPECT_NE(gemm_shape_problem(config).find("cooperative"), std::string::npos);
  config.path = InstructionPath::mma_sync;
  EXPECT_NE(gemm_shape_problem(config).find("streamk persistence is a wgmma knob"),
            std::string::npos);
}

TEST(GemmSpace, BadProblemIsAUsageError) {
  EXPECT_THROW(build_gemm_space({0, 64, 64, DataType::f16}, profile("h200")), UsageError);
  EXPECT_THROW(build_gemm_space({64, 64, 12, DataType::f16}, profile("h200")), UsageError);
}

TEST(GemmRender, SwizzleIsALaunchArgumentNotPartOfTheSource) {
  const GemmProblem problem{1000, 1000, 1000, DataType::bf16};
  GemmConfig config;
  config.stages = 4;
  config.persistence = GemmPersistence::static_loop;
  const KernelSource plain = render_gemm_kernel(problem, config);
  config.swizzle_stride = 1792;
  const KernelSource swizzled = render_gemm_kernel(problem, config);
  EXPECT_EQ(plain.text, swizzled.text);
  EXPECT_EQ(plain.name, "m128n128k32w2x4s4-static_bf16.cu");
  EXPECT_EQ(plain.entry, kGemmEntryName);
  EXPECT_NE(plain.text.find("swr::Element::bf16"), std::string::npos);
  EXPECT_NE(plain.text.find("swr::gemm::Persistence::static_loop"), std::string::npos);
  EXPECT_NE(plain.text.find("/*stages*/ 4"), std::string::npos);
  EXPECT_EQ(plain.threads_per_block, 256);
  EXPECT_EQ(plain.dynamic_shared_bytes, gemm_dynamic_shared_bytes(config));
  bool has_kernel_header = false;
  for (const HeaderFile& header : plain.headers)
    has_kernel_header |= header.include_name == "gemm/gemm_kernel.cuh";
  EXPECT_TRUE(has_kernel_header);
}

}  // namespace
}  // namespace swr
