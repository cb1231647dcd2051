// manifest.json's "backward_kernels" (version 5): the round trip, each entry's module as the
// runtime launches it (three kernels in launch order, their grids, the workspace and, for the
// warp-specialized kernel, its tensor maps), older versions still read, and faulty entries refused
// with the field named and nothing loaded.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "runtime/catalog_source.hpp"
#include "runtime/export_directory.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/tuned_catalog.hpp"
#include "tests/runtime/backward_export_fixture.hpp"

namespace swr::test {
namespace {

class BackwardManifestTest : public BackwardExportTest {
 protected:
  BackwardManifestTest() : summary_(export_all()) {}

  ExportSummary summary_;
};

TEST_F(BackwardManifestTest, ReadsBackWhatWasWritten) {
  const ExportManifest read = read_manifest_file(out_ / "manifest.json");
  EXPECT_EQ(read.schema_version, kManifestBackwardVersion);
  const std::vector<ExportedBackwardKernel>& written = summary_.manifest.backward_kernels;
  ASSERT_EQ(read.backward_kernels.size(), written.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    const ExportedBackwardKernel& a = read.backward_kernels[i];
    const ExportedBackwardKernel& b = written[i];
    expect_same_kernel_base(a, b);
    EXPECT_EQ(a.problem, b.problem);
    EXPECT_EQ(a.problem.shape.causal, b.problem.shape.causal);
    EXPECT_EQ(a.config, b.config);
  }
  EXPECT_EQ(read.kernels.size(), 1u);
  EXPECT_EQ(manifest_to_json(read), manifest_json());  // and writes back to the same bytes
}

// An entry says what a program needs to launch the module without swr: its three kernels in
// launch order, each with its entry, block, shared memory, tensors and grid, and the workspace.
TEST_F(BackwardManifestTest, AnEntryListsItsKernelsInLaunchOrderAndItsWorkspace) {
  const nlohmann::json json = manifest_json();
  const nlohmann::json& entry = json.at("backward_kernels").at(1);  // causal_, sawtooth
  const AttentionBackwardConfig config = backward_config_named(kBackwardSawtooth);
  EXPECT_EQ(entry.at("problem").at("family"), "attention-backward");
  EXPECT_EQ(entry.at("problem").at("key"), causal_.key());
  EXPECT_EQ(entry.at("config_key"), kBackwardSawtooth);
  EXPECT_EQ(entry.at("config"), config.to_json());
  EXPECT_EQ(entry.at("entry"), kBackwardEntryName);
  EXPECT_EQ(entry.at("arguments"), kBackwardArguments);
  const int shared_bytes = attention_backward_shared_bytes(causal_, config);
  EXPECT_EQ(entry.at("dynamic_shared_bytes"), shared_bytes);

  const nlohmann::json& kernels = entry.at("launch_sequence");
  ASSERT_EQ(kernels.size(), 3u);
  const char* passes[] = {"preprocess", "main", "postprocess"};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(kernels[i].at("pass"), passes[i]);
    EXPECT_EQ(kernels[i].at("entry"), kBackwardLaunchSequence[i]);
    EXPECT_TRUE(kernels[i].at("arguments").is_string());
    EXPECT_TRUE(kernels[i].at("grid").at("ctas").is_string());
  }
  EXPECT_EQ(kernels[0].at("block_threads"), 256);
  EXPECT_EQ(kernels[0].at("dynamic_shared_bytes"), 0);
  EXPECT_EQ(kernels[0].at("grid").at("rows_per_cta"), 16);  // 256 threads, 16 a row of 128
  EXPECT_EQ(kernels[1].at("block_threads"), config.threads());
  EXPECT_EQ(kernels[1].at("dynamic_shared_bytes"), shared_bytes);
  EXPECT_EQ(kernels[1].at("grid").at("rule"), "grid");
  EXPECT_EQ(kernels[1].at("grid").at("ctas"), "units * cluster_ctas");
  EXPECT_EQ(kernels[1].at("grid").at("tile_counter"), "none (pass null)");
  EXPECT_EQ(kernels[1].at("arguments"),
            "q, k, v, d_o (const void*), dk, dv (void*), then the BackwardArgs block");
  EXPECT_FALSE(kernels[1].contains("tensor_maps"));
  EXPECT_EQ(kernels[2].at("arguments"), "dq (void*), then the BackwardArgs block");
  EXPECT_EQ(kernels[2].at("grid").at("ctas"), "ceil(batch * heads * seq_q / rows_per_cta)");

