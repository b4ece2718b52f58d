// run_in_child for the C++ unit tests (header-only; not part of the library): a test body run in
// a forked child with bounded memory and time, for code that once read until the OOM killer
// stopped it (a cache entry linked to /dev/zero).
#pragma once

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <string>

namespace yirage::testing {

// Runs `body` in a child process, "" from it being success (anything else is printed as the
// failure): with at most 4 GiB of address space (where no sanitizer reserves address space) and
// 120 s; and, when `as_nobody`, as user nobody (for a test run as root, whom permissions do not
// stop). Returns false when the child could not become nobody, or the body ended it with status
// 77 (nothing to test).
inline bool run_in_child(const std::function<std::string()> &body, bool as_nobody = false) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    return true;
  }
  if (pid == 0) {
    if (as_nobody && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) _exit(77);
#if !defined(__SANITIZE_ADDRESS__)
    const rlimit limit{rlim_t{4} << 30, rlim_t{4} << 30};
    setrlimit(RLIMIT_AS, &limit);
#endif
    alarm(120);
    std::string failure;
    try {
      failure = body();
    } catch (const std::exception &e) {
      failure = std::string("threw: ") + e.what();
    }
    if (!failure.empty()) std::fprintf(stderr, "%s\n", failure.c_str());
    std::fflush(nullptr);
    _exit(failure.empty() ? 0 : 1);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) return false;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status)) : "failed (see above)");
  return true;
}

}  // namespace yirage::testing
