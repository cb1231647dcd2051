// Bad input to every command: one line on stderr naming the bad value and the allowed ones,
// exit code 2, and nothing written (no cache directory, no output directory).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "run_swr_tune.hpp"
#include "usage_error_output.hpp"

namespace swr::test {
namespace {

struct BadInput {
  std::string name;                    // test name
  std::vector<std::string> arguments;  // after the command
  std::string named_value;             // must appear in the message, quoted
  std::string allowed;                 // must appear after "allowed"
};

const std::vector<BadInput> kBadInputs = {
    {"unknown_gpu", {"--gpu", "a100", "--seq", "1024"}, "'a100'", "gb10, h100, h200, auto"},
    {"zero_seq", {"--gpu", "gb10", "--seq", "0"}, "'0'", "a positive integer"},
    {"negative_seq", {"--gpu", "gb10", "--seq=-5"}, "'-5'", "a positive integer"},
    {"text_seq", {"--gpu", "gb10", "--seq", "long"}, "'long'", "a positive integer"},
    {"huge_seq", {"--gpu", "gb10", "--seq", "99999999999"}, "'99999999999'", "a positive integer"},
    {"zero_seq_kv", {"--gpu", "gb10", "--seq", "1024", "--seq-kv", "0"}, "'0'", "positive"},
    {"zero_batch", {"--gpu", "h100", "--seq", "1024", "--batch", "0"}, "'0'", "positive"},
    {"negative_heads", {"--gpu", "h200", "--seq", "1024", "--heads=-2"}, "'-2'", "positive"},
    {"head_dim",
     {"--gpu", "gb10", "--seq", "1024", "--head-dim", "48"},
     "'48'",
     "32, 64, 80, 96, 128, 160, 192, 256"},
    {"kv_heads_not_a_divisor",
     {"--gpu", "h200", "--seq", "1024", "--heads", "32", "--kv-heads", "6"},
     "'6'",
     "a divisor of --heads 32 (1, 2, 4, 8, 16, 32)"},
    {"kv_heads_zero", {"--gpu", "h200", "--seq", "1024", "--kv-heads", "0"}, "'0'", "positive"},
    {"causal_align_unknown",
     {"--gpu", "h200", "--seq", "1024", "--causal", "--causal-align", "diagonal"},
     "'diagonal'",
     "top_left, bottom_right"},
    {"bottom_right_without_causal",
     {"--gpu", "h200", "--seq", "1024", "--seq-kv", "4096", "--causal-align", "bottom_right"},
     "--causal-align bottom_right needs --causal",
     "top_left without it"},
    {"dtype", {"--gpu", "gb10", "--seq", "1024", "--dtype", "f32"}, "'f32'", "f16, bf16"},
    {"missing_gpu", {"--seq", "1024"}, "--gpu", "gb10, h100, h200, auto"},
    {"missing_seq", {"--gpu", "gb10"}, "--seq", "a positive integer"},
    {"unknown_option", {"--gpu", "gb10", "--seq", "1024", "--bogus"}, "'--bogus'", "--help"},
    {"config_key",
     {"--gpu", "gb10", "--seq", "1024", "--config", "not-a-key"},
     "'not-a-key'",
     "config key"},
};

// The commands that take a problem, with the options that would make them write files.
struct Command {
  std::string name;
  std::vector<std::string> prefix;  // subcommand, if any
  bool writes_output;               // takes --cache-dir (and --out for compile)
};

const std::vector<Command> kCommands = {
    {"main_job", {}, true},
    {"tune", {"tune"}, true},
    {"space", {"space"}, false},
    {"compile", {"compile"}, true},
};

void expect_usage_error(const ProcessResult& result, const std::string& named_value,
                        const std::string& allowed) {
  ASSERT_NO_FATAL_FAILURE(expect_one_line_usage_error(result, {named_value}));
  const std::string line = lines_of(result.err)[0];
  const auto allowed_at = line.find("allowed");
  ASSERT_NE(allowed_at, std::string::npos) << line;
  EXPECT_NE(line.find(allowed, allowed_at), std::string::npos) << line;
}

TEST(BadInput, EveryCommandRejectsEveryBadValueWithoutWriting) {
  for (const Command& command : kCommands) {
    for (const BadInput& bad : kBadInputs) {
      SCOPED_TRACE(command.name + " / " + bad.name);
      TemporaryDirectory scratch;
      const auto default_cache = scratch.path() / "default-cache";
      const auto cache = scratch.path() / "cache";
      const auto out = scratch.path() / "out";
      std::vector<std::string> arguments = command.prefix;
      arguments.insert(arguments.end(), bad.arguments.begin(), bad.arguments.end());
      if (command.writes_output) {
        arguments.insert(arguments.end(), {"--cache-dir", cache.string()});
      }
      if (command.name == "compile") arguments.insert(arguments.end(), {"--out", out.string()});

      const ProcessResult result =
          run_swr_tune(arguments, {{"SWR_CACHE_DIR", default_cache.string()}});
      expect_usage_error(result, bad.named_value, bad.allowed);
      EXPECT_FALSE(std::filesystem::exists(default_cache));
      EXPECT_FALSE(std::filesystem::exists(cache));
      EXPECT_FALSE(std::filesystem::exists(out));
    }
  }
}

// Arguments nothing takes are named together, in command-line order, whether they stand before
// the subcommand, after it, or both.
TEST(BadInput, UnknownArgumentsAreNamedInCommandLineOrder) {
  const std::string allowed = "': allowed the options `swr-tune [SUBCOMMAND] --help` lists\n";
  for (const auto& [arguments, named] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"show", "--bogus", "x", "--other"}, "--bogus x --other"},
           {{"--zzz", "gpus", "--yy"}, "--zzz --yy"},
           {{"bogus"}, "bogus"}}) {
    const ProcessResult result = run_swr_tune(arguments);
    EXPECT_EQ(result.exit_code, 2) << named;
    EXPECT_EQ(result.err, "swr-tune: error: unknown option or argument '" + named + allowed);
    EXPECT_EQ(result.out, "");
  }
}

