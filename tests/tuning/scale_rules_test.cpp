// The rules of tuning at scale that need no GPU: the shards of a plan (disjoint, covering it, one
// GEMM kernel binary never split, balanced), and which devices --devices takes on machines of
// made-up devices (identical or mixed, bad indexes).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "generator/gemm_kernel_source.hpp"
#include "swr/usage_error.hpp"
#include "tuner/attention_tuning_job.hpp"
#include "tuner/device_selection.hpp"
#include "tuner/gemm_tuning_job.hpp"
#include "tuner/shard.hpp"

namespace swr {
namespace {

TEST(Shard, ParsesIOfNCountedFromZero) {
  const Shard shard = parse_shard("3/8");
  EXPECT_EQ(shard.index, 3);
  EXPECT_EQ(shard.count, 8);
  EXPECT_EQ(parse_shard("0/1").count, 1);
  EXPECT_EQ(parse_shard("4095/4096").index, 4095);
  for (const char* bad : {"3/2", "2/2", "0/0", "a/b", "1", "1/", "/2", "-1/2", "1/-2", "0/4097",
                          "1/2/3", " 1/2", "1/2 ", "0x1/2", "1.0/2", ""}) {
    EXPECT_THROW(parse_shard(bad), UsageError) << bad;
  }
  try {
    parse_shard("3/2");
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("bad --shard '3/2': allowed I/N with 0 <= I < N"),
              std::string::npos)
        << error.what();
  }
}

// A plan of both families with `sizes` variants per shape (odd sizes cut from real spaces).
struct Plan {
  std::vector<TuningShape> attention;
  std::vector<GemmTuningShape> gemm;
};

Plan plan_of(const std::vector<std::size_t>& attention_sizes,
             const std::vector<std::size_t>& gemm_sizes) {
  const GpuProfile gpu = *find_gpu_profile("h200");
  Plan plan;
  for (std::size_t i = 0; i < attention_sizes.size(); ++i) {
    const AttentionProblem problem{
        1, 2, 256 << i, 256 << i, i % 2 ? 128 : 64, DataType::f16, i % 3 == 0};
    TuningShape shape = attention_tuning_shapes({{problem, {}}}, gpu, false).front();
    shape.configs.resize(std::min(shape.configs.size(), attention_sizes[i]));
    plan.attention.push_back(shape);
  }
  for (std::size_t i = 0; i < gemm_sizes.size(); ++i) {
    const GemmProblem problem{512 << i, 1024, 256, DataType::f16};
    GemmTuningShape shape = gemm_tuning_shapes({{problem, {}}}, gpu, false).front();
    // Binary by binary, so that a cut keeps several swizzles of one binary together.
    std::stable_sort(shape.configs.begin(), shape.configs.end(),
                     [&](const GemmConfig& a, const GemmConfig& b) {
                       return gemm_binary_name(problem, a) < gemm_binary_name(problem, b);
                     });
    shape.configs.resize(std::min(shape.configs.size(), gemm_sizes[i]));
    plan.gemm.push_back(shape);
  }
  return plan;
}

std::multiset<std::string> variants_of(const Plan& plan) {
  std::multiset<std::string> variants;
  for (const TuningShape& shape : plan.attention)
    for (const AttentionConfig& config : shape.configs)
      variants.insert(shape.problem.key() + "/" + config.key());
  for (const GemmTuningShape& shape : plan.gemm)
    for (const GemmConfig& config : shape.configs)
      variants.insert(shape.problem.key() + "/" + config.key());
  return variants;
}

TEST(Shard, ShardsOfAPlanAreDisjointCoverItAndNeverSplitAGemmBinary) {
  const std::vector<std::vector<std::size_t>> attention_sizes = {{1}, {7, 13}, {31, 1, 65}, {}};
  const std::vector<std::vector<std::size_t>> gemm_sizes = {{}, {5}, {41, 3}, {127}};
  for (std::size_t p = 0; p < attention_sizes.size(); ++p) {
    const Plan whole = plan_of(attention_sizes[p], gemm_sizes[p]);
    const std::multiset<std::string> all = variants_of(whole);
    ASSERT_FALSE(all.empty());
    for (int count = 1; count <= 64; ++count) {
      std::multiset<std::string> covered;
      std::map<std::string, int> shard_of_binary;
      std::size_t least_units = SIZE_MAX, most_units = 0, units = 0;
      for (int index = 0; index < count; ++index) {
        Plan part = whole;
        const ShardedPlan sharded = keep_shard({index, count}, part.attention, part.gemm);
        units = sharded.units;
        const std::multiset<std::string> kept = variants_of(part);
        EXPECT_EQ(sharded.variants, kept.size());
        covered.insert(kept.begin(), kept.end());
        std::set<std::string> shard_units;
        for (const TuningShape& shape : part.attention)
          for (const AttentionConfig& config : shape.configs)
            shard_units.insert(shape.problem.key() + "/" + config.key());
        for (const GemmTuningShape& shape : part.gemm) {
          for (const GemmConfig& config : shape.configs) {
            const std::string binary =
                shape.problem.key() + "/" + gemm_binary_name(shape.problem, config);
            shard_units.insert(binary);
            const auto [found, inserted] = shard_of_binary.emplace(binary, index);
            EXPECT_EQ(found->second, index) << binary << " split over shards, N=" << count;
          }
        }
        least_units = std::min(least_units, shard_units.size());
        most_units = std::max(most_units, shard_units.size());
      }
      // Every variant in exactly one shard, and the units dealt evenly.
      EXPECT_EQ(covered, all) << "plan " << p << ", N=" << count;
      EXPECT_LE(most_units - least_units, 1u) << "plan " << p << ", N=" << count;
      EXPECT_EQ(most_units, (units + count - 1) / count) << "plan " << p << ", N=" << count;
    }
  }
}

TEST(Shard, GemmUnitsAreKernelBinaries) {
  Plan plan = plan_of({}, {40});
  std::set<std::string> binaries;
  for (const GemmConfig& config : plan.gemm[0].configs)
    binaries.insert(gemm_binary_name(plan.gemm[0].problem, config));
  ASSERT_LT(binaries.size(), 40u) << "the test wants binaries with several swizzles";
  const ShardedPlan sharded = keep_shard({0, 1}, plan.attention, plan.gemm);
  EXPECT_EQ(sharded.units, binaries.size());
  EXPECT_EQ(sharded.variants, 40u);
}

// --model-top narrows each problem's variants (attention_tuning_shapes' choice) before the shard's
// part is taken, so the shards of a model-guided plan split the chosen variants and nothing else;
// the planted fault still goes first. A stand-in choice here: the model's own is
// ModelTopMeasuresTheModelsBestAndSpreadOutChecks.
TEST(Shard, AChoiceNarrowsEachProblemBeforeTheShardsSplitIt) {
  const GpuProfile gpu = *find_gpu_profile("h200");
  const std::vector<PlannedAttention> planned = {
      {AttentionProblem{1, 2, 1024, 1024, 64, DataType::f16, false}, {}},
      {AttentionProblem{1, 8, 2048, 2048, 128, DataType::f16, true, 2}, {}}};
  std::map<std::string, std::size_t> offered;
  const AttentionVariantChoice every_fifth = [&](const AttentionProblem& problem,
                                                 const std::vector<AttentionConfig>& configs) {
    offered[problem.key()] = configs.size();
    std::vector<AttentionConfig> chosen;
    for (std::size_t i = 0; i < configs.size(); i += 5) chosen.push_back(configs[i]);
    return chosen;
  };
  const std::vector<TuningShape> whole = attention_tuning_shapes(planned, gpu, true, every_fifth);
  ASSERT_EQ(whole.size(), 2u);
  std::multiset<std::string> chosen;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    const std::size_t space =
        attention_tuning_shapes({planned[i]}, gpu, false).front().configs.size();
    EXPECT_EQ(offered.at(planned[i].problem.key()), space) << "the choice saw the whole space";
    ASSERT_EQ(whole[i].configs.size(), 1 + (space + 4) / 5);
    EXPECT_TRUE(whole[i].configs.front().planted_fault);
    for (const AttentionConfig& config : whole[i].configs)
      chosen.insert(whole[i].problem.key() + "/" + config.key() +
                    (config.planted_fault ? "+fault" : ""));
  }
  for (int count : {1, 2, 3, 7}) {
    std::multiset<std::string> covered;
    for (int index = 0; index < count; ++index) {
      std::vector<TuningShape> part = whole;
      std::vector<GemmTuningShape> no_gemm;
      keep_shard({index, count}, part, no_gemm);
      for (const TuningShape& shape : part)
        for (const AttentionConfig& config : shape.configs)
          covered.insert(shape.problem.key() + "/" + config.key() +
                         (config.planted_fault ? "+fault" : ""));
    }
    EXPECT_EQ(covered, chosen) << "N=" << count;
  }
}

