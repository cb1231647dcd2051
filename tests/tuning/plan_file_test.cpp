// The plan file (tuner/plan_file.hpp): what an entry stands for (values, lists, ranges, defaults,
// both families), repeated problems merged, and every kind of bad plan refused in one line naming
// the place, before anything is tuned; the file itself read as a regular file of bounded size.
#include "tuner/plan_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>

#include "support/files.hpp"
#include "swr/gpu_profile.hpp"
#include "swr/usage_error.hpp"
#include "tuner/gemm_compilation.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr {
namespace {

std::vector<std::string> attention_keys(const TuningPlanFile& plan) {
  std::vector<std::string> keys;
  for (const PlannedAttention& planned : plan.attention) keys.push_back(planned.problem.key());
  return keys;
}
std::vector<std::string> gemm_keys(const TuningPlanFile& plan) {
  std::vector<std::string> keys;
  for (const PlannedGemm& planned : plan.gemm) keys.push_back(planned.problem.key());
  return keys;
}

TEST(PlanFile, TheReadmeExampleStandsForEveryCombination) {
  const TuningPlanFile plan =
      read_plan_file(std::filesystem::path(SWR_SOURCE_DIR) / "examples/tuning-plan.json");
  // 6 sequence lengths (4096 x 2^i up to 131072) x 2 dtypes x 2 masks, then 2 more.
  ASSERT_EQ(plan.attention.size(), 26u);
  EXPECT_EQ(plan.attention.front().problem.key(), "b1_h32_sq4096_skv4096_d128_f16_causal");
  EXPECT_EQ(plan.attention[5].problem.key(), "b1_h32_sq131072_skv131072_d128_f16_causal");
  EXPECT_EQ(plan.attention[6].problem.key(), "b1_h32_sq4096_skv4096_d128_f16_noncausal");
  EXPECT_EQ(plan.attention.back().problem.key(), "b16_h8_sq2048_skv2048_d64_f16_noncausal");
  // m 1024..8192 step 1024, then three squares.
  ASSERT_EQ(plan.gemm.size(), 11u);
  EXPECT_EQ(plan.gemm.front().problem.key(), "m1024_n14336_k4096_bf16");
  EXPECT_EQ(plan.gemm[7].problem.key(), "m8192_n14336_k4096_bf16");
  EXPECT_EQ(plan.gemm.back().problem.key(), "m8192_n8192_k8192_f16");
  EXPECT_EQ(plan.repeated, 0);
  for (const PlannedAttention& planned : plan.attention) EXPECT_TRUE(planned.config_keys.empty());
}

TEST(PlanFile, DefaultsAreTheCommandLines) {
  const TuningPlanFile plan = parse_plan(R"({"version": 1, "attention": [{"seq": 512}]})", "p");
  ASSERT_EQ(plan.attention.size(), 1u);
  const AttentionProblem& problem = plan.attention[0].problem;
  EXPECT_EQ(problem.key(), "b8_h1_sq512_skv512_d64_f16_noncausal");
  EXPECT_TRUE(plan.gemm.empty());
}

TEST(PlanFile, RangesIncludeTheirEndWhenTheyReachIt) {
  const TuningPlanFile plan = parse_plan(
      R"({"version": 1, "gemm": [{"m": {"from": 1000, "to": 5000, "times": 2},
          "n": {"from": 64, "to": 200, "step": 64}, "k": 64}]})",
      "p");
  EXPECT_EQ(gemm_keys(plan), (std::vector<std::string>{
                                 "m1000_n64_k64_f16", "m1000_n128_k64_f16", "m1000_n192_k64_f16",
                                 "m2000_n64_k64_f16", "m2000_n128_k64_f16", "m2000_n192_k64_f16",
                                 "m4000_n64_k64_f16", "m4000_n128_k64_f16", "m4000_n192_k64_f16"}));
}

TEST(PlanFile, SeqKvAndConfigsPerEntry) {
  const TuningPlanFile plan = parse_plan(
      R"({"version": 1, "attention": [{"seq": 256, "seq_kv": [256, 1024], "heads": 2,
          "configs": ["m64n64w4s1-cyclic-grid-head_major"]}],
          "gemm": [{"size": 512, "dtype": "bf16", "configs": ["m128n128k32w2x4s2-grid-swz0"]}]})",
      "p");
  EXPECT_EQ(attention_keys(plan),
            (std::vector<std::string>{"b8_h2_sq256_skv256_d64_f16_noncausal",
                                      "b8_h2_sq256_skv1024_d64_f16_noncausal"}));
  EXPECT_EQ(plan.attention[1].config_keys,
            std::vector<std::string>{"m64n64w4s1-cyclic-grid-head_major"});
  ASSERT_EQ(plan.gemm.size(), 1u);
  ASSERT_EQ(plan.gemm[0].configs.size(), 1u);
  EXPECT_EQ(plan.gemm[0].configs[0].key(), "m128n128k32w2x4s2-grid-swz0");
}

