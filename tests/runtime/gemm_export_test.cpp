// Export of GEMM kernels beside attention ones: the manifest's "gemm_kernels" (schema version 2)
// with every field, one cubin per kernel binary (the swizzle is a launch argument), an export that
// answers as the database does, a version-1 manifest of attention kernels that still loads, a
// real NVRTC-compiled GEMM cubin round trip, and faulty GEMM entries refused naming the field.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "generator/kernel_source.hpp"
#include "generator/resource_model.hpp"
#include "runtime/export_directory.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/runtime/export_directory_test.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

using swr::testing::TemporaryDirectory;

constexpr const char* kGrid = "m128n128k32w2x4s3-grid-swz0";
constexpr const char* kGridBands = "m128n128k32w2x4s3-grid-swzn1792";  // the same binary
constexpr const char* kStatic = "m128n256k64w2x4s3-static-swzm512";
constexpr const char* kAttention = "m128n64w8s2-cyclic-grid-head_major";

class GemmExportTest : public ExportDirectoryTest {
 protected:
  GemmExportTest() : tuned_(directory_.path() / "results.db") {
    tuned_.add(big_, kStatic, 1.0);
    tuned_.add(big_, kGrid, 1.2);
    tuned_.add(tall_, kGridBands, 0.25);
    tuned_.add(square_, kGrid, 0.1);  // shares the binary of tall_'s best
    tuned_.add(bf16_, kGrid, 0.2);    // the same config, another dtype: another binary
    tuned_.add_failure(broken_, kGrid);
    tuned_.add(attention_, kAttention, 3.0);
  }

  ExportSummary export_to(const std::filesystem::path& out, const FakeCubinBuilder& builder,
                          bool allow_changed = false) {
    return export_h200(tuned_.database(), out, builder, allow_changed);
  }
  TunedDatabase tuned_;
  const GemmProblem big_ = gemm_shape(4096, 4096, 4096);
  const GemmProblem tall_ = gemm_shape(8192, 1024, 1024);
  const GemmProblem square_ = gemm_shape(1024, 1024, 1024);
  const GemmProblem bf16_ = gemm_shape(2048, 2048, 2048, DataType::bf16);
  const GemmProblem broken_ = gemm_shape(512, 512, 512);
  const AttentionProblem attention_ = attention_shape(8, 1, 4096, 64);
};

TEST_F(GemmExportTest, WritesTheBestGemmOfEveryTunedShapeBesideAttention) {
  const ExportSummary summary = export_to(out_, FakeCubinBuilder());
  EXPECT_EQ(summary.manifest.kernels.size(), 1u);
  ASSERT_EQ(summary.manifest.gemm_kernels.size(), 4u);  // the all-failed shape has no best
  // Attention, big_'s static binary, the k32 f16 binary (tall_ and square_), the bf16 one.
  EXPECT_EQ(summary.cubin_files, 4u);

  const LoadedExport loaded = load_export(out_);
  EXPECT_EQ(loaded.manifest.schema_version, kManifestLseVersion);
  std::map<std::string, std::string> best_by_shape;
  for (const ExportedGemmKernel& kernel : loaded.manifest.gemm_kernels) {
    best_by_shape[kernel.problem.key()] = kernel.config.key();
    EXPECT_EQ(kernel.gpu, h200_record());
    EXPECT_EQ(kernel.arch, "sm_90a");
    EXPECT_EQ(kernel.entry, "swr_gemm");
    EXPECT_EQ(kernel.block_threads, kernel.config.threads());
    EXPECT_EQ(kernel.dynamic_shared_bytes, gemm_dynamic_shared_bytes(kernel.config));
    EXPECT_EQ(kernel.compiled_source_hash, kernel.measured.source_hash);
    EXPECT_TRUE(std::filesystem::exists(out_ / kernel.cubin_file)) << kernel.cubin_file;
  }
  EXPECT_EQ(best_by_shape[big_.key()], kStatic);
  EXPECT_EQ(best_by_shape[tall_.key()], kGridBands);
  EXPECT_EQ(best_by_shape[square_.key()], kGrid);
  EXPECT_EQ(best_by_shape[bf16_.key()], kGrid);
  EXPECT_EQ(best_by_shape.count(broken_.key()), 0u);
  EXPECT_TRUE(std::filesystem::exists(out_ / "gemm-m128n128k32w2x4s3-grid_f16-sm_90a.cubin"));
  EXPECT_TRUE(std::filesystem::exists(out_ / "gemm-m128n128k32w2x4s3-grid_bf16-sm_90a.cubin"));
  EXPECT_EQ(loaded.cubins.size(), 4u);
}

