// manifest.json: the round trip and its schema, and the faulty manifests and cubins that must be
// refused with the field or file named and nothing loaded.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "generator/kernel_source.hpp"
#include "runtime/catalog_source.hpp"
#include "runtime/export_directory.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/runtime_options.hpp"
#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/runtime/export_directory_test.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

using swr::testing::TemporaryDirectory;

class ExportManifestTest : public ExportDirectoryTest {
 protected:
  ExportManifestTest() {
    TunedDatabase tuned(directory_.path() / "results.db");
    tuned.add(attention_shape(8, 1, 16384, 64), "m128n64w8s2-sawtooth-static-head_major", 1.5);
    tuned.add(attention_shape(2, 4, 2048, 128, true, DataType::bf16),
              "m64n64w4s2-cyclic-dynamic-heads_interleaved", 0.25);
    summary_ = export_h200(tuned.database(), out_);
    manifest_json_written_ = manifest_json();
  }

  ExportSummary summary_;
  nlohmann::json manifest_json_written_;
};

TEST_F(ExportManifestTest, ReadsBackWhatWasWritten) {
  const ExportManifest read = read_manifest_file(out_ / "manifest.json");
  const ExportManifest& written = summary_.manifest;
  // Attention kernels take the launch-argument block: the version that says so.
  EXPECT_EQ(read.schema_version, kManifestLseVersion);
  EXPECT_EQ(read.swr_version, SWR_VERSION);
  EXPECT_EQ(read.created_at, written.created_at);
  EXPECT_EQ(read.gpu, "h200");
  ASSERT_EQ(read.kernels.size(), written.kernels.size());
  for (std::size_t i = 0; i < read.kernels.size(); ++i) {
    const ExportedKernel& a = read.kernels[i];
    const ExportedKernel& b = written.kernels[i];
    expect_same_kernel_base(a, b);
    EXPECT_EQ(a.problem.key(), b.problem.key());
    EXPECT_EQ(a.config, b.config);
  }
  EXPECT_EQ(manifest_to_json(read), manifest_json());  // and writes back to the same bytes
}

// The schema as documented: every field, with its type.
TEST_F(ExportManifestTest, FollowsTheSchema) {
  const nlohmann::json json = manifest_json();
  EXPECT_EQ(json.at("format"), "swr-kernel-export");
  EXPECT_EQ(json.at("schema_version"), 4);
  EXPECT_TRUE(json.at("created_at").is_string());
  const nlohmann::json& kernel = json.at("kernels").at(0);
  for (const char* field : {"gpu", "problem", "config", "grid", "cubin", "measured"}) {
    EXPECT_TRUE(kernel.at(field).is_object()) << field;
  }
  for (const char* field :
       {"config_key", "entry", "arch", "compiled_source_hash", "toolkit_version"}) {
    EXPECT_TRUE(kernel.at(field).is_string()) << field;
  }
  for (const char* field : {"block_threads", "dynamic_shared_bytes"}) {
    EXPECT_TRUE(kernel.at(field).is_number_integer()) << field;
  }
  EXPECT_EQ(kernel.at("entry"), "swr_attention_forward_v3");
  EXPECT_EQ(kernel.at("arguments"), kAttentionArguments);
  // Shape keys sort b2_h4... first: its best is the dynamic variant, then the static one.
  EXPECT_EQ(kernel.at("grid").at("rule"), "dynamic");
  EXPECT_EQ(kernel.at("grid").at("tile_counter"), "one int, zeroed before each launch");
  EXPECT_EQ(json.at("kernels").at(1).at("grid").at("rule"), "static");
  EXPECT_EQ(kernel.at("problem").at("family"), "attention");
  for (const char* field : {"name", "arch", "device_name", "driver_version", "cuda_version"}) {
    EXPECT_TRUE(kernel.at("gpu").at(field).is_string()) << field;
  }
  EXPECT_EQ(kernel.at("cubin").at("sha256").get<std::string>().size(), 64u);
  EXPECT_TRUE(kernel.at("cubin").at("bytes").is_number_integer());
  const nlohmann::json& measured = kernel.at("measured");
  for (const char* field : {"median_ms", "p95_ms", "min_ms", "tflops", "l2_hit_rate"}) {
    EXPECT_TRUE(measured.at(field).is_number()) << field;
  }
  for (const char* field : {"dram_read_bytes", "relative_error"}) {
    EXPECT_TRUE(measured.at(field).is_null()) << field;  // not measured: present as null
  }
  EXPECT_TRUE(measured.at("method").is_object());
}

class CorruptManifestTest : public ExportManifestTest,
                            public ::testing::WithParamInterface<ManifestCorruption> {};

