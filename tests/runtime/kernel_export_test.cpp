// Export without NVRTC (stand-in cubins): the best variant of every tuned shape, one file per
// variant and compiled part, a manifest that reads back to the same catalog answers, refusal of
// builds that changed since tuning, and the checks on the target directory.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>

#include "generator/kernel_source.hpp"
#include "runtime/export_directory.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

using swr::testing::TemporaryDirectory;

constexpr const char* kGrid = "m128n64w8s2-cyclic-grid-head_major";
constexpr const char* kStatic = "m128n64w8s2-sawtooth-static-head_major";
constexpr const char* kDynamic = "m64n64w4s2-cyclic-dynamic-heads_interleaved";

class KernelExportTest : public ::testing::Test {
 protected:
  KernelExportTest() : tuned_(directory_.path() / "results.db") {
    tuned_.add(a_, kGrid, 1.0);
    tuned_.add(a_, kStatic, 1.1);
    tuned_.add(b_, kGrid, 2.0);  // same variant and compiled part as a_: one cubin file
    tuned_.add(b_, kDynamic, 2.2);
    tuned_.add(c_, kStatic, 0.4);  // causal: another compiled part
    tuned_.add_failure(broken_, kDynamic);
  }

  ExportSummary export_to(const std::filesystem::path& out, const FakeCubinBuilder& builder,
                          bool allow_changed = false) {
    return export_h200(tuned_.database(), out, builder, allow_changed);
  }

  TemporaryDirectory directory_;
  TunedDatabase tuned_;
  const AttentionProblem a_ = attention_shape(8, 1, 16384, 64);
  const AttentionProblem b_ = attention_shape(2, 8, 4096, 64);
  const AttentionProblem c_ = attention_shape(8, 1, 16384, 64, true);
  const AttentionProblem broken_ = attention_shape(1, 1, 512, 128);
  const std::filesystem::path out_ = directory_.path() / "export";
};

TEST_F(KernelExportTest, WritesTheBestVariantOfEveryTunedShape) {
  const ExportSummary summary = export_to(out_, FakeCubinBuilder());
  ASSERT_EQ(summary.manifest.kernels.size(), 3u);  // the all-failed shape has no best
  EXPECT_EQ(summary.cubin_files, 2u);              // a_ and b_ share kGrid at d64 f16
  EXPECT_TRUE(summary.changed_sources.empty());

  const LoadedExport loaded = load_export(out_);
  std::set<std::string> files;
  for (const ExportedKernel& kernel : loaded.manifest.kernels) {
    files.insert(kernel.cubin_file);
    EXPECT_EQ(kernel.arch, "sm_90a");
    EXPECT_EQ(kernel.entry, kAttentionEntryName);
    EXPECT_EQ(kernel.block_threads, kernel.config.threads());
    EXPECT_EQ(kernel.compiled_source_hash, kernel.measured.source_hash);
    EXPECT_EQ(kernel.gpu, h200_record());
    EXPECT_FALSE(kernel.measured.measured_at.empty());
    EXPECT_TRUE(std::filesystem::exists(out_ / kernel.cubin_file)) << kernel.cubin_file;
  }
  EXPECT_EQ(files.size(), 2u);
  EXPECT_TRUE(files.count("m128n64w8s2-cyclic-grid-head_major-d64-f16-noncausal-sm_90a.cubin"));
  EXPECT_EQ(loaded.cubins.size(), 2u);
}

TEST_F(KernelExportTest, TheExportAnswersAsTheDatabaseDoes) {
  export_to(out_, FakeCubinBuilder());
  const TunedCatalog from_database = TunedCatalog::open_database(tuned_.path());
  const TunedCatalog from_export = TunedCatalog::open(out_);
  EXPECT_TRUE(from_export.is_export());
  EXPECT_EQ(from_export.gpu_names(), std::vector<std::string>{"h200"});
  for (const AttentionProblem& asked :
       {a_, b_, c_, attention_shape(8, 1, 20000, 64), attention_shape(1, 16, 2048, 64),
        attention_shape(4, 1, 100000, 64, true), broken_}) {
    const TunedChoice expected = from_database.best("h200", asked);
    const TunedChoice got = from_export.best("h200", asked);
    ASSERT_EQ(got.match, expected.match) << asked.key();
    if (!expected) continue;
    EXPECT_EQ(got.kernel->config_key, expected.kernel->config_key) << asked.key();
    EXPECT_EQ(got.kernel->problem.key(), expected.kernel->problem.key()) << asked.key();
    EXPECT_DOUBLE_EQ(got.distance, expected.distance) << asked.key();
    EXPECT_DOUBLE_EQ(got.kernel->measured.median_ms, expected.kernel->measured.median_ms);
    EXPECT_EQ(got.kernel->source_hash, expected.kernel->source_hash);
    EXPECT_EQ(got.kernel->dynamic_shared_bytes, expected.kernel->dynamic_shared_bytes);
  }
}

