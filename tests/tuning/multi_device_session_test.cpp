// A tuning session spread over several devices (tuner/tuning/device_pool.hpp), with fake
// measurers in place of GPUs (real SQLite, real NVRTC): every variant measured once and stored
// once whichever device took it, a device that keeps killing its worker or cannot start one
// dropped with its variants measured by the others, a variant that faults everywhere recorded as
// the variant's fault, and the last device never dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "db/results_database.hpp"
#include "fake_variant_measurer.hpp"
#include "support/files.hpp"
#include "tuner/tuning/tuning_session.hpp"

namespace swr {
namespace {

using testing::FakeVariantMeasurer;

const AttentionProblem kProblem{1, 2, 256, 256, 64, DataType::f16, false};

std::vector<AttentionConfig> nine_configs() {
  std::vector<AttentionConfig> configs;
  for (const char* order : {"cyclic", "sawtooth"}) {
    for (const char* persistence : {"grid", "static", "dynamic"}) {
      for (const char* swizzle : {"head_major", "heads_interleaved"}) {
        const std::string key =
            std::string("m64n64w4s1-") + order + "-" + persistence + "-" + swizzle;
        configs.push_back(*AttentionConfig::from_key(key));
      }
    }
  }
  configs.resize(9);
  return configs;
}

class MultiDeviceSession : public ::testing::Test {
 protected:
  TuningSummary run(std::vector<FakeVariantMeasurer*> fakes) {
    TuningPlan plan;
    plan.gpu = *find_gpu_profile("h200");
    plan.driver_version = "test-driver 13.0";
    plan.shapes = {{kProblem, nine_configs()}};
    plan.database = database_;
    plan.cubin_cache = SWR_TEST_CUBIN_CACHE;
    plan.compile_threads = 2;
    for (std::size_t i = 0; i < fakes.size(); ++i) {
      plan.device_names.push_back("device " + std::to_string(i));
    }
    InterruptFlag interrupt;
    std::vector<VariantMeasurer*> measurers(fakes.begin(), fakes.end());
    TuningSession session(plan, measurers, interrupt);
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    TuningSummary summary;
    try {
      summary = session.run();
    } catch (...) {
      out_ = ::testing::internal::GetCapturedStdout();
      err_ = ::testing::internal::GetCapturedStderr();
      throw;
    }
    out_ = ::testing::internal::GetCapturedStdout();
    err_ = ::testing::internal::GetCapturedStderr();
    return summary;
  }

  // Compiles the variants into the shared cubin cache first, so that in the run they reach the
  // devices at once and the slower fake device cannot take them all.
  void warm_cache() {
    const std::filesystem::path database = database_;
    database_ = scratch_.path() / "warm-up.db";
    FakeVariantMeasurer any;
    run({&any});
    database_ = database;
  }

  // Every stored row: config key and status, from a fresh read-only connection.
  std::vector<std::pair<std::string, db::MeasurementStatus>> rows() const {
    const db::ResultsDatabase database(database_, db::OpenMode::read_only);
    const auto gpu = database.find_gpu(db::GpuRecord::from_profile(*find_gpu_profile("h200")));
    const auto problem = database.find_problem(kProblem);
    std::vector<std::pair<std::string, db::MeasurementStatus>> result;
    if (!gpu || !problem) return result;
    for (const db::StoredMeasurement& m : database.measurements_for(*gpu, *problem)) {
      result.emplace_back(m.config_key, m.record.status);
    }
    return result;
  }

  static std::set<std::string> all_keys() {
    std::set<std::string> keys;
    for (const AttentionConfig& config : nine_configs()) keys.insert(config.key());
    return keys;
  }

