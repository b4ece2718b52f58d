// What a conformance run reports: the summary table on stdout, and JSON / JUnit XML files for
// CI systems and for submitting results (docs/plugin-guide.md).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "expectations.hpp"

namespace yirage::conformance {

struct JudgedResult {
  TestResult result;
  const Expectation *expectation = nullptr;
  Verdict verdict = Verdict::kAsExpected;
};

struct RunInfo {
  std::string plugin_path;
  std::string plugin_name, plugin_version;  // "" when the plugin could not be read
  int32_t device = 0;
  std::string device_name;
  std::string expectations_path;
};

// The table per group, the unexpected results, the stale expectations; returns the number of
// unexpected results (including unexpected passes).
int print_summary(std::FILE *out, const RunInfo &info, const std::vector<JudgedResult> &results,
                  const std::vector<const Expectation *> &unused);

void write_json(const std::string &path, const RunInfo &info, const std::vector<JudgedResult> &results);
void write_junit(const std::string &path, const RunInfo &info, const std::vector<JudgedResult> &results);

}  // namespace yirage::conformance
