#include "generator/kernel_source.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "generator/resource_model.hpp"
#include "tests/fixtures/problem_builders.hpp"

namespace swr {
namespace {

AttentionConfig contract_example_config() {
  return fixtures::attention_config(128, 64, 8, 2, KvOrder::sawtooth, Persistence::static_loop,
                                    TileSwizzle::head_groups, 4);
}

AttentionProblem contract_example_problem() {
  return {.batch = 8,
          .heads = 1,
          .seq_q = 4096,
          .seq_kv = 4096,
          .head_dim = 128,
          .dtype = DataType::f16,
          .causal = true};
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

TEST(KernelSource, RendersTheContractTranslationUnit) {
  const KernelSource source =
      render_attention_kernel(contract_example_problem(), contract_example_config());
  const std::string expected =
      R"(// swr attention forward, config m128n64w8s2-sawtooth-static-groups4, problem d128_f16_causal
#include "attention/forward_kernel.cuh"
using Traits = swr::attention::Traits<
    /*head_dim*/ 128, /*block_m*/ 128, /*block_n*/ 64, /*warps*/ 8, /*stages*/ 2,
    swr::attention::Element::f16, /*causal*/ true,
    swr::attention::KvOrder::sawtooth,
    swr::attention::Persistence::static_loop,
    swr::attention::TileSwizzle::head_groups,
    /*head_group*/ 4, /*planted_fault*/ false>;
static_assert(swr::attention::ForwardTile<Traits>::kSharedBytes == 98304, "resource model and template disagree on shared memory");
extern "C" __global__ void __launch_bounds__(Traits::kThreads) swr_attention_forward_v3(const void* q, const void* k, const void* v, void* o,
    const swr::attention::AttentionArgs args, float* lse) {
  swr::attention::forward<Traits>(q, k, v, o, args, lse);
}
)";
  EXPECT_EQ(source.text, expected);
  EXPECT_EQ(source.name, "m128n64w8s2-sawtooth-static-groups4_d128_f16_causal.cu");
  EXPECT_EQ(source.entry, "swr_attention_forward_v3");
  EXPECT_EQ(source.threads_per_block, 256);
  EXPECT_EQ(source.dynamic_shared_bytes, 98304);
}

TEST(KernelSource, EveryKnobReachesTheTraits) {
  AttentionConfig config;
  config.block_m = 64;
  config.block_n = 128;
  config.warps = 4;
  config.stages = 3;
  config.order = KvOrder::cyclic;
  config.persistence = Persistence::dynamic;
  config.swizzle = TileSwizzle::heads_interleaved;
  config.planted_fault = true;
  const AttentionProblem problem = {.batch = 2,
                                    .heads = 2,
                                    .seq_q = 100,
                                    .seq_kv = 100,
                                    .head_dim = 64,
                                    .dtype = DataType::bf16,
                                    .causal = false};
  const std::string text = render_attention_kernel(problem, config).text;
  EXPECT_TRUE(contains(text,
                       "/*head_dim*/ 64, /*block_m*/ 64, /*block_n*/ 128, /*warps*/ 4, "
                       "/*stages*/ 3,"));
  EXPECT_TRUE(contains(text, "swr::attention::Element::bf16, /*causal*/ false,"));
  EXPECT_TRUE(contains(text, "swr::attention::KvOrder::cyclic,"));
  EXPECT_TRUE(contains(text, "swr::attention::Persistence::dynamic,"));
  EXPECT_TRUE(contains(text, "swr::attention::TileSwizzle::heads_interleaved,"));
  EXPECT_TRUE(contains(text, "/*head_group*/ 1, /*planted_fault*/ true>;"));
  config.persistence = Persistence::grid;
  config.swizzle = TileSwizzle::head_major;
  config.head_group = 9;  // ignored outside head_groups
  const std::string grid_text = render_attention_kernel(problem, config).text;
  EXPECT_TRUE(contains(grid_text, "swr::attention::Persistence::grid,"));
  EXPECT_TRUE(contains(grid_text, "swr::attention::TileSwizzle::head_major,"));
  EXPECT_TRUE(contains(grid_text, "/*head_group*/ 1,"));
}

TEST(KernelSource, SizesComeFromTheResourceModel) {
  AttentionConfig config = contract_example_config();
  config.stages = 3;
  const AttentionProblem problem = contract_example_problem();
  EXPECT_EQ(render_attention_kernel(problem, config).dynamic_shared_bytes,
            attention_dynamic_shared_bytes(problem, config));
}

// The embedded headers are exactly the files under templates/ as they are now.
TEST(KernelSource, EmbedsEveryTemplateHeaderVerbatim) {
  const std::filesystem::path root = std::filesystem::path(SWR_SOURCE_DIR) / "templates";
  std::map<std::string, std::string> on_disk;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cuh") continue;
    std::ifstream file(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << file.rdbuf();
    on_disk[entry.path().lexically_relative(root).generic_string()] = text.str();
  }
  ASSERT_TRUE(on_disk.count("attention/forward_kernel.cuh"));
  std::map<std::string, std::string> embedded;
  for (const HeaderFile& header : embedded_template_headers()) {
    EXPECT_TRUE(embedded.emplace(header.include_name, header.text).second) << header.include_name;
  }
  EXPECT_EQ(embedded, on_disk);
  EXPECT_EQ(
      render_attention_kernel(contract_example_problem(), contract_example_config()).headers.size(),
      on_disk.size());
}

}  // namespace
}  // namespace swr