  TemporaryDirectory scratch_;
  std::filesystem::path database_ = scratch_.path() / "results.db";
  std::string out_, err_;
};

TEST_F(MultiDeviceSession, EveryVariantIsMeasuredOnceOnWhicheverDeviceIsFree) {
  FakeVariantMeasurer a, b;
  a.delay = b.delay = std::chrono::milliseconds(30);
  const TuningSummary summary = run({&a, &b});
  EXPECT_EQ(summary.recorded, 9);
  EXPECT_FALSE(a.measured_keys.empty());
  EXPECT_FALSE(b.measured_keys.empty());
  std::multiset<std::string> measured(a.measured_keys.begin(), a.measured_keys.end());
  measured.insert(b.measured_keys.begin(), b.measured_keys.end());
  EXPECT_EQ(std::set<std::string>(measured.begin(), measured.end()), all_keys());
  EXPECT_EQ(measured.size(), 9u) << "a variant measured twice";
  const auto stored = rows();
  EXPECT_EQ(stored.size(), 9u);
  // The progress lines name the device.
  EXPECT_NE(out_.find("(device 0)"), std::string::npos) << out_;
  EXPECT_NE(out_.find("(device 1)"), std::string::npos) << out_;
}

TEST_F(MultiDeviceSession, ADeviceThatKeepsKillingItsWorkerIsDroppedAndTheOthersMeasureItsShare) {
  warm_cache();
  FakeVariantMeasurer broken, good;
  broken.every_worker_dies = true;
  good.delay = std::chrono::milliseconds(40);  // the broken one gets its three first
  const TuningSummary summary = run({&broken, &good});
  EXPECT_EQ(broken.measured_keys.size(), 3u);  // kFaultStreakLimit, then dropped
  EXPECT_EQ(std::set<std::string>(good.measured_keys.begin(), good.measured_keys.end()),
            all_keys());
  EXPECT_EQ(summary.recorded, 9);
  EXPECT_EQ(summary.failed, 0);
  for (const auto& [key, status] : rows()) EXPECT_EQ(status, db::MeasurementStatus::ok) << key;
  EXPECT_NE(err_.find("swr-tune: device 0 is dropped from this run: 3 variants in a row ended "
                      "with its measurement worker dead"),
            std::string::npos)
      << err_;
}

TEST_F(MultiDeviceSession, AVariantThatFaultsOnEveryDeviceIsRecordedAsItsFault) {
  FakeVariantMeasurer a, b;
  const std::string faulty = nine_configs()[4].key();
  a.fault_keys = b.fault_keys = {faulty};
  a.delay = b.delay = std::chrono::milliseconds(10);
  const TuningSummary summary = run({&a, &b});
  EXPECT_EQ(summary.recorded, 9);
  EXPECT_EQ(summary.failed, 1);
  for (const auto& [key, status] : rows()) {
    EXPECT_EQ(status, key == faulty ? db::MeasurementStatus::fault : db::MeasurementStatus::ok)
        << key;
  }
  EXPECT_EQ(err_.find("dropped"), std::string::npos) << err_;
}

TEST_F(MultiDeviceSession, ADeviceWhoseWorkerCannotStartIsDropped) {
  warm_cache();
  FakeVariantMeasurer gone, good;
  gone.cannot_start = true;
  good.delay = std::chrono::milliseconds(40);
  const TuningSummary summary = run({&gone, &good});
  EXPECT_EQ(summary.recorded, 9);
  EXPECT_EQ(std::set<std::string>(good.measured_keys.begin(), good.measured_keys.end()),
            all_keys());
  EXPECT_NE(err_.find("device 0 is dropped from this run: the measurement worker could not start"),
            std::string::npos)
      << err_;
}

TEST_F(MultiDeviceSession, TheLastDeviceIsNeverDroppedForFaults) {
  FakeVariantMeasurer only;
  only.every_worker_dies = true;
  const TuningSummary summary = run({&only});
  EXPECT_EQ(summary.recorded, 9);
  EXPECT_EQ(summary.failed, 9);
  EXPECT_EQ(err_.find("dropped"), std::string::npos) << err_;
}

TEST_F(MultiDeviceSession, WhenNoDeviceCanStartTheRunEndsWithWhy) {
  FakeVariantMeasurer a, b;
  a.cannot_start = b.cannot_start = true;
  try {
    run({&a, &b});
    ADD_FAILURE() << "ran without any device";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("could not start: fake device is gone"),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(rows().empty());
}

}  // namespace
}  // namespace swr
