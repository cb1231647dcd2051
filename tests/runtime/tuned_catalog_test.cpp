// TunedCatalog on real SQLite files: exact, nearest (across the L2 size) and none, the answers
// kept in memory, several machines' measurements of one variant, and concurrent callers.
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>
#include <vector>

#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"
#include "tests/db/as_unprivileged_user.hpp"
#include "tests/generator/temporary_directory.hpp"
#include "tests/runtime/runtime_fixtures.hpp"

namespace swr::test {
namespace {

using swr::testing::TemporaryDirectory;

constexpr const char* kFitsConfig = "m128n64w8s2-cyclic-grid-head_major";
constexpr const char* kStreamsConfig = "m128n64w8s2-sawtooth-static-head_major";
constexpr const char* kOtherConfig = "m64n64w4s2-cyclic-dynamic-heads_interleaved";

class TunedCatalogTest : public ::testing::Test {
 protected:
  TunedCatalogTest() : tuned_(directory_.path() / "results.db") {
    // D=128 f16 on the H200: K/V fits L2 up to S = 61440.
    tuned_.add(fits_, kFitsConfig, 1.0);
    tuned_.add(fits_, kStreamsConfig, 1.2);
    tuned_.add(streams_, kStreamsConfig, 4.0);
    tuned_.add(streams_, kFitsConfig, 5.0);
    tuned_.add(small_d64_, kOtherConfig, 0.1);
  }

  TemporaryDirectory directory_;
  TunedDatabase tuned_;
  const AttentionProblem fits_ = attention_shape(8, 1, 57344, 128);
  const AttentionProblem streams_ = attention_shape(8, 1, 131072, 128);
  const AttentionProblem small_d64_ = attention_shape(2, 4, 1024, 64);
};

TEST_F(TunedCatalogTest, AnswersATunedShapeExactly) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const TunedChoice choice = catalog.best("h200", fits_);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice.match, MatchKind::exact);
  EXPECT_EQ(choice.distance, 0);
  const TunedKernel& kernel = *choice.kernel;
  EXPECT_EQ(kernel.config_key, kFitsConfig);
  EXPECT_EQ(kernel.config, config_named(kFitsConfig));
  EXPECT_EQ(kernel.problem.key(), fits_.key());
  EXPECT_EQ(kernel.gpu, "h200");
  EXPECT_EQ(kernel.arch, "sm_90a");
  EXPECT_EQ(kernel.sm_count, 132);
  EXPECT_DOUBLE_EQ(kernel.measured.median_ms, 1.0);
  EXPECT_DOUBLE_EQ(*kernel.measured.p95_ms, 1.02);
  EXPECT_DOUBLE_EQ(*kernel.measured.l2_hit_rate, 0.5);
  EXPECT_EQ(kernel.source_hash, fake_source_hash(fits_, config_named(kFitsConfig), "sm_90a"));
  EXPECT_EQ(kernel.toolkit_version, "13.0");
  EXPECT_GT(kernel.dynamic_shared_bytes, 0);
  EXPECT_FALSE(kernel.measured.measured_at.empty());
}

// A shared install: the database and its directory belong to someone else and are read-only.
// The runtime reads it as another user and leaves nothing beside it.
TEST(TunedCatalogReadOnly, OpensADatabaseInAReadOnlyDirectoryAsAnotherUser) {
  TemporaryDirectory directory;
  const std::filesystem::path path = directory.path() / "installed.db";
  const AttentionProblem shape = attention_shape(8, 1, 57344, 128);
  { TunedDatabase(path).add(shape, kFitsConfig, 1.0); }
  namespace fs = std::filesystem;
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(directory.path(), fs::perms::owner_read | fs::perms::owner_exec |
                                        fs::perms::group_read | fs::perms::group_exec |
                                        fs::perms::others_read | fs::perms::others_exec);
  const std::string failure = swr::testing::run_as_unprivileged_user([&] {
    const TunedCatalog catalog = TunedCatalog::open(path);
    const TunedChoice choice = catalog.best("h200", shape);
    return choice && choice.kernel->config_key == kFitsConfig;
  });
  fs::permissions(directory.path(), fs::perms::owner_all, fs::perm_options::add);
  EXPECT_EQ(failure, "");
  EXPECT_EQ(std::distance(fs::directory_iterator(directory.path()), fs::directory_iterator()), 1);
}

