#include "runtime/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

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

}  // namespace swr
