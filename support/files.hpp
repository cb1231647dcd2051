// Files a process makes for itself: a temporary directory of its own, and a file written so that
// no reader ever sees it half-written.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
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

// The bytes of `path`, which must be a regular file (after links) of at most `max_bytes`. A named
// pipe, a device (e.g. a link to /dev/zero), a directory or a bigger file is refused with a
// UsageError naming the file, before any byte is read: such a file would hang the reader or
// exhaust its memory. `what` names the file's role in the message ("manifest", "cubin").
std::string read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                              std::string_view what);

// A regular file (after links)? "" if so, else why not ("a named pipe", "a device", ...).
std::string why_not_regular_file(const std::filesystem::path& path);

}  // namespace swr
