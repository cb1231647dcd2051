// A fresh directory of this process's own under the system temp dir (mkdtemp: nobody else can
// have made or guessed it), removed with everything in it on destruction.
#pragma once

#include <filesystem>
#include <string_view>

namespace swr {

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

}  // namespace swr