TEST_P(CorruptManifestTest, IsRefusedNamingTheField) {
  expect_refused(GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Fields, CorruptManifestTest,
    ::testing::Values(
        ManifestCorruption{"missing_arch", "/kernels/0/arch", nullptr,
                           "kernels[0].arch is missing"},
        ManifestCorruption{"missing_measured", "/kernels/1/measured", nullptr,
                           "kernels[1].measured is missing"},
        ManifestCorruption{"missing_sha", "/kernels/0/cubin/sha256", nullptr,
                           "kernels[0].cubin.sha256 is missing"},
        ManifestCorruption{"threads_as_text", "/kernels/0/block_threads", "256",
                           "kernels[0].block_threads must be an integer"},
        ManifestCorruption{"threads_wrong", "/kernels/0/block_threads", 512,
                           "kernels[0].block_threads is \"512\""},
        ManifestCorruption{"shared_bytes_too_few", "/kernels/0/dynamic_shared_bytes", 1,
                           "kernels[0].dynamic_shared_bytes is \"1\" but the problem's head dim"},
        ManifestCorruption{"shared_bytes_too_many", "/kernels/1/dynamic_shared_bytes", 1 << 30,
                           "kernels[1].dynamic_shared_bytes is \"1073741824\""},
        ManifestCorruption{"unknown_arch", "/kernels/0/arch", "sm_999",
                           "kernels[0].arch names an unknown arch"},
        ManifestCorruption{"not_an_arch", "/kernels/1/gpu/arch", "compute_90",
                           "kernels[1].gpu.arch names an unknown arch"},
        ManifestCorruption{"bad_sha", "/kernels/0/cubin/sha256", "12ab",
                           "kernels[0].cubin.sha256 must be 64"},
        ManifestCorruption{"escaping_file", "/kernels/0/cubin/file", "../x.cubin",
                           "kernels[0].cubin.file must be a file name"},
        ManifestCorruption{"negative_time", "/kernels/0/measured/median_ms", -1.0,
                           "kernels[0].measured.median_ms must be a positive number"},
        ManifestCorruption{"time_as_text", "/kernels/1/measured/p95_ms", "fast",
                           "kernels[1].measured.p95_ms must be a number or null"},
        ManifestCorruption{"hit_rate_percent", "/kernels/0/measured/l2_hit_rate", 55.0,
                           "kernels[0].measured.l2_hit_rate must be a fraction"},
        ManifestCorruption{"bad_time", "/kernels/0/measured/measured_at", "yesterday",
                           "kernels[0].measured.measured_at must be UTC"},
        ManifestCorruption{"failed_status", "/kernels/0/measured/status", "fault",
                           "kernels[0].measured.status is \"fault\""},
        ManifestCorruption{"unknown_dtype", "/kernels/0/problem/dtype", "f32",
                           "kernels[0].problem.dtype is \"f32\""},
        ManifestCorruption{"gemm_family", "/kernels/0/problem/family", "gemm",
                           "kernels[0].problem.family is \"gemm\""},
        ManifestCorruption{"key_mismatch", "/kernels/0/problem/seq_q", 16000,
                           "kernels[0].problem.key is"},
        ManifestCorruption{"config_mismatch", "/kernels/0/config_key",
                           "m64n64w4s3-cyclic-grid-head_major", "kernels[0].config_key is"},
        ManifestCorruption{"bad_config", "/kernels/0/config/order", "backwards",
                           "kernels[0].config is not a config"},
        ManifestCorruption{"grid_mismatch", "/kernels/0/grid/rule", "grid",
                           "kernels[0].grid.rule is"},
        ManifestCorruption{"unknown_entry", "/kernels/0/entry", "main",
                           "kernels[0].entry is \"main\""},
        ManifestCorruption{"newer_schema", "/schema_version", kManifestSchemaVersion + 1,
                           "schema_version 6 is newer"},
        ManifestCorruption{"older_version_other_entry", "/schema_version", 2,
                           "kernels[0].entry is \"swr_attention_forward_v3\" but every kernel of "
                           "its family has the entry \"swr_attention_forward\""},
        ManifestCorruption{"other_arguments", "/kernels/0/arguments", "q, k, v, o",
                           "kernels[0].arguments is \"q, k, v, o\""},
        ManifestCorruption{"kv_heads_not_a_divisor", "/kernels/0/problem/kv_heads", 3,
                           "kernels[0].problem.head_dim and its siblings are not a valid shape: "
                           "kv_heads 3 does not divide heads 4"},
        ManifestCorruption{"kv_heads_not_in_key", "/kernels/0/problem/kv_heads", 2,
                           "kernels[0].problem.key is \"b2_h4_sq2048"},
        ManifestCorruption{"kv_heads_as_text", "/kernels/0/problem/kv_heads", "2",
                           "kernels[0].problem.kv_heads must be an integer"},
        ManifestCorruption{"unknown_alignment", "/kernels/0/problem/causal_align", "diagonal",
                           "kernels[0].problem.causal_align is \"diagonal\""},
        ManifestCorruption{"wrong_format", "/format", "something-else",
                           "format is \"something-else\""},
        ManifestCorruption{"no_kernels", "/kernels", nlohmann::json::array(),
                           "kernels and gemm_kernels list no kernel"},
        ManifestCorruption{"kernel_not_object", "/kernels/0", 7,
                           "kernels[0] must be a JSON object"},
        ManifestCorruption{"gpu_not_object", "/kernels/0/gpu", "h200",
                           "kernels[0].gpu must be a JSON object"}),
    [](const ::testing::TestParamInfo<ManifestCorruption>& info) {
      return std::string(info.param.name);
    });

// An export written before the launch-argument block (manifest version 1 or 2, entry
// "swr_attention_forward") still opens, for its lookups and its measurements (import), but its
// cubins are never launched: their kernels take another argument list.
TEST_F(ExportManifestTest, AnOlderLaunchAbiIsReadButNeverLaunched) {
  nlohmann::json json = manifest_json();
  json["schema_version"] = 1;
  json.erase("gemm_kernels");
  for (nlohmann::json& kernel : json["kernels"]) {
    kernel["entry"] = "swr_attention_forward";
    kernel.erase("arguments");
  }
  write_manifest(json);
  EXPECT_EQ(refusal(), "");
  const ExportManifest read = read_manifest_file(out_ / "manifest.json");
  EXPECT_EQ(read.kernels.at(0).entry, kLegacyAttentionEntryName);
  const std::unique_ptr<CatalogSource> source = open_export_source(out_);
  const AttentionProblem shape = attention_shape(8, 1, 16384, 64);
  const std::shared_ptr<const TunedKernel> kernel = source->exact("h200", shape);
  ASSERT_TRUE(kernel);
  try {
    source->exported_cubin(*kernel);
    ADD_FAILURE() << "an older launch ABI's cubin was handed out";
  } catch (const KernelRefused& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("entry \"swr_attention_forward\", manifest version 1"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("export it again with this build"), std::string::npos) << message;
  }
  // This build's own export hands its cubins out.
  write_manifest(manifest_json_written_);
  const std::unique_ptr<CatalogSource> current = open_export_source(out_);
  EXPECT_TRUE(current->exported_cubin(*current->exact("h200", shape)));
}

// An export of manifest version 3 (entry "swr_attention_forward_v2", the launch-argument block
// without the log-sum-exp) still launches, for inference: its cubins are handed out.
TEST_F(ExportManifestTest, AnExportWithoutTheLogSumExpStillLaunches) {
  nlohmann::json json = manifest_json();
  json["schema_version"] = 3;
  for (nlohmann::json& kernel : json["kernels"]) {
    kernel["entry"] = kAttentionEntryWithoutLse;
    kernel["arguments"] = kAttentionArgumentsWithoutLse;
  }
  write_manifest(json);
  EXPECT_EQ(refusal(), "");
  EXPECT_EQ(read_manifest_file(out_ / "manifest.json").kernels.at(0).entry,
            kAttentionEntryWithoutLse);
  const std::unique_ptr<CatalogSource> source = open_export_source(out_);
  EXPECT_TRUE(source->exported_cubin(*source->exact("h200", attention_shape(8, 1, 16384, 64))));
  // A version 3 entry with this build's arguments is refused: they are not the ones it takes.
  json["kernels"][0]["arguments"] = kAttentionArguments;
  write_manifest(json);
  EXPECT_NE(refusal().find("kernels[0].arguments is"), std::string::npos) << refusal();
}

// GQA and bottom-right problems round-trip through the manifest with their fields.
TEST(ExportManifestProblems, GroupedHeadsAndAlignmentRoundTrip) {
  swr::testing::TemporaryDirectory directory;
  TunedDatabase tuned(directory.path() / "results.db");
  AttentionProblem llama = attention_shape(1, 32, 1024, 128, true);
  llama.seq_kv = 4096;
  llama.kv_heads = 8;
  llama.causal_align = CausalAlignment::bottom_right;
  tuned.add(llama, "m128n64w8s2-cyclic-static-groups4", 0.5);
  ExportOptions options;
  options.gpu = "h200";
  options.out_dir = directory.path() / "export";
  export_kernels(tuned.database(), FakeCubinBuilder(), options);
  const ExportManifest read = read_manifest_file(options.out_dir / "manifest.json");
  ASSERT_EQ(read.kernels.size(), 1u);
  EXPECT_EQ(read.kernels[0].problem.key(), "b1_h32_kv8_sq1024_skv4096_d128_f16_causal_br");
  EXPECT_EQ(read.kernels[0].problem.kv_heads, 8);
  EXPECT_EQ(read.kernels[0].problem.causal_align, CausalAlignment::bottom_right);
  const TunedCatalog catalog = TunedCatalog::open_export(options.out_dir);
  EXPECT_EQ(catalog.best("h200", llama).match, MatchKind::exact);
  AttentionProblem top_left = llama;
  top_left.causal_align = CausalAlignment::top_left;
  EXPECT_EQ(catalog.best("h200", top_left).match, MatchKind::none);
}

TEST_F(ExportManifestTest, RefusesACubinThatDoesNotMatchItsHash) {
  const std::string file = summary_.manifest.kernels.at(0).cubin_file;
  {
    std::fstream cubin(out_ / file, std::ios::in | std::ios::out | std::ios::binary);
    cubin.seekp(6);
    cubin.put('#');  // same size, other bytes
  }
  const std::string message = refusal();
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find("kernels[0].cubin.sha256"), std::string::npos) << message;
}

