#include "swr/gpu_profile.hpp"

#include <gtest/gtest.h>

#include "swr/instruction_path.hpp"

namespace swr {
namespace {

TEST(GpuProfile, BuiltinsInDisplayOrder) {
  const auto& profiles = builtin_gpu_profiles();
  ASSERT_EQ(profiles.size(), 3u);
  EXPECT_EQ(profiles[0].name, "gb10");
  EXPECT_EQ(profiles[1].name, "h100");
  EXPECT_EQ(profiles[2].name, "h200");
  EXPECT_EQ(gpu_profile_names(), "gb10, h100, h200, auto");
}

TEST(GpuProfile, Gb10) {
  const GpuProfile gpu = find_gpu_profile("gb10").value();
  EXPECT_EQ(gpu.arch, "sm_121");
  EXPECT_EQ(gpu.compute_capability(), "12.1");
  EXPECT_EQ(gpu.sm_count, 48);
  EXPECT_EQ(gpu.l2_bytes, 24 * 1024 * 1024);
  EXPECT_EQ(gpu.shared_memory_per_block_optin, 101376);
  EXPECT_EQ(gpu.shared_memory_per_sm, 102400);
  EXPECT_EQ(gpu.max_threads_per_sm, 1536);
  EXPECT_EQ(gpu.l2_partitions, 1);
  EXPECT_DOUBLE_EQ(gpu.dram_bytes_per_second, 273e9);
  EXPECT_GT(gpu.peak_tensor_flops, 50e12);
}

TEST(GpuProfile, HopperParts) {
  const GpuProfile h100 = find_gpu_profile("h100").value();
  const GpuProfile h200 = find_gpu_profile("h200").value();
  for (const GpuProfile& gpu : {h100, h200}) {
    EXPECT_EQ(gpu.arch, "sm_90a");
    EXPECT_EQ(gpu.compute_capability(), "9.0");
    EXPECT_EQ(gpu.sm_count, 132);
    EXPECT_EQ(gpu.shared_memory_per_block_optin, 227 * 1024);
    EXPECT_EQ(gpu.shared_memory_per_sm, 228 * 1024);
    EXPECT_EQ(gpu.max_threads_per_sm, 2048);
    EXPECT_NEAR(gpu.peak_tensor_flops, 989e12, 1e12);
  }
  for (const GpuProfile& gpu : {h100, h200}) {
    EXPECT_EQ(gpu.l2_partitions, 2);
    EXPECT_DOUBLE_EQ(gpu.l2_shared_miss_factor, 1.43);
  }
  EXPECT_EQ(h100.l2_bytes, 52428800);
  EXPECT_EQ(h200.l2_bytes, 62914560);  // what the lent H200 reports
  EXPECT_DOUBLE_EQ(h100.dram_bytes_per_second, 3.35e12);
  EXPECT_DOUBLE_EQ(h200.dram_bytes_per_second, 4.8e12);
}

TEST(GpuProfile, EveryProfileIsConsistent) {
  for (const GpuProfile& gpu : builtin_gpu_profiles()) {
    EXPECT_FALSE(gpu.description.empty()) << gpu.name;
    EXPECT_EQ(gpu.arch.rfind("sm_", 0), 0u) << gpu.name;
    EXPECT_LE(gpu.shared_memory_per_block_optin + gpu.reserved_shared_memory_per_block,
              gpu.shared_memory_per_sm)
        << gpu.name;
    EXPECT_GT(gpu.registers_per_sm, 0) << gpu.name;
    EXPECT_GT(gpu.max_blocks_per_sm, 0) << gpu.name;
    EXPECT_EQ(gpu.l2_sector_bytes, 32) << gpu.name;
    EXPECT_GE(gpu.l2_shared_miss_factor, 1.0) << gpu.name;
    EXPECT_LE(gpu.l2_shared_miss_factor, gpu.l2_partitions) << gpu.name;
  }
}

TEST(GpuProfile, LookupIsCaseInsensitive) {
  EXPECT_EQ(find_gpu_profile("H200").value().name, "h200");
  EXPECT_EQ(find_gpu_profile("Gb10").value().name, "gb10");
  EXPECT_FALSE(find_gpu_profile("a100").has_value());
  EXPECT_FALSE(find_gpu_profile("").has_value());
  EXPECT_FALSE(find_gpu_profile("h200 ").has_value());
  // "auto" means the present device: the tuner reads it, it is no built-in profile.
  EXPECT_FALSE(find_gpu_profile("auto").has_value());
}

TEST(InstructionPath, WgmmaOnlyWhereTheTargetIsSm90a) {
  for (const GpuProfile& gpu : builtin_gpu_profiles()) {
    EXPECT_TRUE(supports(gpu, InstructionPath::mma_sync)) << gpu.name;
    EXPECT_EQ(supports(gpu, InstructionPath::wgmma), gpu.name != "gb10") << gpu.name;
  }
  EXPECT_EQ(instruction_path_problem(*find_gpu_profile("gb10"), InstructionPath::wgmma),
            "wgmma variants need sm_90a (H100/H200); gb10 is sm_121");
  EXPECT_EQ(instruction_path_problem(*find_gpu_profile("h200"), InstructionPath::wgmma), "");
}

TEST(InstructionPath, NamesRoundTrip) {
  for (InstructionPath path : {InstructionPath::mma_sync, InstructionPath::wgmma}) {
    EXPECT_EQ(parse_instruction_path(to_string(path)), path);
  }
  EXPECT_FALSE(parse_instruction_path("wmma").has_value());
}

}  // namespace
}  // namespace swr