TEST(PlanFile, KvHeadsHeadDimsAndCausalAlignmentPerEntry) {
  const TuningPlanFile plan = parse_plan(
      R"({"version": 1, "attention": [{"seq": 1024, "seq_kv": 4096, "batch": 1, "heads": 32,
          "kv_heads": [32, 8, 1], "head_dim": [96, 256], "causal": true,
          "causal_align": "bottom_right"}]})",
      "p");
  EXPECT_EQ(attention_keys(plan),
            (std::vector<std::string>{"b1_h32_sq1024_skv4096_d96_f16_causal_br",
                                      "b1_h32_sq1024_skv4096_d256_f16_causal_br",
                                      "b1_h32_kv8_sq1024_skv4096_d96_f16_causal_br",
                                      "b1_h32_kv8_sq1024_skv4096_d256_f16_causal_br",
                                      "b1_h32_kv1_sq1024_skv4096_d96_f16_causal_br",
                                      "b1_h32_kv1_sq1024_skv4096_d256_f16_causal_br"}));
  EXPECT_EQ(plan.attention[0].problem.kv_heads, 0);  // kv_heads = heads: the multi-head form
  // What swr writes of it reads back to the same problems.
  EXPECT_EQ(attention_keys(parse_plan(plan_to_json(plan).dump(), "again")), attention_keys(plan));
}

TEST(PlanFile, AProblemNamedTwiceIsTunedOnceWithTheConfigsOfBoth) {
  const TuningPlanFile restricted = parse_plan(
      R"({"version": 1, "attention": [
          {"seq": 256, "configs": ["m64n64w4s1-cyclic-grid-head_major"]},
          {"seq": [256, 512], "configs": ["m64n64w4s1-sawtooth-grid-head_major"]}]})",
      "p");
  ASSERT_EQ(restricted.attention.size(), 2u);
  EXPECT_EQ(restricted.repeated, 1);
  EXPECT_EQ(restricted.attention[0].config_keys,
            (std::vector<std::string>{"m64n64w4s1-cyclic-grid-head_major",
                                      "m64n64w4s1-sawtooth-grid-head_major"}));
  // An entry without configs asks for the whole space: that wins.
  const TuningPlanFile whole = parse_plan(
      R"({"version": 1, "gemm": [{"size": 512, "configs": ["m128n128k32w2x4s2-grid-swz0"]},
          {"m": 512, "n": 512, "k": 512}]})",
      "p");
  ASSERT_EQ(whole.gemm.size(), 1u);
  EXPECT_EQ(whole.repeated, 1);
  EXPECT_TRUE(whole.gemm[0].configs.empty());
}

TEST(PlanFile, WhatSwrWritesReadsBackToTheSameProblems) {
  const TuningPlanFile plan =
      read_plan_file(std::filesystem::path(SWR_SOURCE_DIR) / "examples/tuning-plan.json");
  const TuningPlanFile again = parse_plan(plan_to_json(plan).dump(), "rewritten");
  EXPECT_EQ(attention_keys(again), attention_keys(plan));
  EXPECT_EQ(gemm_keys(again), gemm_keys(plan));
}

// The plans kept in the repository name only configs the tuner takes for their problems on the
// H200 (select_space / select_gemm_space, the tuner's own check): a kernel change that prunes a
// config a plan names fails here, not on a lent GPU machine.
TEST(PlanFile, ThePlansInTheRepositoryNameOnlyConfigsTheTunerTakes) {
  const GpuProfile h200 = *find_gpu_profile("h200");
  for (const char* file : {"examples/tuning-plan.json", "bench/tuning_at_scale/plan8.json"}) {
    const TuningPlanFile plan = read_plan_file(std::filesystem::path(SWR_SOURCE_DIR) / file);
    for (const PlannedAttention& planned : plan.attention) {
      EXPECT_NO_THROW(select_space({planned.problem, h200}, planned.config_keys))
          << file << ": " << planned.problem.key();
    }
    for (const PlannedGemm& planned : plan.gemm) {
      EXPECT_NO_THROW(select_gemm_space({planned.problem, h200}, planned.configs))
          << file << ": " << planned.problem.key();
    }
  }
}

