// The attention backward's lookup without a GPU, on real SQLite files: the fastest variant or the
// fastest deterministic one (a config whose newest measurement failed never counts), the nearest
// tuned backward shape for an untuned one, none with why (nothing tuned, no deterministic
// variant, an export), the two passes kept apart; and the C API's backward calls: the choice as
// JSON, bad flags and handles as invalid arguments, a prepare without a device as no device.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "driver/cuda_driver.hpp"
#include "run_swr_tune.hpp"
#include "swr/device_buffer.hpp"
#include "swr/swr.h"
#include "swr/tuned_catalog.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

using swr::testing::TemporaryDirectory;

constexpr const char* kCyclic = "bwd-m64n128w8s2-cyclic-grid-head_major";
constexpr const char* kSawtooth = "bwd-m64n128w8s2-sawtooth-grid-head_major";
constexpr const char* kDeterministic = "bwd-m64n128w8s2-cyclic-grid-head_major-det";
constexpr const char* kDeterministicSlow = "bwd-m64n64w4s2-cyclic-grid-head_major-det";

class BackwardCatalogTest : public ::testing::Test {
 protected:
  BackwardCatalogTest() : tuned_(directory_.path() / "results.db") {
    tuned_.add(tuned_shape_, kCyclic, 2.0);
    tuned_.add(tuned_shape_, kSawtooth, 1.8);
    tuned_.add(tuned_shape_, kDeterministicSlow, 2.6);
    tuned_.add(tuned_shape_, kDeterministic, 2.2, "2026-11-20T10:00:00.000Z");
    // The faster deterministic variant's newest measurement failed: it no longer counts.
    tuned_.add_failure(tuned_shape_, kDeterministic, "2026-11-21T10:00:00.000Z");
    tuned_.add(atomic_only_, kCyclic, 0.5);
  }

  TemporaryDirectory directory_;
  TunedDatabase tuned_;
  const AttentionBackwardProblem tuned_shape_{attention_shape(2, 16, 4096, 128, true)};
  const AttentionBackwardProblem atomic_only_{attention_shape(4, 8, 1024, 64, true)};
};

TEST_F(BackwardCatalogTest, TheFastestVariantOrTheFastestDeterministicOne) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const TunedBackwardChoice any = catalog.best("h200", tuned_shape_);
  ASSERT_EQ(any.match, MatchKind::exact) << any.why_none;
  EXPECT_EQ(any.kernel->config_key, kSawtooth);
  EXPECT_EQ(any.kernel->config, backward_config_named(kSawtooth));
  EXPECT_DOUBLE_EQ(any.kernel->measured.median_ms, 1.8);
  EXPECT_EQ(any.kernel->problem, tuned_shape_);
  EXPECT_GT(any.kernel->dynamic_shared_bytes, 0);

  const TunedBackwardChoice deterministic =
      catalog.best("h200", tuned_shape_, DqRequirement::deterministic);
  ASSERT_EQ(deterministic.match, MatchKind::exact) << deterministic.why_none;
  EXPECT_EQ(deterministic.kernel->config_key, kDeterministicSlow);
  EXPECT_EQ(deterministic.kernel->config.dq, DqAccumulation::deterministic);
}

TEST_F(BackwardCatalogTest, AnUntunedShapeTakesTheNearestTunedBackward) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const AttentionBackwardProblem untuned{attention_shape(2, 16, 6000, 128, true)};
  const TunedBackwardChoice choice = catalog.best("h200", untuned);
  ASSERT_EQ(choice.match, MatchKind::nearest) << choice.why_none;
  EXPECT_GT(choice.distance, 0);
  EXPECT_EQ(choice.kernel->problem, tuned_shape_);
  EXPECT_EQ(choice.kernel->config_key, kSawtooth);
}

TEST_F(BackwardCatalogTest, NoneSaysWhyAndNamesTheDeterministicAsk) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const TunedBackwardChoice other_dim =
      catalog.best("h200", AttentionBackwardProblem{attention_shape(2, 16, 4096, 96, true)});
  EXPECT_EQ(other_dim.match, MatchKind::none);
  EXPECT_NE(other_dim.why_none.find("the backward of head dim 96"), std::string::npos)
      << other_dim.why_none;

  const TunedBackwardChoice no_deterministic =
      catalog.best("h200", atomic_only_, DqRequirement::deterministic);
  EXPECT_EQ(no_deterministic.match, MatchKind::none);
  EXPECT_NE(no_deterministic.why_none.find("deterministic"), std::string::npos)
      << no_deterministic.why_none;
  EXPECT_TRUE(catalog.best("h200", atomic_only_));  // any variant serves it

  EXPECT_EQ(catalog.best("h100", tuned_shape_).match, MatchKind::none);
}

TEST_F(BackwardCatalogTest, TheTwoPassesAreKeptApart) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  // Only backward rows: the forward of the same shape is not tuned.
  const TunedChoice forward = catalog.best("h200", tuned_shape_.shape);
  EXPECT_EQ(forward.match, MatchKind::none) << forward.kernel->config_key;
}

TEST_F(BackwardCatalogTest, AnExportHoldsNoBackwardKernelsAndSaysSo) {
  TunedDatabase forward_only(directory_.path() / "forward.db");
  forward_only.add(tuned_shape_.shape, "m128n64w8s2-cyclic-grid-head_major", 1.0);
  export_h200(forward_only.database(), directory_.path() / "export");
  const TunedCatalog catalog = TunedCatalog::open_export(directory_.path() / "export");
  EXPECT_TRUE(catalog.best("h200", tuned_shape_.shape));
  const TunedBackwardChoice backward = catalog.best("h200", tuned_shape_);
  EXPECT_EQ(backward.match, MatchKind::none);
  EXPECT_NE(backward.why_none.find("holds no backward kernels"), std::string::npos)
      << backward.why_none;
}

