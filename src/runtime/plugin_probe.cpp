// probe_plugins (plugin.hpp): each plugin loaded first in a forked child, so that one that
// crashes, exits or hangs while loading is skipped with the reason instead of taking the host
// down (docs/plugin-guide.md §6).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "runtime/plugin.hpp"
#include "util/error.hpp"

namespace yirage::runtime {

namespace {

using Clock = std::chrono::steady_clock;

// The most probe processes running at once.
constexpr size_t kProbesAtOnce = 16;

void write_all(int fd, const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The child's end of its pipe, for its atexit handler.
int probe_reply_fd = -1;

// The child: loads the plugin and writes "ok", or the Error's code, a newline and its message,
// then ends without running anything of the host's (no atexit handlers, no static destructors,
// no flush of stdio buffers it inherited).
[[noreturn]] void probe_in_child(int fd, pid_t parent, const std::string &path, const std::string &cache_dir) {
  // A crash must end the child with its signal, whatever handlers the host installed (Python's
  // faulthandler, a JVM's, a sanitizer's).
  for (const int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) signal(sig, SIG_DFL);
  // A plugin that calls exit() would run the host's atexit handlers and static destructors in
  // the child (one may remove the host's files); this handler, registered after them, runs
  // before them and ends the child with "exit".
  probe_reply_fd = fd;
  std::atexit([] {
    write_all(probe_reply_fd, "exit\n");
    _exit(0);
  });
  // A probe left behind by a host that died (Ctrl-C during a hang) ends with it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0);
  std::string reply = "ok\n";
  try {
    // Not destroyed: the child ends right away, and destroy is no part of loading.
    static_cast<void>(Plugin::load(path, cache_dir).release());
  } catch (const Error &e) {
    reply = std::to_string(static_cast<int>(e.code())) + "\n" + e.what();
  } catch (const std::exception &e) {
    reply = std::to_string(static_cast<int>(ErrorCode::kBackend)) + "\n" + path + ": " + e.what();
  }
  write_all(fd, reply);
  _exit(0);
}

struct Probe {
  size_t index;
  pid_t pid;
  int fd;  // -1 once the child's end is closed
  Clock::time_point start;
  std::string reply;
};

// Reads what the child has written so far (the descriptor does not block).
void drain(Probe &probe) {
  char buffer[4096];
  while (probe.fd >= 0) {
    const ssize_t n = read(probe.fd, buffer, sizeof buffer);
    if (n > 0) {
      if (probe.reply.size() < (1 << 16)) probe.reply.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return;
    } else {
      close(probe.fd);
      probe.fd = -1;
    }
  }
}

std::string signal_text(int sig) {
  const char *name = sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
}

// What a child that ended with wait status `status` (none: unknown, as where the host has
// SIGCHLD ignored and the kernel reaps children) and wrote `reply` says of its plugin.
std::optional<Error> probe_outcome(const std::string &path, std::optional<int> status, const std::string &reply) {
  const size_t newline = reply.find('\n');
  const bool replied = newline != std::string::npos;
  if (replied && (!status || (WIFEXITED(*status) && WEXITSTATUS(*status) == 0))) {
    const std::string head = reply.substr(0, newline);
    if (head == "ok") return std::nullopt;
    if (head == "exit") {
      return Error(ErrorCode::kBackend,
                   path + ": the plugin called exit() in its probe process while loading (a plugin must never exit)");
    }
    const int code = std::atoi(head.c_str());
    const bool known =
        code >= static_cast<int>(ErrorCode::kInvalidArgument) && code <= static_cast<int>(ErrorCode::kInternal);
    return Error(known ? static_cast<ErrorCode>(code) : ErrorCode::kBackend, reply.substr(newline + 1));
  }
  const std::string how = !status                ? "ended without a result"
                          : WIFSIGNALED(*status) ? "was killed by " + signal_text(WTERMSIG(*status))
                                                 : "exited with status " + std::to_string(WEXITSTATUS(*status)) +
                                                       " (a plugin must never exit)";
  return Error(ErrorCode::kBackend, path + ": the plugin's probe process " + how + " while loading it");
}

Probe start_probe(size_t index, const std::string &path, const std::string &cache_dir) {
  int fds[2];
  // Close-on-exec: a compiler or driver helper the plugin spawns must not hold the pipe open.
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw Error(ErrorCode::kInternal, "cannot probe " + path + ": pipe: " + std::strerror(errno));
  }
  // The child inherits stdio buffers; flushed now, a plugin that calls exit() cannot print them twice.
  std::fflush(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    probe_in_child(fds[1], parent, path, cache_dir);
  }
  const int fork_errno = errno;
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    throw Error(ErrorCode::kInternal, "cannot probe " + path + ": fork: " + std::strerror(fork_errno));
  }
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  return Probe{index, pid, fds[0], Clock::now(), {}};
}

}  // namespace

std::vector<std::optional<Error>> probe_plugins(const std::vector<std::string> &paths, const std::string &cache_dir,
                                                double timeout_seconds) {
  std::vector<std::optional<Error>> results(paths.size());
  const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
  std::vector<Probe> running;
  size_t next = 0;
  while (next < paths.size() || !running.empty()) {
    for (; next < paths.size() && running.size() < kProbesAtOnce; ++next) {
      try {
        running.push_back(start_probe(next, paths[next], cache_dir));
      } catch (const Error &e) {
        results[next] = e;
      }
    }
    // Wake for output or every 10 ms: a child may end while something it spawned holds the pipe.
    std::vector<pollfd> fds;
    for (const Probe &p : running) {
      if (p.fd >= 0) fds.push_back({p.fd, POLLIN, 0});
    }
    poll(fds.data(), fds.size(), 10);
    std::vector<Probe> still;
    for (Probe &p : running) {
      drain(p);
      int status = 0;
      const pid_t ended = waitpid(p.pid, &status, WNOHANG);
      // SIGCHLD ignored (the kernel reaps children) or another thread's waitpid(-1) took it.
      const bool reaped_elsewhere = ended < 0 && errno == ECHILD;
      if (ended == p.pid || reaped_elsewhere) {
        drain(p);  // what it wrote before it ended
        results[p.index] =
            probe_outcome(paths[p.index], reaped_elsewhere ? std::nullopt : std::optional<int>(status), p.reply);
      } else if (Clock::now() - p.start >= timeout) {
        kill(p.pid, SIGKILL);
        while (waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
        }
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", timeout_seconds);
        results[p.index] =
            Error(ErrorCode::kBackend, paths[p.index] + ": the plugin did not finish loading within " + seconds +
                                           " s in its probe process, which was killed "
                                           "(YIRAGE_PLUGIN_PROBE_TIMEOUT sets the limit)");
      } else {
        still.push_back(std::move(p));
        continue;
      }
      if (p.fd >= 0) close(p.fd);
    }
    running = std::move(still);
  }
  return results;
}

}  // namespace yirage::runtime
