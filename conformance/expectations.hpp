// Expectations files: per plugin, the tests known to fail or to be unsupported.
//
//   # comment
//   <glob>  <Outcome>  [reason…]
//
// Outcome is Fail, NotSupported, Crash or Timeout; the first line whose glob (fnmatch) matches a
// test's name applies. A result is expected when it equals its line's outcome, when it is a Pass
// with no line, or when it is NotSupported (never a failure). A Pass of a test with a line is unexpected: the line is
// stale and must go, so the file stays honest.
#pragma once

#include <string>
#include <vector>

#include "runner.hpp"

namespace yirage::conformance {

struct Expectation {
  std::string pattern;
  Outcome outcome;
  std::string reason;
  int line = 0;
};

// Throws std::runtime_error naming the file and line for anything malformed.
std::vector<Expectation> load_expectations(const std::string &path);

// The line that applies to `name`, or nullptr.
const Expectation *find_expectation(const std::vector<Expectation> &expectations, const std::string &name);

enum class Verdict { kAsExpected, kUnexpected, kUnexpectedPass };
Verdict judge(const TestResult &result, const Expectation *expectation);

}  // namespace yirage::conformance
