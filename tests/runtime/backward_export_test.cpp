// Export of the attention backward without NVRTC (stand-in cubins): each tuned shape's fastest
// variant and, where that is not deterministic, its fastest deterministic one; an export that
// answers backward lookups as the database does, deterministic dQ included, and hands out its
// cubins; --family attention-backward; builds changed since tuning refused; the version an export
// is written with; and import of an export's backward measurements.
#include <gtest/gtest.h>

#include <set>

#include "db/records.hpp"
#include "runtime/catalog_source.hpp"
#include "runtime/import_sources.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/swr.h"
#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"
#include "tests/runtime/backward_export_fixture.hpp"

namespace swr::test {
namespace {

TEST_F(BackwardExportTest, WritesTheFastestAndTheFastestDeterministicVariantOfEachShape) {
  const ExportSummary summary = export_all();
  EXPECT_TRUE(summary.changed_sources.empty());
  ASSERT_EQ(summary.manifest.kernels.size(), 1u);
  std::vector<std::pair<std::string, std::string>> entries;
  for (const ExportedBackwardKernel& kernel : summary.manifest.backward_kernels) {
    entries.emplace_back(kernel.problem.key(), kernel.config.key());
    EXPECT_EQ(kernel.entry, "swr_attention_backward_v1");
    EXPECT_EQ(kernel.block_threads, kernel.config.threads());
    EXPECT_EQ(kernel.compiled_source_hash, kernel.measured.source_hash);
    EXPECT_EQ(kernel.gpu, h200_record());
    EXPECT_EQ(kernel.cubin_file.rfind("bwd-", 0), 0u) << kernel.cubin_file;
    EXPECT_TRUE(std::filesystem::exists(out_ / kernel.cubin_file)) << kernel.cubin_file;
  }
  const std::vector<std::pair<std::string, std::string>> expected = {
      {deterministic_fastest_.key(), kBackwardDeterministic},  // deterministic already: alone
      {causal_.key(), kBackwardSawtooth},
      {causal_.key(), kBackwardDeterministicSlow},  // the faster -det's newest run failed
      {warp_specialized_.key(), kBackwardWarpSpecialized},
      {atomic_only_.key(), kBackwardCyclic},  // no deterministic variant measured
  };
  EXPECT_EQ(entries, expected);
  // Five backward modules of five (variant, compiled part) pairs, and the forward's.
  EXPECT_EQ(summary.cubin_files, 6u);
  EXPECT_TRUE(std::filesystem::exists(
      out_ / "bwd-m64n128w8s2-sawtooth-grid-head_major-d128-f16-causal-sm_90a.cubin"));
  EXPECT_TRUE(std::filesystem::exists(
      out_ / "m128n64w8s2-cyclic-grid-head_major-d128-f16-causal-sm_90a.cubin"));
  EXPECT_EQ(load_export(out_).manifest.schema_version, kManifestBackwardVersion);
}

TEST_F(BackwardExportTest, TheExportAnswersAsTheDatabaseDoes) {
  export_all();
  const TunedCatalog from_database = TunedCatalog::open_database(tuned_.path());
  const TunedCatalog from_export = TunedCatalog::open(out_);
  const std::vector<AttentionBackwardProblem> asked = {
      causal_,
      atomic_only_,
      deterministic_fastest_,
      warp_specialized_,
      AttentionBackwardProblem{attention_shape(2, 16, 6000, 128, true)},  // nearest: causal_
      AttentionBackwardProblem{attention_shape(4, 8, 1500, 64, true)},    // nearest: atomic only
      AttentionBackwardProblem{attention_shape(2, 16, 9000, 128)},
      AttentionBackwardProblem{attention_shape(1, 4, 1024, 128)},
      AttentionBackwardProblem{attention_shape(2, 16, 4096, 96, true)},  // nothing compiled for it
  };
  int exact = 0, nearest = 0, none = 0;
  for (const DqRequirement dq : {DqRequirement::any, DqRequirement::deterministic}) {
    for (const AttentionBackwardProblem& problem : asked) {
      const TunedBackwardChoice expected = from_database.best("h200", problem, dq);
      const TunedBackwardChoice got = from_export.best("h200", problem, dq);
      SCOPED_TRACE(problem.key() + (dq == DqRequirement::any ? " any" : " deterministic"));
      ASSERT_EQ(got.match, expected.match) << got.why_none << " / " << expected.why_none;
      exact += got.match == MatchKind::exact;
      nearest += got.match == MatchKind::nearest;
      none += got.match == MatchKind::none;
      if (!expected) continue;
      EXPECT_EQ(got.kernel->config_key, expected.kernel->config_key);
      EXPECT_EQ(got.kernel->config, expected.kernel->config);
      EXPECT_EQ(got.kernel->problem, expected.kernel->problem);
      EXPECT_DOUBLE_EQ(got.distance, expected.distance);
      EXPECT_DOUBLE_EQ(got.kernel->measured.median_ms, expected.kernel->measured.median_ms);
      EXPECT_EQ(got.kernel->source_hash, expected.kernel->source_hash);
      EXPECT_EQ(got.kernel->dynamic_shared_bytes, expected.kernel->dynamic_shared_bytes);
    }
  }
  // Every kind of answer was compared.
  EXPECT_GT(exact, 0);
  EXPECT_GT(nearest, 0);
  EXPECT_GT(none, 0);
  EXPECT_EQ(from_export.best("h200", causal_, DqRequirement::deterministic).kernel->config_key,
            kBackwardDeterministicSlow);
  EXPECT_EQ(from_export.best("h200", causal_).kernel->config_key, kBackwardSawtooth);
  EXPECT_EQ(from_export.best("h200", causal_.shape).kernel->config_key, kForwardOfBackwardShape);
}

TEST_F(BackwardExportTest, RefusesDeterministicDqWhereOnlyAtomicVariantsWereExported) {
  export_all();
  const TunedCatalog catalog = TunedCatalog::open_export(out_);
  EXPECT_EQ(catalog.best("h200", atomic_only_).match, MatchKind::exact);
  const TunedBackwardChoice refused =
      catalog.best("h200", atomic_only_, DqRequirement::deterministic);
  EXPECT_EQ(refused.match, MatchKind::none);
  EXPECT_NE(refused.why_none.find("deterministic dQ was asked for"), std::string::npos)
      << refused.why_none;
  EXPECT_NE(refused.why_none.find("an export carries a shape's fastest deterministic variant"),
            std::string::npos)
      << refused.why_none;
  // A shape near it takes it as its nearest, and is refused alike.
  const AttentionBackwardProblem near{attention_shape(4, 8, 1500, 64, true)};
  EXPECT_EQ(catalog.best("h200", near).match, MatchKind::nearest);
  EXPECT_EQ(catalog.best("h200", near, DqRequirement::deterministic).match, MatchKind::none);
}

TEST_F(BackwardExportTest, HandsOutTheExportedModuleOfEachBackwardKernel) {
  const ExportSummary summary = export_all();
  const std::unique_ptr<CatalogSource> source = open_export_source(out_);
  const LoadedExport loaded = load_export(out_);
  for (const DqRequirement dq : {DqRequirement::any, DqRequirement::deterministic}) {
    const std::shared_ptr<const TunedAttentionBackwardKernel> kernel =
        source->exact("h200", causal_, dq);
    ASSERT_TRUE(kernel);
    const std::shared_ptr<const std::vector<char>> cubin = source->exported_cubin(*kernel);
    ASSERT_TRUE(cubin);
    const std::string file = exported_cubin_name(causal_, kernel->config, "sm_90a");
    EXPECT_EQ(*cubin, *loaded.cubins.at(file));
    EXPECT_EQ(kernel->arch, "sm_90a");
    EXPECT_EQ(kernel->source_hash, fake_source_hash(causal_, kernel->config, "sm_90a"));
  }
  EXPECT_TRUE(source->holds_backward_kernels());
}

// What swr.Catalog(export_dir) and C programs ask: the C API's backward answer from the export.
TEST_F(BackwardExportTest, TheCApiAnswersTheBackwardFromTheExport) {
  export_all();
  swr_catalog* catalog = nullptr;
  ASSERT_EQ(swr_catalog_open(out_.c_str(), &catalog), SWR_OK) << swr_last_error();
  const swr_attention_problem_v2 problem{
      sizeof(swr_attention_problem_v2), 2, 16, 0, 4096, 4096, 128, "f16", 1, SWR_CAUSAL_TOP_LEFT};
  for (const auto& [flags, expected] :
       {std::pair{0u, kBackwardSawtooth},
        std::pair{unsigned{SWR_BACKWARD_DETERMINISTIC}, kBackwardDeterministicSlow}}) {
    char* text = nullptr;
    ASSERT_EQ(swr_best_attention_backward(catalog, "h200", &problem, flags, &text), SWR_OK)
        << swr_last_error();
    const nlohmann::json answer = nlohmann::json::parse(text);
    swr_string_free(text);
    EXPECT_EQ(answer.at("family"), "attention-backward");
    EXPECT_EQ(answer.at("match"), "exact");
    EXPECT_EQ(answer.at("kernel").at("config_key"), expected);
  }
  swr_catalog_close(catalog);
}

TEST_F(BackwardExportTest, ExportsTheBackwardAloneWhenAsked) {
  ExportOptions options;
  options.gpu = "h200";
  options.out_dir = out_;
  options.families = {.attention = false, .attention_backward = true, .gemm = false};
  const ExportSummary summary = export_kernels(tuned_.database(), FakeCubinBuilder(), options);
  EXPECT_TRUE(summary.manifest.kernels.empty());
  EXPECT_TRUE(summary.manifest.gemm_kernels.empty());
  EXPECT_EQ(summary.manifest.backward_kernels.size(), 5u);
  // A backward-only export: version 5, with the lists it does not use empty.
  const nlohmann::json json = manifest_json();
  EXPECT_EQ(json.at("schema_version"), 5);
  EXPECT_EQ(json.at("kernels"), nlohmann::json::array());
  EXPECT_EQ(json.at("gemm_kernels"), nlohmann::json::array());
  const TunedCatalog catalog = TunedCatalog::open_export(out_);
  EXPECT_EQ(catalog.best("h200", causal_).match, MatchKind::exact);
  EXPECT_EQ(catalog.best("h200", causal_.shape).match, MatchKind::none);

  // The forward family alone leaves the backward out, and the catalog says why it has none.
  options.out_dir = directory_.path() / "forward-export";
  options.families = {.attention = true, .attention_backward = false, .gemm = false};
  export_kernels(tuned_.database(), FakeCubinBuilder(), options);
  const TunedBackwardChoice none = TunedCatalog::open_export(options.out_dir).best("h200", causal_);
  EXPECT_EQ(none.match, MatchKind::none);
  EXPECT_NE(none.why_none.find("holds no backward kernels"), std::string::npos) << none.why_none;

  // A database without backward measurements has nothing of the family: bad input, nothing written.
  TunedDatabase forward_only(directory_.path() / "forward.db");
  forward_only.add(causal_.shape, kForwardOfBackwardShape, 1.0);
  options.out_dir = directory_.path() / "none";
  options.families = {.attention = false, .attention_backward = true, .gemm = false};
  try {
    export_kernels(forward_only.database(), FakeCubinBuilder(), options);
    ADD_FAILURE() << "a backward export of a forward-only database was not refused";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("nothing of the attention-backward family"),
              std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(std::filesystem::exists(options.out_dir));
}

TEST_F(BackwardExportTest, RefusesBackwardBuildsThatChangedSinceTuning) {
  FakeCubinBuilder builder;
  builder.changed[kBackwardDeterministicSlow] = "edited-backward-template";
  try {
    export_all(builder);
    FAIL() << "expected a refusal";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("1 of 6"), std::string::npos) << message;
    EXPECT_NE(message.find(causal_.key() + " " + kBackwardDeterministicSlow), std::string::npos)
        << message;
    EXPECT_NE(message.find("--allow-changed-source"), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(out_));

  const ExportSummary summary = export_all(builder, true);
  ASSERT_EQ(summary.changed_sources.size(), 1u);
  const LoadedExport loaded = load_export(out_);
  const ExportedBackwardKernel& changed = loaded.manifest.backward_kernels.at(2);
  EXPECT_EQ(changed.config.key(), kBackwardDeterministicSlow);
  EXPECT_EQ(changed.compiled_source_hash, "edited-backward-template");
  EXPECT_NE(changed.measured.source_hash, changed.compiled_source_hash);
}

// An export without backward modules keeps the version of its forward kernels (4), which builds
// before version 5 read; one with them is version 5.
TEST_F(BackwardExportTest, IsWrittenWithTheLowestVersionThatHoldsIt) {
  export_all();
  EXPECT_EQ(manifest_json().at("schema_version"), 5);
  TunedDatabase forward_only(directory_.path() / "forward.db");
  forward_only.add(causal_.shape, kForwardOfBackwardShape, 1.0);
  const std::filesystem::path forward_out = directory_.path() / "forward-export";
  export_h200(forward_only.database(), forward_out);
  std::ifstream in(forward_out / "manifest.json");
  const nlohmann::json forward = nlohmann::json::parse(in);
  EXPECT_EQ(forward.at("schema_version"), kManifestLseVersion);
  EXPECT_FALSE(forward.contains("backward_kernels"));
}

TEST_F(BackwardExportTest, AnImportOfTheExportCarriesItsBackwardMeasurements) {
  export_all();
  TunedDatabase merged(directory_.path() / "merged.db");
  const ImportSource source = read_import_source(out_, merged.path());
  std::multiset<std::string> families;
  for (const db::PortableMeasurement& measurement : source.measurements) {
    families.insert(db::family_of(measurement));
  }
  EXPECT_EQ(families.count("attention-backward"), 5u);
  EXPECT_EQ(families.count("attention"), 1u);
  EXPECT_EQ(merged.database().import_measurements(source.measurements).added, 6u);

  // The merged database answers the backward as the one it was tuned into, deterministic too.
  const TunedCatalog catalog = TunedCatalog::open_database(merged.path());
  EXPECT_EQ(catalog.best("h200", causal_).kernel->config_key, kBackwardSawtooth);
  EXPECT_EQ(catalog.best("h200", causal_, DqRequirement::deterministic).kernel->config_key,
            kBackwardDeterministicSlow);
  EXPECT_EQ(catalog.best("h200", warp_specialized_).kernel->config_key, kBackwardWarpSpecialized);
  // Back into the database it came from: every one is there already.
  EXPECT_EQ(tuned_.database().import_measurements(source.measurements).added, 0u);
}

}  // namespace
}  // namespace swr::test
