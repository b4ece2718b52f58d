#include "report.hpp"

#include <array>
#include <fstream>
#include <map>
#include <stdexcept>

namespace yirage::conformance {
namespace {

constexpr Outcome kOutcomes[] = {Outcome::kPass, Outcome::kFail, Outcome::kNotSupported, Outcome::kCrash,
                                 Outcome::kTimeout};

std::string group_of(const std::string &name) {
  return name.substr(0, name.find('.'));
}

std::string json_string(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", c);
          out += hex;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string xml_text(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default:
        // XML 1.0 has no place for other control characters.
        out += (c < 0x20 && c != '\n' && c != '\t') ? '?' : static_cast<char>(c);
    }
  }
  return out;
}

const char *verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kAsExpected: return "as_expected";
    case Verdict::kUnexpected: return "unexpected";
    case Verdict::kUnexpectedPass: return "unexpected_pass";
  }
  return "?";
}

std::ofstream open_report(const std::string &path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  return out;
}

}  // namespace

int print_summary(std::FILE *out, const RunInfo &info, const std::vector<JudgedResult> &results,
                  const std::vector<const Expectation *> &unused) {
  std::map<std::string, std::array<int, 5>> groups;
  std::array<int, 5> total{};
  for (const JudgedResult &j : results) {
    ++groups[group_of(j.result.name)][static_cast<size_t>(j.result.outcome)];
    ++total[static_cast<size_t>(j.result.outcome)];
  }
  std::fprintf(out, "\nplugin %s %s (%s), device %d%s%s\n", info.plugin_name.c_str(), info.plugin_version.c_str(),
               info.plugin_path.c_str(), info.device, info.device_name.empty() ? "" : ": ", info.device_name.c_str());
  std::fprintf(out, "%-14s", "group");
  for (Outcome o : kOutcomes) std::fprintf(out, " %12s", outcome_name(o));
  std::fprintf(out, "\n");
  auto row = [&](const std::string &name, const std::array<int, 5> &counts) {
    std::fprintf(out, "%-14s", name.c_str());
    for (int c : counts) std::fprintf(out, " %12d", c);
    std::fprintf(out, "\n");
  };
  for (const auto &[name, counts] : groups) row(name, counts);
  row("total", total);

  int unexpected = 0, expected_failures = 0;
  for (const JudgedResult &j : results) {
    if (j.verdict == Verdict::kAsExpected) {
      if (j.expectation && j.result.outcome != Outcome::kNotSupported) ++expected_failures;
      continue;
    }
    if (unexpected++ == 0) std::fprintf(out, "\nunexpected results:\n");
    if (j.verdict == Verdict::kUnexpectedPass) {
      std::fprintf(out, "  %-44s Pass, but %s:%d expects %s: remove that line\n", j.result.name.c_str(),
                   info.expectations_path.c_str(), j.expectation->line, outcome_name(j.expectation->outcome));
    } else {
      std::fprintf(out, "  %-44s %s: %s\n", j.result.name.c_str(), outcome_name(j.result.outcome),
                   j.result.message.c_str());
    }
  }
  for (const Expectation *e : unused) {
    std::fprintf(out, "note: %s:%d (%s) matches no test that ran\n", info.expectations_path.c_str(), e->line,
                 e->pattern.c_str());
  }
  std::fprintf(out,
               "\n%zu tests: %d passed, %d failed, %d not supported, %d crashed, %d timed out; "
               "%d expected failures, %d unexpected\n",
               results.size(), total[0], total[1], total[2], total[3], total[4], expected_failures, unexpected);
  return unexpected;
}

void write_json(const std::string &path, const RunInfo &info, const std::vector<JudgedResult> &results) {
  std::ofstream out = open_report(path);
  out << "{\n  \"suite\": \"yirage-conformance\",\n  \"plugin\": {\"path\": " << json_string(info.plugin_path)
      << ", \"name\": " << json_string(info.plugin_name) << ", \"version\": " << json_string(info.plugin_version)
      << "},\n  \"device\": {\"index\": " << info.device << ", \"name\": " << json_string(info.device_name)
      << "},\n  \"tests\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const JudgedResult &j = results[i];
    out << (i ? ",\n    " : "\n    ") << "{\"name\": " << json_string(j.result.name) << ", \"outcome\": \""
        << outcome_name(j.result.outcome) << "\", \"verdict\": \"" << verdict_name(j.verdict)
        << "\", \"seconds\": " << j.result.seconds << ", \"message\": " << json_string(j.result.message);
    if (j.expectation) {
      out << ", \"expected\": \"" << outcome_name(j.expectation->outcome)
          << "\", \"expectation_line\": " << j.expectation->line;
    }
    out << "}";
  }
  out << "\n  ]\n}\n";
  if (!out) throw std::runtime_error("writing " + path + " failed");
}

void write_junit(const std::string &path, const RunInfo &info, const std::vector<JudgedResult> &results) {
  int failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  for (const JudgedResult &j : results) {
    seconds += j.result.seconds;
    if (j.verdict == Verdict::kAsExpected) {
      skipped += j.result.outcome != Outcome::kPass;
    } else if (j.result.outcome == Outcome::kCrash || j.result.outcome == Outcome::kTimeout) {
      ++errors;
    } else {
      ++failures;
    }
  }
  std::ofstream out = open_report(path);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
      << "  <testsuite name=\"yirage-conformance." << xml_text(info.plugin_name) << "\" tests=\"" << results.size()
      << "\" failures=\"" << failures << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\""
      << seconds << "\">\n";
  for (const JudgedResult &j : results) {
    const std::string &name = j.result.name;
    const size_t dot = name.find('.');
    out << "    <testcase classname=\"" << xml_text(name.substr(0, dot)) << "\" name=\""
        << xml_text(dot == std::string::npos ? name : name.substr(dot + 1)) << "\" time=\"" << j.result.seconds
        << "\">";
    const std::string message = xml_text(j.result.message);
    if (j.verdict == Verdict::kUnexpectedPass) {
      out << "<failure message=\"passes, but the expectations file expects " << outcome_name(j.expectation->outcome)
          << "\"/>";
    } else if (j.verdict == Verdict::kUnexpected) {
      const bool error = j.result.outcome == Outcome::kCrash || j.result.outcome == Outcome::kTimeout;
      out << "<" << (error ? "error" : "failure") << " type=\"" << outcome_name(j.result.outcome) << "\" message=\""
          << message << "\"/>";
    } else if (j.result.outcome != Outcome::kPass) {
      out << "<skipped message=\"" << outcome_name(j.result.outcome) << ": " << message << "\"/>";
    }
    out << "</testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  if (!out) throw std::runtime_error("writing " + path + " failed");
}

}  // namespace yirage::conformance