TEST_F(TunedCatalogTest, AnswersAnUntunedShapeByTheNearestOnTheSameSideOfTheL2Size) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  // 32 MiB of K/V: does not fit, like 131072; 57344 is closer in S but fits.
  const TunedChoice beyond = catalog.best("h200", attention_shape(8, 1, 65536, 128));
  ASSERT_TRUE(beyond);
  EXPECT_EQ(beyond.match, MatchKind::nearest);
  EXPECT_EQ(beyond.kernel->problem.key(), streams_.key());
  EXPECT_EQ(beyond.kernel->config_key, kStreamsConfig);
  EXPECT_NEAR(beyond.distance, 2.0, 1e-9);
  // 24 MiB: fits, like 57344.
  const TunedChoice inside = catalog.best("h200", attention_shape(8, 1, 49152, 128));
  ASSERT_TRUE(inside);
  EXPECT_EQ(inside.kernel->problem.key(), fits_.key());
  EXPECT_EQ(inside.kernel->config_key, kFitsConfig);
}

TEST_F(TunedCatalogTest, SaysWhyWhenNothingCanServeTheShape) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const TunedChoice causal = catalog.best("h200", attention_shape(8, 1, 65536, 128, true));
  EXPECT_FALSE(causal);
  EXPECT_EQ(causal.match, MatchKind::none);
  EXPECT_EQ(causal.kernel, nullptr);
  EXPECT_NE(causal.why_none.find("head dim 128, f16, causal"), std::string::npos)
      << causal.why_none;
  const TunedChoice other_gpu = catalog.best("gb10", fits_);
  EXPECT_EQ(other_gpu.match, MatchKind::none);
  EXPECT_NE(other_gpu.why_none.find("no results for GPU 'gb10'"), std::string::npos);
  EXPECT_NE(other_gpu.why_none.find("h200"), std::string::npos) << other_gpu.why_none;
}

TEST_F(TunedCatalogTest, AShapeWhoseVariantsAllFailedIsNoCandidate) {
  const AttentionProblem broken = attention_shape(1, 1, 4096, 64, true);
  tuned_.add_failure(broken, kOtherConfig);
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  EXPECT_EQ(catalog.best("h200", broken).match, MatchKind::none);
}

TEST_F(TunedCatalogTest, AnswersFromMemoryAfterTheFirstLookup) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  ASSERT_EQ(catalog.best("h200", fits_).kernel->config_key, kFitsConfig);
  tuned_.add(fits_, kOtherConfig, 0.5);  // a faster variant, written after the first answer
  EXPECT_EQ(catalog.best("h200", fits_).kernel->config_key, kFitsConfig);
  catalog.forget_answers();
  EXPECT_EQ(catalog.best("h200", fits_).kernel->config_key, kOtherConfig);
}

TEST_F(TunedCatalogTest, CopiesShareTheirAnswers) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const TunedCatalog copy = catalog;
  const TunedChoice first = catalog.best("h200", fits_);
  EXPECT_EQ(copy.best("h200", fits_).kernel, first.kernel);  // the same object, from memory
}

