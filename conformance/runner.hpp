// Running tests: each in a child process of its own (fork), so a crash or a hang ends that test
// as Crash or Timeout and the runner goes on.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "suite.hpp"

namespace yirage::conformance {

struct TestResult {
  std::string name;
  Outcome outcome = Outcome::kFail;
  std::string message;  // why it failed, was not supported, crashed or timed out
  double seconds = 0;
};

struct RunOptions {
  SessionOptions session;
  double timeout_seconds = 300;  // per test
  int jobs = 1;                  // tests running at once
  bool isolate = true;           // false: run in this process (for debuggers; a crash ends all)
};

// Runs `tests` and calls `done` for each result as it arrives (in completion order); returns
// the results in the order of `tests`.
std::vector<TestResult> run_tests(const std::vector<const TestCase *> &tests, const RunOptions &options,
                                  const std::function<void(const TestResult &)> &done);

// One test in this process: what the child does.
TestResult run_in_process(const TestCase &test, const SessionOptions &options);

}  // namespace yirage::conformance
