#include "expectations.hpp"

#include <fnmatch.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace yirage::conformance {

std::vector<Expectation> load_expectations(const std::string &path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read expectations file " + path);
  std::vector<Expectation> expectations;
  std::string text;
  for (int line = 1; std::getline(file, text); ++line) {
    const size_t hash = text.find('#');
    if (hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    std::string pattern, outcome_text;
    if (!(words >> pattern)) continue;  // blank or comment
    const std::string where = path + ":" + std::to_string(line) + ": ";
    if (!(words >> outcome_text)) throw std::runtime_error(where + "'" + pattern + "' has no outcome");
    const std::optional<Outcome> outcome = outcome_from_name(outcome_text);
    if (!outcome || *outcome == Outcome::kPass) {
      throw std::runtime_error(where + "unknown outcome '" + outcome_text +
                               "' (expected Fail, NotSupported, Crash or Timeout)");
    }
    std::string reason;
    std::getline(words >> std::ws, reason);
    expectations.push_back({pattern, *outcome, reason, line});
  }
  return expectations;
}

const Expectation *find_expectation(const std::vector<Expectation> &expectations, const std::string &name) {
  for (const Expectation &e : expectations) {
    if (fnmatch(e.pattern.c_str(), name.c_str(), 0) == 0) return &e;
  }
  return nullptr;
}

Verdict judge(const TestResult &result, const Expectation *expectation) {
  // The plugin saying it does not support something is never a failure.
  if (result.outcome == Outcome::kNotSupported) return Verdict::kAsExpected;
  if (expectation == nullptr) {
    return result.outcome == Outcome::kPass ? Verdict::kAsExpected : Verdict::kUnexpected;
  }
  if (result.outcome == expectation->outcome) return Verdict::kAsExpected;
  return result.outcome == Outcome::kPass ? Verdict::kUnexpectedPass : Verdict::kUnexpected;
}

}  // namespace yirage::conformance