// The schema of a GEMM entry, as documented.
TEST_F(GemmExportTest, FollowsTheSchema) {
  export_to(out_, FakeCubinBuilder());
  const nlohmann::json json = manifest_json();
  EXPECT_EQ(json.at("schema_version"), 4);  // with an attention kernel: its launch ABI's version
  EXPECT_EQ(json.at("kernels").size(), 1u);
  const nlohmann::json& gemm = json.at("gemm_kernels");
  ASSERT_EQ(gemm.size(), 4u);
  // By shape key: m1024_n1024_k1024_f16, m2048_..._bf16, m4096_..., m8192_...
  const nlohmann::json& square = gemm.at(0);
  EXPECT_EQ(square.at("problem"), (nlohmann::json{{"family", "gemm"},
                                                  {"key", "m1024_n1024_k1024_f16"},
                                                  {"m", 1024},
                                                  {"n", 1024},
                                                  {"k", 1024},
                                                  {"dtype", "f16"}}));
  EXPECT_EQ(square.at("config_key"), kGrid);
  EXPECT_EQ(square.at("config"), gemm_config_named(kGrid).to_json());
  EXPECT_EQ(square.at("entry"), "swr_gemm");
  EXPECT_EQ(square.at("block_threads"), 256);
  EXPECT_EQ(square.at("grid").at("rule"), "grid");
  EXPECT_EQ(square.at("grid").at("ctas"), "tiles");
  EXPECT_EQ(square.at("grid").at("swizzle_group"), 0);
  EXPECT_EQ(square.at("cubin").at("sha256").get<std::string>().size(), 64u);
  EXPECT_TRUE(square.at("measured").at("median_ms").is_number());
  EXPECT_TRUE(square.at("measured").at("method").is_object());
  const nlohmann::json& big = gemm.at(2);
  EXPECT_EQ(big.at("config_key"), kStatic);
  EXPECT_EQ(big.at("grid").at("rule"), "static");
  EXPECT_EQ(big.at("grid").at("ctas"), "min(tiles, blocks_per_sm * sm_count)");
  EXPECT_EQ(big.at("grid").at("swizzle_axis"), 1);   // bands of tile rows
  EXPECT_EQ(big.at("grid").at("swizzle_group"), 4);  // 512 / block_m 128
  EXPECT_EQ(gemm.at(3).at("grid").at("swizzle_axis"), 0);
  EXPECT_EQ(gemm.at(3).at("grid").at("swizzle_group"), 14);  // 1792 / block_n 128
  EXPECT_EQ(manifest_to_json(read_manifest_file(out_ / "manifest.json")), json);  // round trip
}

TEST_F(GemmExportTest, TheExportAnswersAsTheDatabaseDoes) {
  export_to(out_, FakeCubinBuilder());
  const TunedCatalog from_database = TunedCatalog::open_database(tuned_.path());
  const TunedCatalog from_export = TunedCatalog::open(out_);
  for (const GemmProblem& asked :
       {big_, tall_, square_, bf16_, broken_, gemm_shape(3000, 4096, 4104),
        gemm_shape(333, 200, 264), gemm_shape(64, 64, 64, DataType::bf16),
        gemm_shape(16384, 1024, 512)}) {
    const TunedGemmChoice expected = from_database.best("h200", asked);
    const TunedGemmChoice got = from_export.best("h200", asked);
    ASSERT_EQ(got.match, expected.match) << asked.key();
    if (!expected) continue;
    EXPECT_EQ(got.kernel->config_key, expected.kernel->config_key) << asked.key();
    EXPECT_EQ(got.kernel->config, expected.kernel->config) << asked.key();
    EXPECT_EQ(got.kernel->problem, expected.kernel->problem) << asked.key();
    EXPECT_DOUBLE_EQ(got.distance, expected.distance) << asked.key();
    EXPECT_DOUBLE_EQ(got.kernel->measured.median_ms, expected.kernel->measured.median_ms);
    EXPECT_EQ(got.kernel->source_hash, expected.kernel->source_hash);
    EXPECT_EQ(got.kernel->dynamic_shared_bytes, expected.kernel->dynamic_shared_bytes);
  }
  EXPECT_EQ(from_export.best("h200", attention_).kernel->config_key, kAttention);
}