// The seed corpus of the fuzz target fuzz_plan_file: the README's example plan, and what swr
// writes (plan_to_json) for it and for a few others. SWR_WRITE_FUZZ_SEEDS=1 writes them anew.
TEST(PlanFile, FuzzSeedsAreWhatSwrWrites) {
  const std::filesystem::path source(SWR_SOURCE_DIR);
  const std::filesystem::path corpus = source / "tests/fuzz/corpus/fuzz_plan_file";
  std::map<std::string, std::string> seeds;
  const std::string example_text = [&] {
    std::ifstream in(source / "examples/tuning-plan.json");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  seeds["example.json"] = example_text;
  const std::string others[] = {
      example_text,
      R"({"version": 1, "attention": [{"seq": [256, 512], "seq_kv": 1024, "batch": 2, "heads": 4,
          "head_dim": [64, 128], "dtype": "bf16", "causal": [true, false],
          "configs": ["m64n64w4s1-cyclic-grid-head_major", "wgmma-m128n128s2-ov-pp-cyclic-dynamic-head_major"]}]})",
      R"({"version": 1, "gemm": [{"m": {"from": 1000, "to": 4000, "times": 2}, "n": 4096, "k": 264,
          "dtype": ["f16", "bf16"], "configs": ["m128n128k32w2x4s2-grid-swzn256"]}]})",
      R"({"version": 1, "attention": [{"seq": 4096}], "gemm": [{"size": 2048}]})",
  };
  for (std::size_t i = 0; i < std::size(others); ++i) {
    seeds["written-" + std::to_string(i) + ".json"] =
        plan_to_json(parse_plan(others[i], "seed")).dump(1) + "\n";
  }
  const char* write = std::getenv("SWR_WRITE_FUZZ_SEEDS");
  for (const auto& [name, text] : seeds) {
    if (write != nullptr && std::string(write) == "1") {
      std::filesystem::create_directories(corpus);
      std::ofstream(corpus / name) << text;
    }
    std::ifstream in(corpus / name);
    const std::string stored(std::istreambuf_iterator<char>(in), {});
    EXPECT_EQ(stored, text) << name << ": run with SWR_WRITE_FUZZ_SEEDS=1 to write it again";
    EXPECT_NO_THROW(parse_plan(stored, name));
  }
}

