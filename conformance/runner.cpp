#include "runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace yirage::conformance {

using Clock = std::chrono::steady_clock;

TestResult run_in_process(const TestCase &test, const SessionOptions &options) {
  TestResult result;
  result.name = test.name;
  const auto start = Clock::now();
  try {
    Session session(options);
    test.run(session);
    result.outcome = Outcome::kPass;
  } catch (const TestNotSupported &e) {
    result.outcome = Outcome::kNotSupported;
    result.message = e.what();
  } catch (const TestFailure &e) {
    result.outcome = Outcome::kFail;
    result.message = e.what();
  } catch (const std::exception &e) {
    result.outcome = Outcome::kFail;
    result.message = std::string("exception: ") + e.what();
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

namespace {

// The child's report on its pipe: the outcome's name, a newline, the message.
std::string encode(const TestResult &r) {
  return std::string(outcome_name(r.outcome)) + "\n" + r.message;
}

void write_all(int fd, const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

struct Child {
  size_t index;
  pid_t pid;
  int fd;
  Clock::time_point start;
  std::string report;
};

Child start_child(const TestCase &test, size_t index, const SessionOptions &options) {
  int fds[2];
  // Close-on-exec: a compiler the plugin spawns must not hold the pipe open.
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);  // its own process group, so a timeout kills what it spawned too
    close(fds[0]);
    write_all(fds[1], encode(run_in_process(test, options)));
    close(fds[1]);
    std::fflush(nullptr);
    _exit(0);  // no static destructors: the plugin's threads may still be running
  }
  setpgid(pid, pid);
  close(fds[1]);
  return Child{index, pid, fds[0], Clock::now(), {}};
}

std::string signal_text(int sig) {
  const char *name = sigabbrev_np(sig);
  return "killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
}

TestResult finish(const TestCase &test, Child &child, bool timed_out, double timeout) {
  TestResult r;
  r.name = test.name;
  r.seconds = std::chrono::duration<double>(Clock::now() - child.start).count();
  if (timed_out) {
    kill(-child.pid, SIGKILL);
    kill(child.pid, SIGKILL);
  }
  int status = 0;
  while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  close(child.fd);
  if (timed_out) {
    r.outcome = Outcome::kTimeout;
    r.message = "no result after " + std::to_string(static_cast<int>(timeout)) + " s";
    return r;
  }
  const size_t newline = child.report.find('\n');
  const std::optional<Outcome> outcome =
      newline == std::string::npos ? std::nullopt : outcome_from_name(child.report.substr(0, newline));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && outcome) {
    r.outcome = *outcome;
    r.message = child.report.substr(newline + 1);
    return r;
  }
  r.outcome = Outcome::kCrash;
  r.message = WIFSIGNALED(status) ? signal_text(WTERMSIG(status))
                                  : "the test process exited with status " +
                                        std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return r;
}

}  // namespace

std::vector<TestResult> run_tests(const std::vector<const TestCase *> &tests, const RunOptions &options,
                                  const std::function<void(const TestResult &)> &done) {
  std::vector<TestResult> results(tests.size());
  if (!options.isolate) {
    for (size_t i = 0; i < tests.size(); ++i) {
      results[i] = run_in_process(*tests[i], options.session);
      done(results[i]);
    }
    return results;
  }
  const auto timeout = std::chrono::duration<double>(options.timeout_seconds);
  std::vector<Child> running;
  size_t next = 0;
  while (next < tests.size() || !running.empty()) {
    while (next < tests.size() && static_cast<int>(running.size()) < std::max(1, options.jobs)) {
      running.push_back(start_child(*tests[next], next, options.session));
      ++next;
    }
    // Wait for a report, an exit (EOF) or the nearest deadline.
    std::vector<pollfd> fds;
    auto deadline = Clock::time_point::max();
    for (const Child &c : running) {
      fds.push_back({c.fd, POLLIN, 0});
      deadline = std::min(deadline, c.start + std::chrono::duration_cast<Clock::duration>(timeout));
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    poll(fds.data(), fds.size(), static_cast<int>(std::clamp<int64_t>(wait.count() + 1, 0, 1 << 30)));
    std::vector<Child> still;
    for (size_t i = 0; i < running.size(); ++i) {
      Child &c = running[i];
      bool ended = false;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[4096];
        const ssize_t n = read(c.fd, buffer, sizeof buffer);
        if (n > 0) {
          if (c.report.size() < (1 << 16)) c.report.append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          ended = true;
        }
      }
      const bool timed_out = !ended && Clock::now() - c.start >= timeout;
      if (ended || timed_out) {
        results[c.index] = finish(*tests[c.index], c, timed_out, options.timeout_seconds);
        done(results[c.index]);
      } else {
        still.push_back(std::move(c));
      }
    }
    running = std::move(still);
  }
  return results;
}

}  // namespace yirage::conformance
