#include "support/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>

#include <fstream>
#include <stdexcept>
#include <string>

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "swr/usage_error.hpp"

namespace swr {

std::string why_not_regular_file(const std::filesystem::path& path) {
  struct stat status {};
  if (stat(path.c_str(), &status) != 0) return std::strerror(errno);
  if (S_ISREG(status.st_mode)) return "";
  if (S_ISFIFO(status.st_mode)) return "a named pipe, not a regular file";
  if (S_ISCHR(status.st_mode) || S_ISBLK(status.st_mode)) return "a device, not a regular file";
  if (S_ISDIR(status.st_mode)) return "a directory, not a regular file";
  return "not a regular file";
}

std::string read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                              std::string_view what) {
  const std::string name = std::string(what) + " " + path.string();
  // O_NONBLOCK: opening a named pipe with no writer must not wait for one.
  const int descriptor = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (descriptor < 0) throw UsageError("cannot read " + name + ": " + std::strerror(errno));
  struct Closer {
    int descriptor;
    ~Closer() { close(descriptor); }
  } closer{descriptor};
  struct stat status {};
  if (fstat(descriptor, &status) != 0) {
    throw UsageError("cannot read " + name + ": " + std::strerror(errno));
  }
  if (!S_ISREG(status.st_mode)) {
    throw UsageError("cannot read " + name + ": it is " + why_not_regular_file(path));
  }
  const auto size = static_cast<std::uint64_t>(status.st_size);
  if (size > max_bytes) {
    throw UsageError("cannot read " + name + ": " + std::to_string(size) +
                     " bytes, more than the " + std::to_string(max_bytes) + " a " +
                     std::string(what) + " may have");
  }
  std::string bytes(size, '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = read(descriptor, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw UsageError("cannot read " + name + ": " + std::strerror(errno));
    if (got == 0) break;  // shrank while being read: what is there is checked by the caller
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  return bytes;
}

TemporaryDirectory::TemporaryDirectory(std::string_view prefix) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (std::string(prefix) + "XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot make a temporary directory " + pattern + ": " +
                             std::strerror(errno));
  }
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;
  // A test may have taken its own write permission away: give it back so removal works.
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ignored);
  std::filesystem::remove_all(path_, ignored);
}

void write_atomically(const std::filesystem::path& path, const char* data, std::size_t size) {
  std::string name = ".";  // appended: GCC 12 warns falsely (-Wrestrict) on "literal" + string
  name += path.filename().string();
  name += ".tmp-" + std::to_string(getpid());
  const std::filesystem::path temporary = path.parent_path() / name;
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(data, static_cast<std::streamsize>(size));
    out.close();
    if (!out) {
      std::filesystem::remove(temporary);
      throw std::runtime_error("cannot write " + temporary.string());
    }
  }
  std::filesystem::rename(temporary, path);
}

}  // namespace swr
