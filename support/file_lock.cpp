#include "support/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace swr {
namespace {

constexpr std::size_t kMaximumNoteBytes = 512;

std::runtime_error cannot_open(const std::filesystem::path& path, const std::string& why) {
  return std::runtime_error("cannot open the lock file " + path.string() + ": " + why);
}

}  // namespace

ExclusiveFileLock::ExclusiveFileLock(const std::filesystem::path& path) : path_(path) {
  // O_NOFOLLOW: a link planted at the name is not followed; O_NONBLOCK: a named pipe there does
  // not hang the open (it is refused below).
  const int flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | flags, 0666);
  if (fd_ >= 0) {
    fchmod(fd_, 0666);  // every user of a shared lock directory may open it (despite the umask)
  } else if (errno == EEXIST) {
    fd_ = ::open(path.c_str(), O_RDWR | flags);
    if (fd_ < 0 && errno == EACCES) fd_ = ::open(path.c_str(), O_RDONLY | flags);
  }
  if (fd_ < 0) {
    const int error = errno;
    throw cannot_open(path, error == ELOOP ? "it is a symbolic link" : std::strerror(error));
  }
  struct stat status {};
  if (fstat(fd_, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw cannot_open(path, "it is not a regular file");
  }
  writable_ = (fcntl(fd_, F_GETFL) & O_ACCMODE) == O_RDWR;
}

ExclusiveFileLock::~ExclusiveFileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

bool ExclusiveFileLock::try_lock() {
  if (locked_) return true;
  while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return false;
    throw std::runtime_error("cannot lock " + path_.string() + ": " + std::strerror(errno));
  }
  locked_ = true;
  return true;
}

bool ExclusiveFileLock::lock(const std::function<bool()>& give_up, std::chrono::milliseconds poll) {
  // Polled rather than a blocking flock, so that Ctrl-C (through give_up) ends the wait at once.
  while (!try_lock()) {
    if (give_up && give_up()) return false;
    std::this_thread::sleep_for(poll);
  }
  return true;
}

std::string ExclusiveFileLock::holder_note() const {
  char buffer[kMaximumNoteBytes];
  const ssize_t read = pread(fd_, buffer, sizeof(buffer), 0);
  if (read <= 0) return {};
  std::string note(buffer, static_cast<std::size_t>(read));
  for (char& c : note) {
    if (c == '\n' || c == '\r' || c == '\0') c = ' ';
  }
  while (!note.empty() && note.back() == ' ') note.pop_back();
  return note;
}

void ExclusiveFileLock::write_holder_note(const std::string& note) {
  if (!locked_ || !writable_) return;
  const std::string text = note.substr(0, kMaximumNoteBytes);
  // Best effort: the note only explains a wait to someone else.
  if (ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t written = pwrite(fd_, text.data(), text.size(), 0);
  }
}

}  // namespace swr