// `swr-tune show --family attention-backward --seq ...`: every backward variant of the shape, not
// the forward's (the same shape's forward rows are there too).
TEST_F(BackwardCatalogTest, ShowListsTheBackwardVariantsOfAShape) {
  tuned_.add(tuned_shape_.shape, "m128n64w8s2-cyclic-grid-head_major", 0.7);
  const std::vector<std::string> shape = {
      "show",  "--db", tuned_.path().string(), "--batch", "2",       "--heads", "16",
      "--seq", "4096", "--head-dim",           "128",     "--causal"};
  std::vector<std::string> backward = shape;
  backward.insert(backward.end(), {"--family", "attention-backward"});
  const ProcessResult listed = run_swr_tune(backward);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(tuned_shape_.key() + " on h200"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find(kSawtooth), std::string::npos) << listed.out;
  EXPECT_EQ(listed.out.find("m128n64w8s2-cyclic-grid-head_major"), std::string::npos) << listed.out;
  const ProcessResult forward = run_swr_tune(shape);
  ASSERT_EQ(forward.exit_code, 0) << forward.err;
  EXPECT_NE(forward.out.find("m128n64w8s2-cyclic-grid-head_major"), std::string::npos);
  EXPECT_EQ(forward.out.find(kSawtooth), std::string::npos) << forward.out;
}

// The summary (`show` without a shape) lists one family when --family names it, every family
// when it does not. A backward key is the forward's with "bwd_" before it: " " + key tells them
// apart in the table.
TEST_F(BackwardCatalogTest, TheSummaryListsTheFamilyNamed) {
  tuned_.add(tuned_shape_.shape, "m128n64w8s2-cyclic-grid-head_major", 0.7);
  const std::string forward_key = " " + tuned_shape_.shape.key() + " ";
  const std::string backward_key = " " + tuned_shape_.key() + " ";
  auto summary = [&](std::vector<std::string> family) {
    std::vector<std::string> arguments = {"show", "--db", tuned_.path().string()};
    arguments.insert(arguments.end(), family.begin(), family.end());
    const ProcessResult result = run_swr_tune(arguments);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  };
  const std::string backward = summary({"--family", "attention-backward"});
  EXPECT_NE(backward.find(backward_key), std::string::npos) << backward;
  EXPECT_EQ(backward.find(forward_key), std::string::npos) << backward;
  const std::string forward = summary({"--family", "attention"});
  EXPECT_NE(forward.find(forward_key), std::string::npos) << forward;
  EXPECT_EQ(forward.find(backward_key), std::string::npos) << forward;
  const std::string both = summary({});
  EXPECT_NE(both.find(forward_key), std::string::npos) << both;
  EXPECT_NE(both.find(backward_key), std::string::npos) << both;
}

struct CatalogCloser {
  void operator()(swr_catalog* catalog) const { swr_catalog_close(catalog); }
};

nlohmann::json taken_json(char* text) {
  const std::unique_ptr<char, void (*)(char*)> owned(text, swr_string_free);
  return nlohmann::json::parse(text);
}

TEST_F(BackwardCatalogTest, TheCApiAnswersAndRefusesAsTheCatalog) {
  swr_catalog* opened = nullptr;
  ASSERT_EQ(swr_catalog_open(tuned_.path().c_str(), &opened), SWR_OK) << swr_last_error();
  const std::unique_ptr<swr_catalog, CatalogCloser> catalog(opened);
  swr_attention_problem_v2 problem{
      sizeof(swr_attention_problem_v2), 2, 16, 0, 4096, 4096, 128, "bf16", 1, SWR_CAUSAL_TOP_LEFT};
  problem.dtype = "f16";  // attention_shape's default
  char* text = nullptr;
  ASSERT_EQ(swr_best_attention_backward(catalog.get(), "h200", &problem, 0, &text), SWR_OK)
      << swr_last_error();
  nlohmann::json answer = taken_json(text);
  EXPECT_EQ(answer["family"], "attention-backward");
  EXPECT_EQ(answer["match"], "exact");
  EXPECT_EQ(answer["kernel"]["config_key"], kSawtooth);

  ASSERT_EQ(swr_best_attention_backward(catalog.get(), "h200", &problem, SWR_BACKWARD_DETERMINISTIC,
                                        &text),
            SWR_OK);
  answer = taken_json(text);
  EXPECT_EQ(answer["kernel"]["config_key"], kDeterministicSlow);

  EXPECT_EQ(swr_best_attention_backward(catalog.get(), "h200", &problem, 6, &text),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "flags 6: allowed 0 or SWR_BACKWARD_DETERMINISTIC (1)");

  std::uint64_t bytes = 7;
  EXPECT_EQ(swr_attention_backward_workspace_bytes(nullptr, &bytes), SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(swr_launch_attention_backward(nullptr, 1, 2, 3, 4, 5, 6, 7, 8, 9, nullptr, 10, 11, 0),
            SWR_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(swr_last_error(), "prepared is null: allowed a pointer");

  if (CudaDriver::try_get() != nullptr && cuda_device_present()) return;  // GPU tests launch
  swr_prepared* prepared = reinterpret_cast<swr_prepared*>(0x1);
  EXPECT_EQ(swr_prepare_attention_backward(catalog.get(), "h200", &problem, 0, &prepared),
            SWR_ERROR_NO_DEVICE);
  EXPECT_EQ(prepared, nullptr);
}

}  // namespace
}  // namespace swr::test