TEST_F(GemmExportTest, RefusesGemmBuildsThatChangedSinceTuning) {
  FakeCubinBuilder builder;
  builder.changed[kStatic] = "edited-gemm-template";
  try {
    export_to(out_, builder);
    FAIL() << "expected a refusal";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("1 of 5"), std::string::npos) << message;
    EXPECT_NE(message.find(big_.key() + " " + kStatic), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(out_));
}

TEST_F(GemmExportTest, AGemmOnlyDatabaseExports) {
  TunedDatabase gemm_only(directory_.path() / "gemm.db");
  gemm_only.add(big_, kGrid, 1.0);
  const ExportSummary summary = export_h200(gemm_only.database(), out_);
  EXPECT_TRUE(summary.manifest.kernels.empty());
  EXPECT_EQ(summary.manifest.gemm_kernels.size(), 1u);
  EXPECT_EQ(manifest_json().at("kernels"), nlohmann::json::array());
  EXPECT_EQ(TunedCatalog::open_export(out_).best("h200", big_).match, MatchKind::exact);
}

// `export --family`: one family's shapes only, and a family with nothing tuned is bad input that
// writes nothing.
TEST_F(GemmExportTest, ExportsOneFamilyWhenAsked) {
  ExportOptions options;
  options.gpu = "h200";
  options.out_dir = out_;
  options.families = {.attention = false, .attention_backward = false, .gemm = true};
  ExportSummary summary = export_kernels(tuned_.database(), FakeCubinBuilder(), options);
  EXPECT_TRUE(summary.manifest.kernels.empty());
  EXPECT_EQ(summary.manifest.gemm_kernels.size(), 4u);

  const std::filesystem::path attention_out = directory_.path() / "attention-export";
  options.out_dir = attention_out;
  options.families = {.attention = true, .attention_backward = false, .gemm = false};
  summary = export_kernels(tuned_.database(), FakeCubinBuilder(), options);
  EXPECT_EQ(summary.manifest.kernels.size(), 1u);
  EXPECT_TRUE(summary.manifest.gemm_kernels.empty());

  TunedDatabase gemm_only(directory_.path() / "gemm.db");
  gemm_only.add(big_, kGrid, 1.0);
  const std::filesystem::path none_out = directory_.path() / "none";
  options.out_dir = none_out;
  try {
    export_kernels(gemm_only.database(), FakeCubinBuilder(), options);
    ADD_FAILURE() << "an attention export of a GEMM-only database was not refused";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("nothing of the attention family"), std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(std::filesystem::exists(none_out));
}

// An export without GEMM kernels is written with the version of its attention kernels' launch
// ABI (3, an empty GEMM list), one of GEMM kernels alone as version 2, which builds before the
// launch-argument block read; a version-1 manifest (no "gemm_kernels") with a GEMM list is refused.
TEST_F(GemmExportTest, ExportsAreWrittenWithTheLowestVersionThatHoldsThem) {
  TunedDatabase attention_only(directory_.path() / "attention.db");
  attention_only.add(attention_, kAttention, 1.0);
  ExportOptions options;
  options.gpu = "h200";
  options.out_dir = out_;
  export_kernels(attention_only.database(), FakeCubinBuilder(), options);
  nlohmann::json json = manifest_json();
  EXPECT_EQ(json.at("schema_version"), 4);
  EXPECT_EQ(json.at("gemm_kernels"), nlohmann::json::array());
  const TunedCatalog catalog = TunedCatalog::open_export(out_);
  EXPECT_EQ(catalog.best("h200", attention_).match, MatchKind::exact);
  EXPECT_EQ(catalog.best("h200", big_).match, MatchKind::none);

  TunedDatabase gemm_only(directory_.path() / "gemm.db");
  gemm_only.add(big_, kStatic, 1.0);
  options.out_dir = directory_.path() / "gemm-export";
  export_kernels(gemm_only.database(), FakeCubinBuilder(), options);
  EXPECT_EQ(read_manifest_file(options.out_dir / "manifest.json").schema_version, 2);

  // A GEMM list in a version-1 manifest is a contradiction, not something to skip.
  json["schema_version"] = 1;
  for (nlohmann::json& kernel : json["kernels"]) {
    kernel["entry"] = kLegacyAttentionEntryName;
    kernel.erase("arguments");
  }
  write_manifest(json);
  EXPECT_NE(refusal().find("gemm_kernels needs schema_version 2"), std::string::npos) << refusal();
}

class CorruptGemmEntryTest : public GemmExportTest,
                             public ::testing::WithParamInterface<ManifestCorruption> {};

TEST_P(CorruptGemmEntryTest, IsRefusedNamingTheField) {
  export_to(out_, FakeCubinBuilder());
  expect_refused(GetParam());
}

// gemm_kernels[2] is big_ (static, swizzle along m), [0] is square_ (grid, no swizzle).
INSTANTIATE_TEST_SUITE_P(
    Fields, CorruptGemmEntryTest,
    ::testing::Values(
        ManifestCorruption{"missing_list", "/gemm_kernels", nullptr, "gemm_kernels is missing"},
        ManifestCorruption{"list_not_array", "/gemm_kernels", "none",
                           "gemm_kernels must be a JSON array"},
        ManifestCorruption{"missing_problem", "/gemm_kernels/0/problem", nullptr,
                           "gemm_kernels[0].problem is missing"},
        ManifestCorruption{"attention_family", "/gemm_kernels/0/problem/family", "attention",
                           "gemm_kernels[0].problem.family is \"attention\""},
        ManifestCorruption{"unaligned_n", "/gemm_kernels/0/problem/n", 1001,
                           "gemm_kernels[0].problem.m and its siblings are not a valid shape"},
        ManifestCorruption{"m_as_text", "/gemm_kernels/0/problem/m", "1024",
                           "gemm_kernels[0].problem.m must be an integer"},
        ManifestCorruption{"key_mismatch", "/gemm_kernels/0/problem/m", 2048,
                           "gemm_kernels[0].problem.key is"},
        ManifestCorruption{"unknown_dtype", "/gemm_kernels/0/problem/dtype", "f32",
                           "gemm_kernels[0].problem.dtype is \"f32\""},
        ManifestCorruption{"bad_config", "/gemm_kernels/2/config/persistence", "forever",
                           "gemm_kernels[2].config is not a GEMM config"},
        ManifestCorruption{"config_mismatch", "/gemm_kernels/2/config_key", kGrid,
                           "gemm_kernels[2].config_key is"},
        ManifestCorruption{"attention_entry", "/gemm_kernels/0/entry", "swr_attention_forward",
                           "gemm_kernels[0].entry is \"swr_attention_forward\""},
        ManifestCorruption{"threads_wrong", "/gemm_kernels/0/block_threads", 128,
                           "gemm_kernels[0].block_threads is \"128\""},
        ManifestCorruption{"shared_too_small", "/gemm_kernels/2/dynamic_shared_bytes", 49152,
                           "gemm_kernels[2].dynamic_shared_bytes is \"49152\""},
        ManifestCorruption{"grid_mismatch", "/gemm_kernels/2/grid/rule", "grid",
                           "gemm_kernels[2].grid.rule is"},
        ManifestCorruption{"swizzle_axis_mismatch", "/gemm_kernels/2/grid/swizzle_axis", 0,
                           "gemm_kernels[2].grid.swizzle_axis is \"0\""},
        ManifestCorruption{"swizzle_group_mismatch", "/gemm_kernels/2/grid/swizzle_group", 8,
                           "gemm_kernels[2].grid.swizzle_group is \"8\""},
        ManifestCorruption{"unknown_arch", "/gemm_kernels/1/arch", "sm_999",
                           "gemm_kernels[1].arch names an unknown arch"},
        ManifestCorruption{"bad_sha", "/gemm_kernels/1/cubin/sha256", "12ab",
                           "gemm_kernels[1].cubin.sha256 must be 64"},
        ManifestCorruption{"escaping_file", "/gemm_kernels/1/cubin/file", "../gemm.cubin",
                           "gemm_kernels[1].cubin.file must be a file name"},
        ManifestCorruption{"failed_status", "/gemm_kernels/3/measured/status", "wrong_result",
                           "gemm_kernels[3].measured.status is \"wrong_result\""},
        ManifestCorruption{"missing_time", "/gemm_kernels/3/measured/median_ms", nullptr,
                           "gemm_kernels[3].measured.median_ms is missing"},
        ManifestCorruption{"bad_gpu", "/gemm_kernels/3/gpu/sm_count", 0,
                           "gemm_kernels[3].gpu.sm_count must be an integer from 1"},
        ManifestCorruption{"newer_schema", "/schema_version", kManifestSchemaVersion + 1,
                           "schema_version 6 is newer"}),
    [](const ::testing::TestParamInfo<ManifestCorruption>& info) {
      return std::string(info.param.name);
    });

TEST_F(GemmExportTest, RefusesAGemmCubinThatDoesNotMatchItsHash) {
  const ExportSummary summary = export_to(out_, FakeCubinBuilder());
  const std::string file = summary.manifest.gemm_kernels.at(2).cubin_file;
  {
    std::fstream cubin(out_ / file, std::ios::in | std::ios::out | std::ios::binary);
    cubin.seekp(6);
    cubin.put('#');
  }
  const std::string message = refusal();
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find("gemm_kernels[2].cubin.sha256"), std::string::npos) << message;
}