TEST(BadInput, CompileOptionsAreCheckedBeforeWriting) {
  TemporaryDirectory scratch;
  const auto cache = scratch.path() / "cache";
  const auto out = scratch.path() / "out";
  const std::vector<std::string> problem = {"--gpu", "gb10", "--seq", "1024"};
  struct Case {
    std::vector<std::string> options;
    std::string named_value;
  };
  const std::vector<Case> cases = {
      {{"--jobs", "0"}, "'0'"},
      {{"--jobs", "many"}, "'many'"},
      {{"--limit=-1"}, "'-1'"},
  };
  for (const std::string& command : {"compile", "tune"}) {
    for (const Case& bad : cases) {
      SCOPED_TRACE(command + std::string(" ") + bad.options.front());
      std::vector<std::string> arguments = {command};
      arguments.insert(arguments.end(), problem.begin(), problem.end());
      arguments.insert(arguments.end(), bad.options.begin(), bad.options.end());
      arguments.insert(arguments.end(), {"--cache-dir", cache.string()});
      if (std::string(command) == "compile")
        arguments.insert(arguments.end(), {"--out", out.string()});
      expect_usage_error(run_swr_tune(arguments), bad.named_value, "positive integer");
      EXPECT_FALSE(std::filesystem::exists(cache));
      EXPECT_FALSE(std::filesystem::exists(out));
    }
  }
}

TEST(BadInput, OutputPathThatIsAFileIsRefused) {
  TemporaryDirectory scratch;
  const auto file = scratch.path() / "a-file";
  { std::ofstream(file) << "x"; }
  const ProcessResult result =
      run_swr_tune({"compile", "--gpu", "gb10", "--seq", "1024", "--out", file.string(),
                    "--cache-dir", (scratch.path() / "cache").string()});
  expect_usage_error(result, "'" + file.string() + "'", "directory");
  EXPECT_FALSE(std::filesystem::exists(scratch.path() / "cache"));
}

TEST(BadInput, BadDeviceOrdinalStopsTheMainJobBeforeCompiling) {
  TemporaryDirectory scratch;
  const auto cache = scratch.path() / "cache";
  const ProcessResult result =
      run_swr_tune({"--gpu", "gb10", "--seq", "1024"},
                   {{"SWR_DEVICE", "second"}, {"SWR_CACHE_DIR", cache.string()}});
  expect_usage_error(result, "'second'", "device ordinal");
  EXPECT_FALSE(std::filesystem::exists(cache));
}