// Each bad plan: a UsageError of one line that names the plan and says what is wrong.
TEST(PlanFile, BadPlansAreRefusedInOneLineNamingThePlace) {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "not JSON"},
      {"[1, 2]", "allowed an object with version, attention, gemm"},
      {R"({"version": 1, "attention": [{"seq": 512}], "extra": 1})", "unknown key 'extra'"},
      {R"({"attention": [{"seq": 512}]})", "version: missing"},
      {R"({"version": 2, "attention": [{"seq": 512}]})", "version: 2: allowed 1"},
      {R"({"version": 1})", "no problem"},
      {R"({"version": 1, "attention": {"seq": 512}})", "attention: allowed a list of entries"},
      {R"({"version": 1, "attention": [512]})", "attention[0]: allowed an object"},
      {R"({"version": 1, "attention": [{"seq": 512, "sq": 1}]})",
       "attention[0]: unknown key 'sq': allowed seq, seq_kv"},
      {R"({"version": 1, "attention": [{"heads": 2}]})", "attention[0]: missing seq"},
      {R"({"version": 1, "attention": [{"seq": 0}]})", "attention[0].seq: 0 is not one"},
      {R"({"version": 1, "attention": [{"seq": -512}]})", "attention[0].seq: -512 is not one"},
      {R"({"version": 1, "attention": [{"seq": 512.5}]})", "attention[0].seq: 512.5 is not one"},
      {R"({"version": 1, "attention": [{"seq": "512"}]})", "attention[0].seq: \"512\" is not one"},
      {R"({"version": 1, "attention": [{"seq": 3000000000}]})", "3000000000 is not one"},
      {R"({"version": 1, "attention": [{"seq": []}]})", "attention[0].seq: an empty list"},
      {R"({"version": 1, "attention": [{"seq": [512, true]}]})", "attention[0].seq[1]: true"},
      {R"({"version": 1, "attention": [{"seq": {"from": 512}}]})",
       "a range needs from, to, and one of times and step"},
      {R"({"version": 1, "attention": [{"seq": {"from": 512, "to": 1024, "times": 2, "step": 1}}]})",
       "a range needs from, to, and one of times and step"},
      {R"({"version": 1, "attention": [{"seq": {"from": 512, "to": 1024, "times": 1}}]})",
       "attention[0].seq.times: 1: allowed 2 or more"},
      {R"({"version": 1, "attention": [{"seq": {"from": 1024, "to": 512, "step": 1}}]})",
       "to 512 is below from 1024"},
      {R"({"version": 1, "attention": [{"seq": {"from": 1, "to": 100000, "step": 1}}]})",
       "more than 4096 values"},
      {R"({"version": 1, "attention": [{"seq": {"from": 1, "to": 9, "by": 1}}]})",
       "unknown range key 'by'"},
      {R"({"version": 1, "attention": [{"seq": 512, "head_dim": 100}]})",
       "attention[0].head_dim: 100 is not supported: allowed 32, 64, 80, 96, 128, 160, 192, 256"},
      {R"({"version": 1, "attention": [{"seq": 512, "heads": 6, "kv_heads": 4}]})",
       "attention[0]: b8_h6_kv4_sq512_skv512_d64_f16_noncausal: "},
      {R"({"version": 1, "attention": [{"seq": 512, "causal_align": "left"}]})",
       "attention[0].causal_align: \"left\" is not a causal alignment: allowed \"top_left\", "
       "\"bottom_right\""},
      {R"({"version": 1, "attention": [{"seq": 512, "causal_align": "bottom_right"}]})",
       "attention[0]: b8_h1_sq512_skv512_d64_f16_noncausal: "},
      {R"({"version": 1, "attention": [{"seq": 512, "dtype": "f32"}]})",
       "attention[0].dtype: \"f32\" is not a dtype"},
      {R"({"version": 1, "attention": [{"seq": 512, "causal": "yes"}]})",
       "attention[0].causal: \"yes\" is not true or false"},
      {R"({"version": 1, "attention": [{"seq": 512, "configs": "m64n64w4s1-cyclic-grid-head_major"}]})",
       "attention[0].configs: allowed a non-empty list"},
      {R"({"version": 1, "attention": [{"seq": 512, "configs": ["m128n128k32w2x4s2-grid-swz0"]}]})",
       "attention[0].configs[0]: \"m128n128k32w2x4s2-grid-swz0\" is not an attention config key"},
      {R"({"version": 1, "attention": [{"seq": 512, "batch": 100000, "heads": 100000}]})",
       "attention[0]: b100000_h100000"},
      {R"({"version": 1, "gemm": [{"size": 512, "m": 512}]})",
       "gemm[0]: allowed either size (square) or all of m, n and k"},
      {R"({"version": 1, "gemm": [{"m": 512, "n": 512}]})", "gemm[0]: missing k"},
      {R"({"version": 1, "gemm": [{"m": 512, "n": 100, "k": 64}]})",
       "gemm[0]: m512_n100_k64_f16: GEMM n 100"},
      {R"({"version": 1, "gemm": [{"size": 512, "seq": 4}]})", "gemm[0]: unknown key 'seq'"},
      {R"({"version": 1, "gemm": [{"size": 512, "size": 1024}]})", "key 'size' given twice"},
      {R"({"version": 1, "gemm": [{"m": {"from": 8, "to": 32768, "step": 8},
          "n": {"from": 8, "to": 32768, "step": 8}, "k": 64}]})",
       "more than 10000 problems"},
      {R"({"version": 1, "gemm": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]})", "nested deeper than 16"},
  };
  for (const auto& [text, message] : cases) {
    try {
      parse_plan(text, "plans/bad.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& error) {
      const std::string what = error.what();
      EXPECT_EQ(what.rfind("bad plan 'plans/bad.json': ", 0), 0u) << what;
      EXPECT_NE(what.find(message), std::string::npos) << text << "\n -> " << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(PlanFile, OnlyARegularFileOfBoundedSizeIsRead) {
  const TemporaryDirectory directory;
  const std::filesystem::path pipe = directory.path() / "plan.fifo";
  ASSERT_EQ(mkfifo(pipe.c_str(), 0600), 0);
  EXPECT_THROW(read_plan_file(pipe), UsageError);  // and does not wait for a writer
  EXPECT_THROW(read_plan_file(directory.path()), UsageError);
  EXPECT_THROW(read_plan_file(directory.path() / "missing.json"), UsageError);
  const std::filesystem::path big = directory.path() / "big.json";
  std::ofstream(big) << std::string(kPlanFileMaxBytes + 1, ' ');
  try {
    read_plan_file(big);
    ADD_FAILURE() << "read a file over the bound";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("more than the"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace swr