// NVRTC compiles the GEMM binary for sm_90a (no GPU needed); the measured build is that one, so
// the export takes it from the cubin cache unchanged and the catalog hands out its very bytes.
TEST(GemmExportWithNvrtc, ExportsARealCubinThatLoadsBack) {
  TemporaryDirectory directory;
  const std::filesystem::path cache = directory.path() / "cubins";
  std::unique_ptr<CubinBuilder> builder;
  try {
    builder = make_nvrtc_cubin_builder(cache);
  } catch (const std::runtime_error& error) {
    GTEST_SKIP() << error.what();
  }
  const GemmProblem shape = gemm_shape(1000, 1016, 264);
  const GemmConfig bands = gemm_config_named("m64n128k32w2x2s3-static-swzn512");
  const BuiltCubin built = builder->build(shape, bands, "sm_90a");
  ASSERT_FALSE(built.from_cache);
  ASSERT_GT(built.cubin.size(), 1000u);
  // A config of the same binary with another swizzle builds the same cubin, from the cache.
  const BuiltCubin plain =
      builder->build(shape, gemm_config_named("m64n128k32w2x2s3-static-swz0"), "sm_90a");
  EXPECT_TRUE(plain.from_cache);
  EXPECT_EQ(plain.source_hash, built.source_hash);

  TunedDatabase tuned(directory.path() / "results.db");
  tuned.add(shape, bands.key(), 0.03, "", built.source_hash);
  ExportOptions options;
  options.gpu = "h200";
  options.out_dir = directory.path() / "export";
  const ExportSummary summary = export_kernels(tuned.database(), *builder, options);
  EXPECT_TRUE(summary.changed_sources.empty());
  EXPECT_EQ(summary.from_cache, 1u);

  const LoadedExport loaded = load_export(options.out_dir);
  ASSERT_EQ(loaded.manifest.gemm_kernels.size(), 1u);
  const ExportedGemmKernel& kernel = loaded.manifest.gemm_kernels[0];
  EXPECT_EQ(kernel.cubin_file, "gemm-m64n128k32w2x2s3-static_f16-sm_90a.cubin");
  EXPECT_EQ(kernel.compiled_source_hash, built.source_hash);
  EXPECT_EQ(kernel.registers, built.registers);
  const std::vector<char>& bytes = *loaded.cubins.at(kernel.cubin_file);
  EXPECT_EQ(bytes, built.cubin);
  EXPECT_EQ(std::string(bytes.data() + 1, 3), "ELF");

  const TunedGemmChoice choice =
      TunedCatalog::open_export(options.out_dir).best("h200", gemm_shape(1024, 1024, 256));
  ASSERT_EQ(choice.match, MatchKind::nearest);
  EXPECT_EQ(choice.kernel->config, bands);
  EXPECT_EQ(choice.kernel->source_hash, built.source_hash);
}

