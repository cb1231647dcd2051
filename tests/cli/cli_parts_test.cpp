// The command line's parts that a whole run cannot easily reach: how a failed variant is shown,
// what --out writes when some variants failed, number formatting and option parsing.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/problem_options.hpp"
#include "run_swr_tune.hpp"
#include "swr/usage_error.hpp"
#include "tuner/kernel_directory.hpp"
#include "tuner/text_format.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr::cli {
namespace {

CompileResult compiled(const AttentionConfig& config, bool ok) {
  CompileResult result;
  result.job.problem.seq_q = result.job.problem.seq_kv = 1024;
  result.job.config = config;
  result.job.arch = "sm_121";
  result.source.threads_per_block = config.threads();
  result.source.dynamic_shared_bytes = 24576;
  result.kernel.arch = "sm_121";
  result.kernel.ok = ok;
  result.kernel.compile_seconds = 2.5;
  if (ok) {
    result.kernel.cubin = {'\x7f', 'E', 'L', 'F', 1, 2, 3};
    result.kernel.registers = 128;
    result.kernel.spill_bytes = 16;
  } else {
    result.kernel.log = "kernel.cu(12): error: identifier \"x\" is undefined\n1 error detected";
  }
  return result;
}

AttentionConfig config_with(Persistence persistence, KvOrder order) {
  AttentionConfig config;
  config.block_m = 64;
  config.block_n = 64;
  config.warps = 4;
  config.stages = 1;
  config.persistence = persistence;
  config.order = order;
  return config;
}

TEST(CompileResultLine, FailureShowsItsLogIndented) {
  const CompileResult failed = compiled(config_with(Persistence::grid, KvOrder::cyclic), false);
  const std::string text = compile_result_line("[3/9]", failed, 40);
  const std::vector<std::string> lines = swr::test::lines_of(text);
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_EQ(lines[0].rfind("[3/9] " + failed.job.config.key(), 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("FAILED"), std::string::npos);
  EXPECT_EQ(lines[1], "    kernel.cu(12): error: identifier \"x\" is undefined");
  EXPECT_EQ(lines[2], "    1 error detected");
}

TEST(CompileResultLine, SuccessShowsSizeRegistersSpillsAndCache) {
  CompileResult ok = compiled(config_with(Persistence::dynamic, KvOrder::sawtooth), true);
  ok.kernel.from_cache = true;
  ok.kernel.static_shared_bytes = 1024;
  const std::string line = compile_result_line("[1/1]", ok, 10);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  for (const char* expected : {" ok ", "128 regs", "16 B spill", "25 KiB smem", "2.5s", "cached"}) {
    EXPECT_NE(line.find(expected), std::string::npos) << expected << " in " << line;
  }
}

TEST(KernelDirectory, WritesCompiledVariantsAndListsFailedOnes) {
  swr::test::TemporaryDirectory scratch;
  Target target;
  target.problem.seq_q = target.problem.seq_kv = 1024;
  target.gpu = *find_gpu_profile("gb10");
  CompileOutcome outcome;
  outcome.results = {compiled(config_with(Persistence::static_loop, KvOrder::sawtooth), true),
                     compiled(config_with(Persistence::grid, KvOrder::cyclic), false)};
  outcome.failed = 1;
  const auto directory = scratch.path() / "nested" / "out";
  write_kernel_directory(directory, target, outcome);

  std::ifstream in(directory / "kernels.json");
  const nlohmann::json manifest = nlohmann::json::parse(in);
  ASSERT_EQ(manifest.at("kernels").size(), 1u);
  const auto& kernel = manifest.at("kernels")[0];
  EXPECT_EQ(kernel.at("grid"), "static");
  EXPECT_EQ(kernel.at("threads"), 128);
  EXPECT_EQ(kernel.at("dynamic_shared_bytes"), 24576);
  EXPECT_EQ(kernel.at("registers"), 128);
  EXPECT_EQ(manifest.at("failed"), nlohmann::json::array({outcome.results[1].job.config.key()}));
  std::ifstream cubin(directory / kernel.at("file").get<std::string>(), std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(cubin), std::istreambuf_iterator<char>()};
  EXPECT_EQ(bytes, std::string("\x7f"
                               "ELF\x01\x02\x03"));
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(directory)) ++files;
  EXPECT_EQ(files, 2);  // the cubin and the manifest, no temporary left
}

TEST(KernelDirectory, GridRuleFollowsPersistence) {
  EXPECT_EQ(grid_rule(Persistence::grid), "grid");
  EXPECT_EQ(grid_rule(Persistence::static_loop), "static");
  EXPECT_EQ(grid_rule(Persistence::dynamic), "dynamic");
}

TEST(OptionParsing, PositiveIntegersOnly) {
  EXPECT_EQ(parse_positive("131072", "--seq"), 131072);
  EXPECT_EQ(parse_positive("2147483647", "--seq"), 2147483647);
  for (const char* bad : {"0", "-1", "", "12k", "1.5", " 4", "2147483648"}) {
    EXPECT_THROW(parse_positive(bad, "--seq"), UsageError) << bad;
  }
}

TEST(TextFormat, BytesDurationsAndTables) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(99 * 1024), "99 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(60LL * 1024 * 1024), "60 MiB");
  EXPECT_EQ(format_duration(4.21), "4.2s");
  EXPECT_EQ(format_duration(75.4), "1m15s");
  EXPECT_EQ(format_duration(7300), "2h02m");
  EXPECT_EQ(format_rate(4.8e12, "B/s"), "4.8 TB/s");
  EXPECT_EQ(format_rate(0, "B/s"), "-");

  TextTable table({"key", ">SMs"});
  table.add_row({"gb10", "48"});
  table.add_row({"h100", "132"});
  std::ostringstream out;
  table.print(out);
  EXPECT_EQ(out.str(), "key   SMs\ngb10   48\nh100  132\n");
}

}  // namespace
}  // namespace swr::cli