  const nlohmann::json& workspace = entry.at("workspace");
  const BackwardWorkspaceLayout layout = backward_workspace_layout(causal_, config);
  EXPECT_EQ(workspace.at("bytes"), layout.bytes);
  EXPECT_EQ(workspace.at("alignment_bytes"), 256);
  const nlohmann::json& parts = workspace.at("parts");
  ASSERT_EQ(parts.size(), 6u);
  EXPECT_EQ(parts[2].at("name"), "dq_accum");
  EXPECT_EQ(parts[2].at("offset"), layout.dq_accum);
  EXPECT_EQ(parts[3].at("bytes"), "0");  // atomic dQ: no semaphores
  const nlohmann::json& deterministic = json.at("backward_kernels").at(2).at("workspace");
  EXPECT_EQ(deterministic.at("parts")[3].at("bytes"), "4 * batch * heads * q_tiles");
}

// The warp-specialized kernel takes tensor maps, may split its last wave and takes a tile counter
// (dynamic persistence): its entry says all of it, the maps for the entry's shape.
TEST_F(BackwardManifestTest, AWarpSpecializedEntrySaysHowToBuildItsTensorMaps) {
  const nlohmann::json entry = manifest_json().at("backward_kernels").at(3);
  ASSERT_EQ(entry.at("config_key"), kBackwardWarpSpecialized);
  const nlohmann::json& main = entry.at("launch_sequence").at(1);
  EXPECT_EQ(main.at("block_threads"), 384);
  EXPECT_EQ(main.at("grid").at("rule"), "dynamic");
  EXPECT_EQ(main.at("grid").at("split_last_wave"), true);
  EXPECT_EQ(main.at("grid").at("ctas"),
            "min((split_whole + (units - split_whole) * split_parts) * cluster_ctas, wave_size)");
  EXPECT_EQ(main.at("grid").at("tile_counter"),
            "one int, zeroed before each launch of the main kernel");
  EXPECT_EQ(entry.at("launch_sequence").at(2).at("grid").at("ctas"),
            "batch * heads * q_tiles * dq_parts");
  const nlohmann::json& maps = main.at("tensor_maps").at("maps");
  ASSERT_EQ(maps.size(), 4u);
  const char* operands[] = {"Q", "K", "V", "dO"};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(maps[i].at("operand"), operands[i]);
  // [B, H, S, D] innermost first; Q's boxes of block_m rows, K's of block_n.
  EXPECT_EQ(maps[0].at("dims"), nlohmann::json({128, 8192, 16, 2}));
  EXPECT_EQ(maps[0].at("box").at(1), 64);
  EXPECT_EQ(maps[1].at("box").at(1), 128);
  EXPECT_EQ(maps[0].at("strides_bytes"), nlohmann::json({256, 256 * 8192, 256 * 8192 * 16}));
  const nlohmann::json& workspace = entry.at("workspace");
  EXPECT_EQ(workspace.at("split_ctas"), 32);
  EXPECT_NE(workspace.at("parts")[5].at("bytes"), "0");
}

// A version-4 export (no backward list) still opens: its forward kernels answer and launch, and
// the catalog says the backward is not in it.
TEST_F(BackwardManifestTest, AnOlderVersionStillReads) {
  const nlohmann::json written = manifest_json();
  nlohmann::json json = written;
  json["schema_version"] = kManifestLseVersion;
  json.erase("backward_kernels");
  write_manifest(json);
  EXPECT_EQ(refusal(), "");
  const TunedCatalog catalog = TunedCatalog::open_export(out_);
  EXPECT_EQ(catalog.best("h200", causal_.shape).match, MatchKind::exact);
  const TunedBackwardChoice backward = catalog.best("h200", causal_);
  EXPECT_EQ(backward.match, MatchKind::none);
  EXPECT_NE(backward.why_none.find("holds no backward kernels"), std::string::npos)
      << backward.why_none;
  const std::unique_ptr<CatalogSource> source = open_export_source(out_);
  EXPECT_FALSE(source->holds_backward_kernels());
  EXPECT_TRUE(source->exported_cubin(*source->exact("h200", causal_.shape)));

  // A backward list in a version-4 manifest is a contradiction, not something to skip.
  json["backward_kernels"] = written.at("backward_kernels");
  write_manifest(json);
  EXPECT_NE(refusal().find("backward_kernels needs schema_version 5"), std::string::npos)
      << refusal();
}

class CorruptBackwardEntryTest : public BackwardManifestTest,
                                 public ::testing::WithParamInterface<ManifestCorruption> {};

TEST_P(CorruptBackwardEntryTest, IsRefusedNamingTheField) {
  expect_refused(GetParam());
}

// backward_kernels[1] is causal_'s sawtooth (mma_sync, grid), [2] its deterministic variant, [3]
// the warp-specialized one.
INSTANTIATE_TEST_SUITE_P(
    Fields, CorruptBackwardEntryTest,
    ::testing::Values(
        ManifestCorruption{"missing_list", "/backward_kernels", nullptr,
                           "backward_kernels is missing"},
        ManifestCorruption{"list_not_array", "/backward_kernels", "none",
                           "backward_kernels must be a JSON array"},
        ManifestCorruption{"forward_family", "/backward_kernels/1/problem/family", "attention",
                           "backward_kernels[1].problem.family is \"attention\""},
        ManifestCorruption{"forward_key", "/backward_kernels/1/problem/key",
                           "b2_h16_sq4096_skv4096_d128_f16_causal",
                           "backward_kernels[1].problem.key is"},
        ManifestCorruption{"seq_changed", "/backward_kernels/1/problem/seq_q", 4000,
                           "backward_kernels[1].problem.key is"},
        ManifestCorruption{"forward_config", "/backward_kernels/1/config_key",
                           "m128n64w8s2-cyclic-grid-head_major",
                           "backward_kernels[1].config_key is"},
        ManifestCorruption{"bad_dq", "/backward_kernels/1/config/dq", "sometimes",
                           "backward_kernels[1].config is not a backward config"},
        ManifestCorruption{"forward_entry", "/backward_kernels/1/entry", "swr_attention_forward_v3",
                           "backward_kernels[1].entry is \"swr_attention_forward_v3\""},
        ManifestCorruption{"threads_wrong", "/backward_kernels/1/block_threads", 128,
                           "backward_kernels[1].block_threads is \"128\""},
        ManifestCorruption{"shared_too_small", "/backward_kernels/1/dynamic_shared_bytes", 1024,
                           "backward_kernels[1].dynamic_shared_bytes is \"1024\""},
        ManifestCorruption{"other_arguments", "/backward_kernels/1/arguments", "args",
                           "backward_kernels[1].arguments is \"args\""},
        ManifestCorruption{"missing_sequence", "/backward_kernels/1/launch_sequence", nullptr,
                           "backward_kernels[1].launch_sequence is missing"},
        ManifestCorruption{"sequence_longer", "/backward_kernels/1/launch_sequence/3",
                           nlohmann::json::object(),
                           "backward_kernels[1].launch_sequence has 4 elements but the problem "
                           "and config make 3"},
        ManifestCorruption{"kernels_swapped", "/backward_kernels/1/launch_sequence/0/entry",
                           "swr_attention_backward_post_v1",
                           "backward_kernels[1].launch_sequence[0].entry is "
                           "\"swr_attention_backward_post_v1\" but the problem and config make "
                           "\"swr_attention_backward_pre_v1\""},
        ManifestCorruption{"main_threads", "/backward_kernels/1/launch_sequence/1/block_threads",
                           128, "backward_kernels[1].launch_sequence[1].block_threads is 128"},
        ManifestCorruption{"pass_shared",
                           "/backward_kernels/1/launch_sequence/2/"
                           "dynamic_shared_bytes",
                           4096, "backward_kernels[1].launch_sequence[2].dynamic_shared_bytes"},
        ManifestCorruption{"grid_rule", "/backward_kernels/1/launch_sequence/1/grid/rule", "static",
                           "backward_kernels[1].launch_sequence[1].grid.rule is"},
        ManifestCorruption{"rows_per_cta",
                           "/backward_kernels/1/launch_sequence/0/grid/"
                           "rows_per_cta",
                           32, "backward_kernels[1].launch_sequence[0].grid.rows_per_cta is 32"},
        ManifestCorruption{"extra_grid_field", "/backward_kernels/1/launch_sequence/1/grid/ctas_x",
                           1, "backward_kernels[1].launch_sequence[1].grid.ctas_x is not among"},
        ManifestCorruption{"workspace_bytes", "/backward_kernels/2/workspace/bytes", 256,
                           "backward_kernels[2].workspace.bytes is 256"},
        ManifestCorruption{"semaphores_left_out", "/backward_kernels/2/workspace/parts/3/bytes",
                           "0", "backward_kernels[2].workspace.parts[3].bytes is \"0\""},
        ManifestCorruption{"missing_workspace", "/backward_kernels/2/workspace", nullptr,
                           "backward_kernels[2].workspace is missing"},
        ManifestCorruption{"tensor_map_box",
                           "/backward_kernels/3/launch_sequence/1/tensor_maps/"
                           "maps/1/box/1",
                           64, "backward_kernels[3].launch_sequence[1].tensor_maps.maps[1].box[1]"},
        ManifestCorruption{"missing_tensor_maps",
                           "/backward_kernels/3/launch_sequence/1/"
                           "tensor_maps",
                           nullptr,
                           "backward_kernels[3].launch_sequence[1].tensor_maps is missing"},
        ManifestCorruption{"failed_status", "/backward_kernels/0/measured/status", "fault",
                           "backward_kernels[0].measured.status is \"fault\""},
        ManifestCorruption{"bad_sha", "/backward_kernels/4/cubin/sha256", "12ab",
                           "backward_kernels[4].cubin.sha256 must be 64"},
        ManifestCorruption{"newer_schema", "/schema_version", kManifestSchemaVersion + 1,
                           "schema_version 6 is newer"}),
    [](const ::testing::TestParamInfo<ManifestCorruption>& info) {
      return std::string(info.param.name);
    });

TEST_F(BackwardManifestTest, RefusesABackwardCubinThatDoesNotMatchItsHash) {
  const std::string file = summary_.manifest.backward_kernels.at(3).cubin_file;
  {
    std::fstream cubin(out_ / file, std::ios::in | std::ios::out | std::ios::binary);
    cubin.seekp(6);
    cubin.put('#');
  }
  const std::string message = refusal();
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find("backward_kernels[3].cubin.sha256"), std::string::npos) << message;
}

}  // namespace
}  // namespace swr::test