// Builds `config` for sm_90a at 1000x1016x264 bf16, stores it as tuned and exports it for the
// H200 into `directory`/export (options.out_dir). Returns why NVRTC cannot be loaded, else "".
std::string export_one_wgmma_entry(const TemporaryDirectory& directory, const GemmConfig& config,
                                   ExportOptions& options) {
  std::unique_ptr<CubinBuilder> builder;
  try {
    builder = make_nvrtc_cubin_builder(directory.path() / "cubins");
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  const GemmProblem shape = gemm_shape(1000, 1016, 264, DataType::bf16);
  const BuiltCubin built = builder->build(shape, config, "sm_90a");
  TunedDatabase tuned(directory.path() / "results.db");
  tuned.add(shape, config.key(), 0.03, "", built.source_hash);
  options.gpu = "h200";
  options.out_dir = directory.path() / "export";
  export_kernels(tuned.database(), *builder, options);
  return {};
}

// A wgmma entry: its own entry point and argument list, and the three tensor maps to encode for the
// exported shape, each checked when the manifest is read (a changed box is refused by name).
TEST(GemmExportWithNvrtc, AWgmmaEntrySaysHowToBuildItsTensorMaps) {
  TemporaryDirectory directory;
  const GemmConfig wgmma =
      gemm_config_named("wgmma-m128n256k64s3-cooperative-c2x1-static-swzn1024");
  ExportOptions options;
  const std::string no_nvrtc = export_one_wgmma_entry(directory, wgmma, options);
  if (!no_nvrtc.empty()) GTEST_SKIP() << no_nvrtc;

  const LoadedExport loaded = load_export(options.out_dir);
  ASSERT_EQ(loaded.manifest.gemm_kernels.size(), 1u);
  EXPECT_EQ(loaded.manifest.gemm_kernels[0].config, wgmma);
  EXPECT_EQ(loaded.manifest.gemm_kernels[0].block_threads, 384);
  std::ifstream in(options.out_dir / "manifest.json");
  nlohmann::json manifest = nlohmann::json::parse(in);
  nlohmann::json& entry = manifest.at("gemm_kernels").at(0);
  EXPECT_EQ(entry.at("entry"), "swr_gemm_sm90");
  EXPECT_EQ(entry.at("grid").at("tile_counter"), "none (pass null)");
  const nlohmann::json& a = entry.at("tensor_maps").at(0);
  EXPECT_EQ(a.at("operand"), "A");
  EXPECT_EQ(a.at("dims"), nlohmann::json({264, 1000}));
  EXPECT_EQ(a.at("row_stride_bytes"), 528);
  EXPECT_EQ(a.at("box"), nlohmann::json({64, 128}));
  EXPECT_EQ(entry.at("tensor_maps").at(2).at("box"), nlohmann::json({64, 64}))
      << "C: 64 rows per cooperative consumer warpgroup";

  entry["tensor_maps"][1]["box"] = {64, 128};
  std::ofstream(options.out_dir / "manifest.json") << manifest.dump(2);
  try {
    TunedCatalog::open_export(options.out_dir);
    ADD_FAILURE() << "a changed tensor map was accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("tensor_maps"), std::string::npos) << error.what();
  }
}

// A transposed wgmma entry (C^T = B^T A^T): its maps in argument order, B first, A's box as many
// rows as the tile is wide (over two cluster rows), C's box as many rows as the tile is wide; the
// manifest says what to swap, and a manifest that drops that line is refused.
TEST(GemmExportWithNvrtc, ATransposedEntrySaysWhatToSwap) {
  TemporaryDirectory directory;
  const GemmConfig transposed =
      gemm_config_named("wgmma-m128n176k64s4-cooperative-c2x2-transposed-static-swz0");
  ExportOptions options;
  const std::string no_nvrtc = export_one_wgmma_entry(directory, transposed, options);
  if (!no_nvrtc.empty()) GTEST_SKIP() << no_nvrtc;

  EXPECT_EQ(load_export(options.out_dir).manifest.gemm_kernels.at(0).config, transposed);
  std::ifstream in(options.out_dir / "manifest.json");
  nlohmann::json manifest = nlohmann::json::parse(in);
  nlohmann::json& entry = manifest.at("gemm_kernels").at(0);
  const nlohmann::json& maps = entry.at("tensor_maps");
  EXPECT_EQ(maps.at(0).at("operand"), "B");
  EXPECT_EQ(maps.at(0).at("dims"), nlohmann::json({1016, 264}));
  EXPECT_EQ(maps.at(0).at("box"), nlohmann::json({64, 64}));
  EXPECT_EQ(maps.at(1).at("operand"), "A");
  EXPECT_EQ(maps.at(1).at("dims"), nlohmann::json({264, 1000}));
  EXPECT_EQ(maps.at(1).at("box"), nlohmann::json({64, 88}));
  EXPECT_EQ(maps.at(2).at("operand"), "C");
  EXPECT_EQ(maps.at(2).at("box"), nlohmann::json({64, 176}));
  EXPECT_NE(entry.at("product").get<std::string>().find("pass the problem's n as the entry's m"),
            std::string::npos);

  entry.erase("product");
  std::ofstream(options.out_dir / "manifest.json") << manifest.dump(2);
  try {
    TunedCatalog::open_export(options.out_dir);
    ADD_FAILURE() << "a transposed entry without its product line was accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("product"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace swr::test