TEST_F(ExportManifestTest, RefusesACubinOfAnotherSizeOrMissing) {
  const std::string file = summary_.manifest.kernels.at(1).cubin_file;
  { std::ofstream(out_ / file, std::ios::app) << "more"; }
  std::string message = refusal();
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find("kernels[1].cubin.bytes"), std::string::npos) << message;
  std::filesystem::remove(out_ / file);
  message = refusal();
  EXPECT_NE(message.find("cannot read"), std::string::npos) << message;
  EXPECT_NE(message.find(file), std::string::npos) << message;
}

TEST_F(ExportManifestTest, RefusesAFileThatIsNotACubin) {
  const ExportedKernel& kernel = summary_.manifest.kernels.at(0);
  const std::vector<char> text = {'h', 'e', 'l', 'l', 'o'};
  {
    std::ofstream(out_ / kernel.cubin_file, std::ios::binary | std::ios::trunc)
        .write(text.data(), 5);
  }
  nlohmann::json json = manifest_json();
  json["kernels"][0]["cubin"]["bytes"] = 5;
  json["kernels"][0]["cubin"]["sha256"] = cubin_sha256(text);
  write_manifest(json);
  EXPECT_NE(refusal().find("is not a cubin"), std::string::npos) << refusal();
}

TEST_F(ExportManifestTest, RefusesTextThatIsNotJson) {
  { std::ofstream(out_ / "manifest.json") << "{\"format\": "; }
  EXPECT_NE(refusal().find("is not valid JSON"), std::string::npos) << refusal();
  // A number no JSON number type holds (the parser's out_of_range, not a parse_error).
  { std::ofstream(out_ / "manifest.json", std::ios::trunc) << "{\"format\": [9e32614371]}"; }
  EXPECT_NE(refusal().find("is not valid JSON"), std::string::npos) << refusal();
  std::filesystem::remove(out_ / "manifest.json");
  EXPECT_NE(refusal().find("cannot read"), std::string::npos) << refusal();
}