// Made-up devices: an H200 as the driver reports it, with its own counts and clock.
PresentDevice device(int ordinal, const std::string& kind = "h200", int sm_count = 132,
                     int clock_khz = 1980000) {
  PresentDevice present;
  present.ordinal = ordinal;
  present.uuid = "GPU-0000000" + std::to_string(ordinal);
  present.profile = *find_gpu_profile(kind);
  present.profile.description = kind == "h200" ? "NVIDIA H200" : "NVIDIA H100 80GB HBM3";
  present.profile.sm_count = sm_count;
  present.clock_khz = clock_khz;
  return present;
}

std::vector<int> ordinals(const DeviceSelection& selection) {
  std::vector<int> result;
  for (const PresentDevice& present : selection.devices) result.push_back(present.ordinal);
  return result;
}

std::string refusal(const std::string& spec, const std::vector<PresentDevice>& present,
                    const std::string& gpu = "h200") {
  try {
    select_devices(parse_device_spec(spec), present, *find_gpu_profile(gpu), 0, "no driver");
  } catch (const UsageError& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(DeviceSelection, ParsesAllOrDistinctIndexes) {
  EXPECT_TRUE(parse_device_spec("all").all);
  EXPECT_EQ(parse_device_spec("0,2,5").ordinals, (std::vector<int>{0, 2, 5}));
  for (const char* bad :
       {"", "ALL", "0,", ",1", "0,,1", "a", "-1", "1.5", "0,0", "2,1,2", " 1", "99999999999"}) {
    EXPECT_THROW(parse_device_spec(bad), UsageError) << bad;
  }
}

TEST(DeviceSelection, IdenticalDevicesAreAllTaken) {
  const std::vector<PresentDevice> host = {device(0), device(1), device(2), device(3)};
  const GpuProfile h200 = *find_gpu_profile("h200");
  EXPECT_EQ(ordinals(select_devices(parse_device_spec("all"), host, h200, 0, "")),
            (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(ordinals(select_devices(parse_device_spec("3,1"), host, h200, 0, "")),
            (std::vector<int>{1, 3}));
  // Without --devices: the selected device alone, and none when it is another GPU.
  EXPECT_EQ(ordinals(select_devices(std::nullopt, host, h200, 2, "")), (std::vector<int>{2}));
  EXPECT_TRUE(select_devices(std::nullopt, host, *find_gpu_profile("gb10"), 0, "").devices.empty());
  EXPECT_TRUE(select_devices(std::nullopt, {}, h200, 0, "").devices.empty());
}

TEST(DeviceSelection, AllOnAMixedHostTakesTheNamedGpuAndSaysWhatItLeftOut) {
  const std::vector<PresentDevice> host = {device(0, "h100"), device(1), device(2),
                                           device(3, "h100")};
  const DeviceSelection selection =
      select_devices(parse_device_spec("all"), host, *find_gpu_profile("h200"), 0, "");
  EXPECT_EQ(ordinals(selection), (std::vector<int>{1, 2}));
  EXPECT_NE(selection.note.find("devices 0,3 are not the h200"), std::string::npos)
      << selection.note;
  EXPECT_EQ(
      ordinals(select_devices(parse_device_spec("all"), host, *find_gpu_profile("h100"), 0, "")),
      (std::vector<int>{0, 3}));
}

TEST(DeviceSelection, DevicesThatDifferAreRefused) {
  // Same name, fewer SMs (a cut-down part), or another clock: not the same profile.
  const std::vector<PresentDevice> host = {device(0), device(1, "h200", 114), device(2),
                                           device(3, "h200", 132, 1755000)};
  const std::string all = refusal("all", host);
  EXPECT_NE(all.find("bad --devices 'all': the h200 devices here differ: 0,2 ("), std::string::npos)
      << all;
  EXPECT_NE(all.find("allowed identical GPUs in one run, e.g. --devices 0,2"), std::string::npos)
      << all;
  const std::string sms = refusal("0,1", host);
  EXPECT_NE(sms.find("device 1 (NVIDIA H200, sm_90a, 114 SMs"), std::string::npos) << sms;
  EXPECT_NE(sms.find("differs from device 0"), std::string::npos) << sms;
  EXPECT_NE(refusal("2,3", host).find("1755 MHz) differs from device 2"), std::string::npos);
  EXPECT_EQ(refusal("0,2", host), "(accepted)");
}

TEST(DeviceSelection, IndexesThatDoNotExistOrAreAnotherGpuAreRefused) {
  const std::vector<PresentDevice> host = {device(0), device(1, "h100")};
  EXPECT_NE(refusal("0,5", host)
                .find("bad --devices '0,5': there is no device 5: this machine "
                      "has 2: device 0 (NVIDIA H200"),
            std::string::npos)
      << refusal("0,5", host);
  EXPECT_NE(refusal("1", host).find("is a h100, not the h200 --gpu names"), std::string::npos)
      << refusal("1", host);
  EXPECT_NE(refusal("0", {}).find("there is no device 0: this machine has none (no driver)"),
            std::string::npos);
  EXPECT_NE(refusal("all", {device(0, "h100")}).find("no h200 here"), std::string::npos);
  for (const std::string& message :
       {refusal("0,5", host), refusal("1", host), refusal("all", {})}) {
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace swr