TEST_F(TunedCatalogTest, ConcurrentCallersGetTheSameAnswers) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const std::vector<AttentionProblem> asked = {fits_,
                                               streams_,
                                               attention_shape(8, 1, 65536, 128),
                                               attention_shape(8, 1, 49152, 128),
                                               small_d64_,
                                               attention_shape(8, 1, 65536, 128, true)};
  std::vector<std::string> expected;
  {
    const TunedCatalog fresh = TunedCatalog::open_database(tuned_.path());
    for (const AttentionProblem& problem : asked) {
      const TunedChoice choice = fresh.best("h200", problem);
      expected.push_back(choice ? choice.kernel->config_key : "none");
    }
  }
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        for (std::size_t i = 0; i < asked.size(); ++i) {
          const std::size_t index = (i + t) % asked.size();
          const TunedChoice choice = catalog.best("h200", asked[index]);
          if ((choice ? choice.kernel->config_key : "none") != expected[index]) ++mismatches[t];
        }
        if (round % 10 == 0) catalog.forget_answers();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST_F(TunedCatalogTest, TheFastestMachineWinsWhenSeveralGpuRowsShareAName) {
  // The same H200 recorded by --gpu auto (the device's own name) and by another machine.
  TunedDatabase other(tuned_.path(), with_device_name(h200_record(), "NVIDIA H200"));
  other.add(fits_, kOtherConfig, 0.8);
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  const TunedChoice choice = catalog.best("h200", fits_);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice.kernel->config_key, kOtherConfig);
  EXPECT_EQ(choice.kernel->device_name, "NVIDIA H200");
}

TEST_F(TunedCatalogTest, RefusesAnInvalidProblemAndABadFile) {
  const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
  EXPECT_THROW(catalog.best("h200", attention_shape(1, 1, 128, 48)), UsageError);
  const std::filesystem::path text = directory_.path() / "notes.txt";
  { std::ofstream(text) << "not a database\n"; }
  EXPECT_THROW(TunedCatalog::open_database(text), UsageError);
  EXPECT_THROW(TunedCatalog::open_database(directory_.path() / "missing.db"), UsageError);
  EXPECT_THROW(TunedCatalog::open(directory_.path()), UsageError);  // a directory: no manifest
}

// Several measurements of one variant: what counts for it.
class RepeatedMeasurementsTest : public TunedCatalogTest {
 protected:
  std::string best_key() {
    const TunedCatalog catalog = TunedCatalog::open_database(tuned_.path());
    const TunedChoice choice = catalog.best("h200", shape_);
    return choice
               ? choice.kernel->config_key + " " + std::to_string(choice.kernel->measured.median_ms)
               : "none";
  }
  const AttentionProblem shape_ = attention_shape(4, 2, 8192, 64);
};

TEST_F(RepeatedMeasurementsTest, TheFastestRunOfTheSameBuildCounts) {
  tuned_.add(shape_, kFitsConfig, 2.0, "2026-01-01T00:00:00.000Z");
  tuned_.add(shape_, kStreamsConfig, 2.5, "2026-01-01T00:00:00.000Z");
  // A later, slower run of the same build (another machine, a busy one) does not hide the first.
  tuned_.add(shape_, kFitsConfig, 3.0, "2026-02-01T00:00:00.000Z");
  EXPECT_EQ(best_key(), std::string(kFitsConfig) + " 2.000000");
}

TEST_F(RepeatedMeasurementsTest, ANewBuildReplacesTheOldOnesFigures) {
  tuned_.add(shape_, kFitsConfig, 2.0, "2026-01-01T00:00:00.000Z");
  tuned_.add(shape_, kStreamsConfig, 2.5, "2026-01-01T00:00:00.000Z");
  tuned_.add(shape_, kFitsConfig, 3.0, "2026-02-01T00:00:00.000Z", "a-changed-template");
  EXPECT_EQ(best_key(), std::string(kStreamsConfig) + " 2.500000");
}

TEST_F(RepeatedMeasurementsTest, ANewestFailureDisqualifiesTheVariant) {
  tuned_.add(shape_, kFitsConfig, 2.0, "2026-01-01T00:00:00.000Z");
  tuned_.add(shape_, kStreamsConfig, 2.5, "2026-01-01T00:00:00.000Z");
  tuned_.add_failure(shape_, kFitsConfig, "2026-02-01T00:00:00.000Z");
  EXPECT_EQ(best_key(), std::string(kStreamsConfig) + " 2.500000");
}

}  // namespace
}  // namespace swr::test