// Files that would hang the reader or exhaust its memory are refused by name before any byte is
// read: a named pipe in place of the manifest, a cubin linked to /dev/zero, an oversized cubin.
TEST_F(ExportManifestTest, RefusesPipesDevicesAndOversizedFiles) {
  const std::filesystem::path manifest = out_ / "manifest.json";
  const std::filesystem::path saved = directory_.path() / "manifest.saved";
  std::filesystem::rename(manifest, saved);
  ASSERT_EQ(mkfifo(manifest.c_str(), 0600), 0);
  std::string message = refusal();
  EXPECT_NE(message.find("manifest " + manifest.string() + ": it is a named pipe"),
            std::string::npos)
      << message;
  std::filesystem::remove(manifest);
  std::filesystem::rename(saved, manifest);

  const std::filesystem::path cubin = out_ / summary_.manifest.kernels.at(0).cubin_file;
  std::filesystem::remove(cubin);
  std::filesystem::create_symlink("/dev/zero", cubin);
  message = refusal();
  EXPECT_NE(message.find("cubin " + cubin.string() + ": it is a device"), std::string::npos)
      << message;

  std::filesystem::remove(cubin);
  std::ofstream(cubin).close();
  std::filesystem::resize_file(cubin, std::uintmax_t{300} << 20);  // sparse: no disk used
  message = refusal();
  EXPECT_NE(message.find("314572800 bytes, more than the 268435456 a cubin may have"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace swr::test
