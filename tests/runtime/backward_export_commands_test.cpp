// `swr-tune export` and `import` of the attention backward as a user runs them, on a module NVRTC
// really compiles for sm_90a (no GPU needed): the measured build is the one the export finds in
// the cubin cache, so the export holds its very bytes, and the catalog and import read it back.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_swr_tune.hpp"
#include "runtime/catalog_source.hpp"
#include "runtime/export_directory.hpp"
#include "swr/tuned_catalog.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

using swr::testing::TemporaryDirectory;

constexpr const char* kConfig = "bwd-m64n64w4s2-cyclic-grid-head_major";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class BackwardExportCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      builder_ = make_nvrtc_cubin_builder(cache_);
    } catch (const std::runtime_error& error) {
      GTEST_SKIP() << error.what();
    }
    built_ = builder_->build(shape_, backward_config_named(kConfig), "sm_90a");
  }

  // `swr-tune export --gpu h200 --db DB --out OUT --cache-dir CACHE` and `more`.
  ProcessResult export_to(const std::filesystem::path& database, const std::filesystem::path& out,
                          const std::vector<std::string>& more = {}) const {
    std::vector<std::string> arguments = {"export",     "--gpu",           "h200",
                                          "--db",       database.string(), "--out",
                                          out.string(), "--cache-dir",     cache_.string()};
    arguments.insert(arguments.end(), more.begin(), more.end());
    return run_swr_tune(arguments);
  }

  TemporaryDirectory directory_;
  const std::filesystem::path cache_ = directory_.path() / "cubins";
  const AttentionBackwardProblem shape_{attention_shape(2, 4, 1024, 64)};
  std::unique_ptr<CubinBuilder> builder_;
  BuiltCubin built_;
};

TEST_F(BackwardExportCommands, ExportsARealModuleThatTheCatalogAndImportRead) {
  TunedDatabase real(directory_.path() / "real.db");
  real.add(shape_, kConfig, 0.04, "", built_.source_hash);

  const std::filesystem::path out = directory_.path() / "backward-export";
  ProcessResult result = export_to(real.path(), out, {"--family", "attention-backward"});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(contains(result.out, shape_.key() + "  " + kConfig)) << result.out;
  EXPECT_TRUE(contains(result.out,
                       "exported 1 shapes (0 attention, 1 attention-backward, 0 GEMM; 1 cubins, "
                       "1 from the cubin cache)"))
      << result.out;
  const nlohmann::json manifest = nlohmann::json::parse(std::ifstream(out / "manifest.json"));
  EXPECT_EQ(manifest.at("schema_version"), 5);
  const nlohmann::json& entry = manifest.at("backward_kernels").at(0);
  EXPECT_EQ(entry.at("compiled_source_hash"), built_.source_hash);
  EXPECT_EQ(entry.at("cubin").at("bytes"), built_.cubin.size());
  EXPECT_EQ(entry.at("cubin").at("file"),
            "bwd-m64n64w4s2-cyclic-grid-head_major-d64-f16-noncausal-sm_90a.cubin");
  EXPECT_EQ(entry.at("launch_sequence").size(), 3u);

  // The catalog of the export answers a nearby shape and hands out the compiled module itself.
  const std::unique_ptr<CatalogSource> source = open_export_source(out);
  const TunedBackwardChoice choice = TunedCatalog::open_export(out).best(
      "h200", AttentionBackwardProblem{attention_shape(2, 4, 1500, 64)});
  ASSERT_EQ(choice.match, MatchKind::nearest) << choice.why_none;
  EXPECT_EQ(choice.kernel->config_key, kConfig);
  const auto kernel = source->exact("h200", shape_, DqRequirement::any);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(*source->exported_cubin(*kernel), built_.cubin);

  // Without --family the backward is exported too; --family attention finds nothing: exit 2.
  const std::filesystem::path all_out = directory_.path() / "all-export";
  result = export_to(real.path(), all_out);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(contains(result.out, "(0 attention, 1 attention-backward, 0 GEMM;")) << result.out;
  const std::filesystem::path attention_out = directory_.path() / "attention-export";
  result = export_to(real.path(), attention_out, {"--family", "attention"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "nothing of the attention family tuned on it")) << result.err;
  EXPECT_FALSE(std::filesystem::exists(attention_out));

  // Import of the export: its backward measurement arrives, and the merged database answers.
  const std::filesystem::path merged = directory_.path() / "merged.db";
  result = run_swr_tune({"import", "--db", merged.string(), out.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "(export): 1 measurements, 1 added")) << result.out;
  const TunedBackwardChoice imported = TunedCatalog::open_database(merged).best("h200", shape_);
  ASSERT_EQ(imported.match, MatchKind::exact) << imported.why_none;
  EXPECT_EQ(imported.kernel->config_key, kConfig);
  EXPECT_EQ(imported.kernel->source_hash, built_.source_hash);
}

// A backward variant measured with another build than this one compiles is refused as the others
// are, writing nothing, and exported with --allow-changed-source and a warning.
TEST_F(BackwardExportCommands, AChangedBuildNeedsAllowChangedSource) {
  TunedDatabase old_build(directory_.path() / "old.db");
  old_build.add(shape_, kConfig, 0.04, "", "measured-with-an-older-template");
  const std::filesystem::path out = directory_.path() / "export";
  ProcessResult result = export_to(old_build.path(), out);
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_TRUE(contains(result.err, shape_.key() + " " + kConfig)) << result.err;
  EXPECT_TRUE(contains(result.err, "--allow-changed-source")) << result.err;
  EXPECT_FALSE(std::filesystem::exists(out));

  result = export_to(old_build.path(), out, {"--allow-changed-source"});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(contains(result.err, "was measured with another build")) << result.err;
  const ExportManifest manifest = read_manifest_file(out / "manifest.json");
  ASSERT_EQ(manifest.backward_kernels.size(), 1u);
  EXPECT_EQ(manifest.backward_kernels[0].compiled_source_hash, built_.source_hash);
  EXPECT_EQ(manifest.backward_kernels[0].measured.source_hash, "measured-with-an-older-template");
}

}  // namespace
}  // namespace swr::test
