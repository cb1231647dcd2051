// Runs a check in a child process that cannot write where the parent can: as root (CI), the child
// becomes nobody/nogroup, so that permissions apply to it; as anyone else they apply already.
// The child's verdict comes back as its exit status.
#pragma once

#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <string>

namespace swr::testing {

// Returns "" when `check` returned true in the child, else what went wrong.
inline std::string run_as_unprivileged_user(const std::function<bool()>& check) {
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) return "fork failed";
  if (child == 0) {
    if (geteuid() == 0) {
      const passwd* nobody = getpwnam("nobody");
      const group* nogroup = getgrnam("nogroup");
      const gid_t gid = nogroup != nullptr ? nogroup->gr_gid : 65534;
      if (nobody == nullptr || setgroups(0, nullptr) != 0 || setresgid(gid, gid, gid) != 0 ||
          setresuid(nobody->pw_uid, nobody->pw_uid, nobody->pw_uid) != 0) {
        _exit(3);
      }
    }
    try {
      _exit(check() ? 0 : 1);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "as nobody: %s\n", error.what());
      _exit(2);
    }
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return "waitpid failed";
  if (!WIFEXITED(status)) return "the child did not exit";
  switch (WEXITSTATUS(status)) {
    case 0:
      return "";
    case 1:
      return "the check failed";
    case 2:
      return "the check threw (message above)";
    case 3:
      return "could not become nobody";
    default:
      return "exit status " + std::to_string(WEXITSTATUS(status));
  }
}

}  // namespace swr::testing
