// One GPU, one tuner (tuner/gpu_lock.hpp) with real processes and real flock: a second tuner on a
// device waits (and says so, with the wait), --no-wait fails naming the holder, a holder killed
// with SIGKILL releases the device at once, and devices are locked in one order.
#include "tuner/gpu_lock.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <thread>

#include "support/child_process.hpp"
#include "support/files.hpp"

namespace swr {
namespace {

using Clock = std::chrono::steady_clock;

PresentDevice fake_device(int ordinal) {
  PresentDevice device;
  device.ordinal = ordinal;
  device.uuid = "GPU-6b1c0d2e-0000-0000-0000-00000000000" + std::to_string(ordinal);
  device.profile = *find_gpu_profile("h200");
  device.profile.description = "NVIDIA H200";
  return device;
}

class GpuLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("SWR_LOCK_DIR", (directory_.path() / "locks").c_str(), 1);
    ASSERT_EQ(pipe(ready_), 0);
  }
  void TearDown() override {
    unsetenv("SWR_LOCK_DIR");
    close(ready_[0]);
    close(ready_[1]);
  }

  // Another tuner: a process that locks `devices`, says so through the pipe, and holds them for
  // `hold` (or until killed).
  pid_t holder(std::vector<PresentDevice> devices, std::chrono::milliseconds hold) {
    const int ready = ready_[1];
    const pid_t child = run_in_child([devices, hold, ready] {
      const GpuLocks locks(devices, true);
      const char byte = 'x';
      if (write(ready, &byte, 1) != 1) return 4;
      std::this_thread::sleep_for(hold);
      return 0;
    });
    char byte = 0;
    EXPECT_EQ(read(ready_[0], &byte, 1), 1);  // it holds them now
    return child;
  }

  TemporaryDirectory directory_;
  int ready_[2] = {-1, -1};
};

TEST_F(GpuLockTest, ASecondTunerWaitsForTheFirstAndSaysHowLong) {
  const pid_t first = holder({fake_device(0)}, std::chrono::milliseconds(1500));
  ::testing::internal::CaptureStderr();
  const Clock::time_point start = Clock::now();
  const GpuLocks second({fake_device(0)}, true);
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(second.acquired());
  EXPECT_GE(waited, 1.0);
  EXPECT_GE(second.waited_seconds(), 1.0);
  const ChildExit exit = wait_for_child(first);
  EXPECT_EQ(exit.code, 0);
  EXPECT_NE(said.find("device 0 (NVIDIA H200, GPU-6b1c0d2e-0000-0000-0000-000000000000) is being "
                      "measured by another tuner (swr-tune pid " +
                      std::to_string(first)),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("waiting for it"), std::string::npos) << said;
  EXPECT_NE(said.find("device 0 is free after waiting 1."), std::string::npos) << said;
}

TEST_F(GpuLockTest, NoWaitFailsNamingTheHolder) {
  const pid_t first = holder({fake_device(1)}, std::chrono::seconds(30));
  try {
    const GpuLocks second({fake_device(0), fake_device(1)}, false);
    ADD_FAILURE() << "locked a device another tuner holds";
  } catch (const GpuBusyError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("device 1 (NVIDIA H200, "), std::string::npos) << what;
    EXPECT_NE(what.find("swr-tune pid " + std::to_string(first)), std::string::npos) << what;
    EXPECT_NE(what.find("--no-wait"), std::string::npos) << what;
  }
  // Device 0, free, was not kept locked by the failed attempt.
  EXPECT_TRUE(GpuLocks({fake_device(0)}, false).acquired());
  kill(first, SIGKILL);
  wait_for_child(first);
}

TEST_F(GpuLockTest, AHolderKilledWithSigkillReleasesTheDevice) {
  const pid_t first = holder({fake_device(0), fake_device(1)}, std::chrono::seconds(60));
  EXPECT_THROW(GpuLocks({fake_device(1)}, false), GpuBusyError);
  ASSERT_EQ(kill(first, SIGKILL), 0);
  const ChildExit exit = wait_for_child(first);
  EXPECT_TRUE(exit.signaled);
  const Clock::time_point start = Clock::now();
  const GpuLocks after({fake_device(0), fake_device(1)}, false);  // no wait: free at once
  EXPECT_TRUE(after.acquired());
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 1.0);
}

TEST_F(GpuLockTest, AWaitEndsWhenTheUserGivesUp) {
  const pid_t first = holder({fake_device(0)}, std::chrono::seconds(60));
  ::testing::internal::CaptureStderr();
  const Clock::time_point start = Clock::now();
  const GpuLocks second({fake_device(0)}, true,
                        [&] { return Clock::now() - start > std::chrono::milliseconds(300); });
  ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(second.acquired());
  kill(first, SIGKILL);
  wait_for_child(first);
}

TEST_F(GpuLockTest, TheLockFileIsNeitherFollowedThroughALinkNorAPipe) {
  const std::filesystem::path locks = directory_.path() / "locks";
  std::filesystem::create_directories(locks);
  std::filesystem::create_symlink(directory_.path() / "elsewhere",
                                  locks / (fake_device(0).uuid + ".lock"));
  EXPECT_THROW(GpuLocks({fake_device(0)}, false), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(directory_.path() / "elsewhere"));
  ASSERT_EQ(mkfifo((locks / (fake_device(1).uuid + ".lock")).c_str(), 0600), 0);
  EXPECT_THROW(GpuLocks({fake_device(1)}, false), std::runtime_error);  // without hanging
}

// The host's range profiler, one worker at a time: a worker about to count waits while another
// holds the turn, and says how long; SWR_PROFILER_LOCK=0 takes no turn.
TEST_F(GpuLockTest, ProfilerTurnWaitsForTheWorkerCountingOnAnotherGpu) {
  const int ready = ready_[1];
  const pid_t other = run_in_child([ready] {
    double waited = 0;
    const std::unique_ptr<ExclusiveFileLock> turn = take_profiler_turn(waited);
    if (!turn) return 5;
    const char byte = 'x';
    if (write(ready, &byte, 1) != 1) return 4;
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    return 0;
  });
  char byte = 0;
  ASSERT_EQ(read(ready_[0], &byte, 1), 1);
  double waited = 0;
  {
    const std::unique_ptr<ExclusiveFileLock> turn = take_profiler_turn(waited);
    ASSERT_TRUE(turn);
    EXPECT_GE(waited, 400.0);
    EXPECT_TRUE(std::filesystem::exists(directory_.path() / "locks" / "range-profiler.lock"));
  }
  EXPECT_EQ(wait_for_child(other).code, 0);

  setenv("SWR_PROFILER_LOCK", "0", 1);
  EXPECT_EQ(take_profiler_turn(waited), nullptr);
  EXPECT_EQ(waited, 0.0);
  unsetenv("SWR_PROFILER_LOCK");
}

}  // namespace
}  // namespace swr