TEST(BadInput, GpuNamesAreCaseInsensitiveButNotFuzzy) {
  TemporaryDirectory scratch;
  EXPECT_EQ(run_swr_tune({"space", "--gpu", "GB10", "--seq", "1024"}).exit_code, 0);
  expect_usage_error(run_swr_tune({"space", "--gpu", "gb1", "--seq", "1024"}), "'gb1'",
                     "gb10, h100, h200, auto");
}

// `query --family gemm`: the GEMM shape and family options, checked before any file is opened
// (the database named does not exist: a message about it would mean the input was not checked).
TEST(BadInput, GemmQueryRejectsEveryBadValue) {
  TemporaryDirectory scratch;
  const std::string missing_db = (scratch.path() / "missing.db").string();
  struct Case {
    std::vector<std::string> arguments;
    std::vector<std::string> said;  // each must be in the message
  };
  const std::vector<Case> cases = {
      {{"--family", "matmul", "--size", "1024"},
       {"'matmul'", "allowed attention, attention-backward, gemm"}},
      {{"--family", "gemm", "--m", "0", "--n", "64", "--k", "64"},
       {"'0'", "allowed a positive integer"}},
      {{"--family", "gemm", "--m", "64", "--n", "wide", "--k", "64"},
       {"'wide'", "allowed a positive integer"}},
      {{"--family", "gemm", "--size=-8"}, {"'-8'", "allowed a positive integer"}},
      {{"--family", "gemm", "--m", "64", "--n", "1001", "--k", "64"}, {"n 1001", "multiple of 8"}},
      {{"--family", "gemm", "--m", "64", "--n", "64", "--k", "12"}, {"k 12", "multiple of 8"}},
      {{"--family", "gemm", "--m", "300000", "--n", "8192", "--k", "8"},
       {"300000 x 8192", "32-bit indexing"}},
      {{"--family", "gemm", "--m", "64", "--n", "64"}, {"missing GEMM size", "allowed --m M"}},
      {{"--family", "gemm", "--size", "64", "--m", "64"}, {"--size and --m/--n/--k", "allowed"}},
      {{"--family", "gemm", "--size", "64", "--dtype", "f32"}, {"'f32'", "allowed f16, bf16"}},
      {{"--family", "gemm", "--size", "64", "--seq", "1024"},
       {"--seq belongs to the attention family", "allowed with --family gemm"}},
      {{"--family", "gemm", "--size", "64", "--causal"}, {"--causal belongs to the attention"}},
      {{"--size", "64"}, {"--size", "allowed with --family gemm"}},
  };
  for (const Case& bad : cases) {
    std::vector<std::string> arguments = {"query", "--gpu", "h200", "--db", missing_db};
    arguments.insert(arguments.end(), bad.arguments.begin(), bad.arguments.end());
    const ProcessResult result = run_swr_tune(arguments);
    SCOPED_TRACE(bad.said.front());
    ASSERT_NO_FATAL_FAILURE(expect_one_line_usage_error(result, bad.said));
  }
  EXPECT_FALSE(std::filesystem::exists(missing_db));
}

// `export --family`: the three family names, a bad one refused naming them before any file is
// opened (the database named does not exist).
TEST(BadInput, ExportFamilyNamesEveryFamily) {
  TemporaryDirectory scratch;
  const std::string missing_db = (scratch.path() / "missing.db").string();
  const std::string out = (scratch.path() / "export").string();
  const ProcessResult result = run_swr_tune(
      {"export", "--family", "backward", "--gpu", "h200", "--db", missing_db, "--out", out});
  ASSERT_NO_FATAL_FAILURE(expect_one_line_usage_error(
      result, {"bad --family 'backward'", "allowed attention, attention-backward, gemm"}));
  EXPECT_FALSE(std::filesystem::exists(missing_db));
  EXPECT_FALSE(std::filesystem::exists(out));
  const ProcessResult help = run_swr_tune({"export", "--help"});
  EXPECT_NE(help.out.find("attention, attention-backward, gemm"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--family attention-backward"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace swr::test
