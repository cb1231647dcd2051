// An exclusive lock on a file (flock), held for the life of the object and released by the kernel
// when the holder dies, however it dies (SIGKILL included): nothing stale is left to clean up.
// The tuner's per-GPU lock (tuner/gpu_lock.hpp) is one. Processes that share a lock directory
// need not be the same user: the file is made readable and writable by all, and a file another
// user made read-only can still be locked.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

namespace swr {

class ExclusiveFileLock {
 public:
  // Opens `path`, creating it when missing. A link, a named pipe or anything but a regular file
  // there is refused. Throws std::runtime_error naming the file when it cannot be opened.
  explicit ExclusiveFileLock(const std::filesystem::path& path);
  ~ExclusiveFileLock();  // releases the lock
  ExclusiveFileLock(const ExclusiveFileLock&) = delete;
  ExclusiveFileLock& operator=(const ExclusiveFileLock&) = delete;

  // Takes the lock if nobody holds it; never waits.
  bool try_lock();
  // Waits for the lock, asking `give_up` every `poll` (and stopping, unlocked, when it says true).
  bool lock(const std::function<bool()>& give_up,
            std::chrono::milliseconds poll = std::chrono::milliseconds(200));
  bool locked() const { return locked_; }

  // What the holder wrote into the file (who it is), for whoever waits; "" when nothing.
  std::string holder_note() const;
  // Once locked: replaces the file's content with `note` (skipped when the file is read-only).
  void write_holder_note(const std::string& note);

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool writable_ = false;
  bool locked_ = false;
};

}  // namespace swr
