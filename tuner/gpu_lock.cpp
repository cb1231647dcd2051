#include "tuner/gpu_lock.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "tuner/text_format.hpp"

namespace swr {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kDefaultLockDirectory = "/tmp/swr-gpu-locks";

// "swr-tune pid 1234, user alice, since 2026-11-24 10:03:12 UTC": what a waiting tuner shows.
std::string holder_note() {
  const passwd* user = getpwuid(geteuid());
  char since[64] = "";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  if (gmtime_r(&now, &utc) != nullptr) std::strftime(since, sizeof(since), "%F %T UTC", &utc);
  return "swr-tune pid " + std::to_string(getpid()) + ", user " +
         (user != nullptr ? user->pw_name : std::to_string(geteuid())) + ", since " + since;
}

std::string lock_file_name(const std::string& uuid) {
  std::string name;
  for (char c : uuid) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  return name + ".lock";
}

std::string device_words(const PresentDevice& device) {
  return "device " + std::to_string(device.ordinal) + " (" + device.profile.description + ", " +
         device.uuid + ")";
}

}  // namespace

std::filesystem::path gpu_lock_directory() {
  const char* configured = std::getenv("SWR_LOCK_DIR");
  if (configured != nullptr && *configured != '\0') {
    std::filesystem::create_directories(configured);
    return configured;
  }
  const std::filesystem::path directory = kDefaultLockDirectory;
  if (::mkdir(directory.c_str(), 01777) == 0) {
    ::chmod(directory.c_str(), 01777);  // the umask must not keep other users out
  } else if (errno != EEXIST) {
    throw std::runtime_error("cannot create the GPU lock directory " + directory.string() + ": " +
                             std::strerror(errno) + " (set SWR_LOCK_DIR to another)");
  }
  struct stat status {};
  const bool usable = ::lstat(directory.c_str(), &status) == 0 && S_ISDIR(status.st_mode) &&
                      ((status.st_mode & S_IWOTH) == 0 || (status.st_mode & S_ISVTX) != 0);
  if (!usable) {
    throw std::runtime_error("the GPU lock directory " + directory.string() +
                             " is not a directory, or others may write to it without the sticky "
                             "bit: refused (set SWR_LOCK_DIR to a directory of your own)");
  }
  return directory;
}

std::unique_ptr<ExclusiveFileLock> take_profiler_turn(double& wait_ms) {
  wait_ms = 0;
  const char* setting = std::getenv("SWR_PROFILER_LOCK");
  if (setting != nullptr && std::string(setting) == "0") return nullptr;
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<ExclusiveFileLock> lock;
  try {
    lock = std::make_unique<ExclusiveFileLock>(gpu_lock_directory() / "range-profiler.lock");
    if (!lock->lock([] { return false; }, std::chrono::milliseconds(5))) return nullptr;
  } catch (const std::exception&) {
    return nullptr;  // a lock directory this process cannot use: count unlocked, as before
  }
  wait_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return lock;
}

GpuLocks::GpuLocks(const std::vector<PresentDevice>& devices, bool wait,
                   const std::function<bool()>& give_up) {
  std::vector<PresentDevice> ordered = devices;
  std::sort(ordered.begin(), ordered.end(),
            [](const PresentDevice& a, const PresentDevice& b) { return a.uuid < b.uuid; });
  const std::filesystem::path directory = gpu_lock_directory();
  const std::string note = holder_note();
  const Clock::time_point start = Clock::now();
  for (const PresentDevice& device : ordered) {
    auto lock = std::make_unique<ExclusiveFileLock>(directory / lock_file_name(device.uuid));
    if (!lock->try_lock()) {
      std::string holder = lock->holder_note();
      if (holder.empty()) holder = "it has not said who it is";
      if (!wait) {
        throw GpuBusyError(device_words(device) + " is being measured by another tuner (" + holder +
                           "): --no-wait, so this run does not wait; run it again once "
                           "that one is done");
      }
      std::fprintf(stderr,
                   "swr-tune: %s is being measured by another tuner (%s); waiting for it, so "
                   "that neither times the other's kernels (--no-wait fails instead)\n",
                   device_words(device).c_str(), holder.c_str());
      const Clock::time_point waiting_since = Clock::now();
      Clock::time_point next_word = waiting_since + std::chrono::minutes(1);
      const bool locked = lock->lock([&] {
        if (give_up && give_up()) return true;
        if (Clock::now() >= next_word) {
          next_word += std::chrono::minutes(1);
          std::fprintf(
              stderr, "swr-tune: still waiting for device %d (%s)\n", device.ordinal,
              format_duration(std::chrono::duration<double>(Clock::now() - waiting_since).count())
                  .c_str());
        }
        return false;
      });
      if (!locked) return;
      std::fprintf(
          stderr, "swr-tune: device %d is free after waiting %s\n", device.ordinal,
          format_duration(std::chrono::duration<double>(Clock::now() - waiting_since).count())
              .c_str());
    }
    lock->write_holder_note(note);
    locks_.push_back(std::move(lock));
  }
  waited_seconds_ = std::chrono::duration<double>(Clock::now() - start).count();
  acquired_ = true;
}

}  // namespace swr
