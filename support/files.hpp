// Files a process makes for itself: a temporary directory of its own, and a file written so that
// no reader ever sees it half-written.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

namespace swr {

// A fresh directory of this process's own under the system temp dir (mkdtemp: nobody else can
// have made or guessed it), removed with everything in it on destruction.
class TemporaryDirectory {
 public:
  // Named `prefix` followed by six random characters. Throws std::runtime_error when it cannot.
  explicit TemporaryDirectory(std::string_view prefix = "swr-");
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `data` to a temporary name beside `path` and renames it over `path` (atomic on one file
// system): a reader sees the old file or the whole new one. Throws std::runtime_error when it
// cannot write (the temporary is removed), std::filesystem::filesystem_error when the rename fails.
void write_atomically(const std::filesystem::path& path, const char* data, std::size_t size);

}  // namespace swr
