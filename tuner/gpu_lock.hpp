// One GPU, one tuner: a tuning run holds an exclusive lock per device while it measures, so that
// no two swr tuners time each other's kernels or fight over the performance counters. The lock is
// a file per device UUID (the same GPU whatever CUDA_VISIBLE_DEVICES calls it) in a directory all
// tuners of the machine share, locked with flock: the kernel releases it when the holder ends,
// however it ends.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "support/file_lock.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr {

// $SWR_LOCK_DIR when set, else /tmp/swr-gpu-locks: machine-wide, so that two users' tuners on one
// GPU wait for each other too. Created when missing (the default one sticky and writable by all,
// as /tmp is); a link, or a directory others may write without the sticky bit, is refused
// (std::runtime_error).
std::filesystem::path gpu_lock_directory();

// The host's range profiler, one turn at a time (issue 29): the driver profiles one GPU at a time,
// and two GPUs profiling at once each profile at half speed, so a worker about to collect counters
// takes this host-wide lock (range-profiler.lock in gpu_lock_directory()) and the other GPUs'
// workers go on timing meanwhile. Waits for it; `wait_ms` gets how long. Nothing (an empty pointer,
// no wait) when SWR_PROFILER_LOCK=0 or when the lock file cannot be used (counting goes on
// unlocked). Released when the returned lock goes, or when its process dies.
std::unique_ptr<ExclusiveFileLock> take_profiler_turn(double& wait_ms);

// A device another tuner holds, with --no-wait.
class GpuBusyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class GpuLocks {
 public:
  // Locks every device, in UUID order (two tuners asking for overlapping sets cannot deadlock).
  // For a device another tuner holds, with `wait`: says on stderr who holds it and that this run
  // waits, says so again every minute, and once it is this run's, how long the wait took; without
  // `wait`: throws GpuBusyError naming the device and the holder. `give_up` (Ctrl-C), asked while
  // waiting, ends the wait with nothing measured: acquired() is false then.
  GpuLocks(const std::vector<PresentDevice>& devices, bool wait,
           const std::function<bool()>& give_up = {});
  GpuLocks(const GpuLocks&) = delete;
  GpuLocks& operator=(const GpuLocks&) = delete;

  bool acquired() const { return acquired_; }
  double waited_seconds() const { return waited_seconds_; }

 private:
  std::vector<std::unique_ptr<ExclusiveFileLock>> locks_;
  bool acquired_ = false;
  double waited_seconds_ = 0;
};

}  // namespace swr