TEST_F(KernelExportTest, RefusesBuildsThatChangedSinceTuningAndWritesNothing) {
  FakeCubinBuilder builder;
  builder.changed[kStatic] = "edited-template-hash";
  try {
    export_to(out_, builder);
    FAIL() << "expected a refusal";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("1 of 3"), std::string::npos) << message;
    EXPECT_NE(message.find(kStatic), std::string::npos) << message;
    EXPECT_NE(message.find("--allow-changed-source"), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(out_));

  const ExportSummary summary = export_to(out_, builder, true);
  ASSERT_EQ(summary.changed_sources.size(), 1u);
  for (const ExportedKernel& kernel : load_export(out_).manifest.kernels) {
    if (kernel.config.key() == kStatic) {
      EXPECT_EQ(kernel.compiled_source_hash, "edited-template-hash");
      EXPECT_NE(kernel.measured.source_hash, kernel.compiled_source_hash);
    }
  }
}

TEST_F(KernelExportTest, ChecksTheTargetBeforeCompiling) {
  const std::filesystem::path file = directory_.path() / "file";
  { std::ofstream(file) << "x"; }
  EXPECT_THROW(export_to(file, FakeCubinBuilder()), UsageError);
  const std::filesystem::path busy = directory_.path() / "busy";
  std::filesystem::create_directories(busy);
  { std::ofstream(busy / "notes.txt") << "mine"; }
  EXPECT_THROW(export_to(busy, FakeCubinBuilder()), UsageError);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(busy), {}), 1);
  EXPECT_THROW(export_to(directory_.path() / "no" / "parent", FakeCubinBuilder()), UsageError);
}

TEST_F(KernelExportTest, TakesADirectoryNamedWithATrailingSlash) {
  export_to(out_.string() + "/", FakeCubinBuilder());
  EXPECT_TRUE(std::filesystem::exists(out_ / "manifest.json"));
}

TEST_F(KernelExportTest, ReplacesAnEarlierExportAndRemovesItsStaleCubins) {
  export_to(out_, FakeCubinBuilder());
  const std::string stale = "m128n64w8s2-sawtooth-static-head_major-d64-f16-causal-sm_90a.cubin";
  ASSERT_TRUE(std::filesystem::exists(out_ / stale));
  tuned_.add(c_, kDynamic, 0.2);  // c_ now has another best
  export_to(out_, FakeCubinBuilder());
  EXPECT_FALSE(std::filesystem::exists(out_ / stale));
  EXPECT_EQ(load_export(out_).manifest.kernels.size(), 3u);
}

TEST_F(KernelExportTest, RefusesToReplaceAnotherGpusExportWithoutForce) {
  export_to(out_, FakeCubinBuilder());
  const std::string h200_manifest = [&] {
    std::ifstream in(out_ / "manifest.json");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  db::GpuRecord h100 = h200_record();
  h100.name = "h100";
  h100.device_name = "NVIDIA H100 80GB HBM3";
  TunedDatabase other(directory_.path() / "h100.db", h100);
  other.add(a_, kGrid, 1.3);
  ExportOptions options;
  options.gpu = "h100";
  options.out_dir = out_;
  try {
    export_kernels(other.database(), FakeCubinBuilder(), options);
    FAIL() << "an export for h100 replaced the one for h200";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("holds the export for h200 (3 kernels)"), std::string::npos) << message;
    EXPECT_NE(message.find("pass --force"), std::string::npos) << message;
  }
  std::ifstream in(out_ / "manifest.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), h200_manifest);
  EXPECT_EQ(load_export(out_).manifest.kernels.size(), 3u);  // every cubin still there

  options.replace_other_gpu = true;  // --force
  export_kernels(other.database(), FakeCubinBuilder(), options);
  EXPECT_EQ(load_export(out_).manifest.gpu, "h100");
}

TEST_F(KernelExportTest, NamesTheGpusThereAreForAnUnknownOne) {
  ExportOptions options;
  options.gpu = "gb10";
  options.out_dir = out_;
  try {
    export_kernels(tuned_.database(), FakeCubinBuilder(), options);
    FAIL() << "expected a refusal";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("allowed: h200"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(std::filesystem::exists(out_));
}

}  // namespace
}  // namespace swr::test
