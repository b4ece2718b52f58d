// yirage-conformance: the backend conformance suite's runner (conformance/README.md).
//
// Exit status: 0 when every result is as expected, 1 when something failed, crashed or timed out
// unexpectedly or an expected failure passed, 2 for a usage error or an unusable setup.
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "report.hpp"
#include "runtime/context.hpp"

namespace yc = yirage::conformance;

namespace {

const char kUsage[] =
    "usage: yirage-conformance --plugin NAME|PATH [options]\n"
    "\n"
    "Runs the backend conformance suite against one plugin, each test in a child process.\n"
    "\n"
    "  --plugin NAME|PATH    a plugin file, or a name looked up as libyirage-backend-NAME.so in\n"
    "                        $YIRAGE_BACKEND_PATH and the installed plugin folder\n"
    "  --device N            the device to test (default 0)\n"
    "  --filter GLOB         run the tests matching GLOB; may repeat; -GLOB excludes\n"
    "  --list                print the selected tests' names and exit\n"
    "  --expectations FILE   known failures and unsupported tests (see conformance/README.md)\n"
    "  --json FILE           write the results as JSON\n"
    "  --junit FILE          write the results as JUnit XML\n"
    "  --timeout SECONDS     per test (default 300)\n"
    "  --jobs N              tests run at once (default 1)\n"
    "  --cache DIR           the plugin's cache folder (default: the plugin's own)\n"
    "  --no-fork             run tests in this process (for debuggers; a crash ends the run)\n"
    "  --quiet               no line per test\n"
    "  --help\n";

[[noreturn]] void usage_error(const std::string &message) {
  std::fprintf(stderr, "yirage-conformance: %s\n(see --help)\n", message.c_str());
  std::exit(2);
}

bool is_file(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A path as given, or NAME found in the plugin folders the library searches.
std::string resolve_plugin(const std::string &plugin) {
  const bool has_so_suffix = plugin.size() > 3 && plugin.rfind(".so") == plugin.size() - 3;
  if (plugin.find('/') != std::string::npos || has_so_suffix) {
    if (!is_file(plugin)) usage_error("no plugin file " + plugin);
    return plugin;
  }
  std::string searched;
  for (const std::string &folder : yirage::runtime::plugin_search_folders()) {
    const std::string path = folder + "/libyirage-backend-" + plugin + ".so";
    if (is_file(path)) return path;
    searched += "\n  " + path;
  }
  usage_error("no plugin named '" + plugin + "'; looked for:" + searched);
}

bool selected(const std::string &name, const std::vector<std::string> &filters) {
  bool any_include = false, included = false;
  for (const std::string &f : filters) {
    if (!f.empty() && f[0] == '-') {
      if (fnmatch(f.c_str() + 1, name.c_str(), 0) == 0) return false;
    } else {
      any_include = true;
      included = included || fnmatch(f.c_str(), name.c_str(), 0) == 0;
    }
  }
  return !any_include || included;
}

// The plugin's name, version and device name, read in a child process like every test (a plugin
// that crashes while loading must not take the runner down). The probe hands them back as its
// NotSupported message, one per line.
void probe(const yc::RunOptions &options, yc::RunInfo &info) {
  const yc::TestCase probe_case{"probe", [](yc::Session &s) {
                                  const auto &p = s.plugin();
                                  std::string device;
                                  if (s.options().device < p.device_count()) {
                                    device = p.device(s.options().device).name;
                                  } else {
                                    device = "(none: " + p.unavailable_reason() + ")";
                                  }
                                  throw yc::TestNotSupported(p.name() + "\n" + p.version() + "\n" + device);
                                }};
  const auto results = yc::run_tests({&probe_case}, options, [](const yc::TestResult &) {});
  if (results[0].outcome != yc::Outcome::kNotSupported) {
    info.device_name = "(the plugin could not be loaded: " + results[0].message + ")";
    return;
  }
  std::stringstream lines(results[0].message);
  std::getline(lines, info.plugin_name);
  std::getline(lines, info.plugin_version);
  std::getline(lines, info.device_name);
}

}  // namespace

int main(int argc, char **argv) {
  yc::RunOptions options;
  std::string plugin, json, junit, expectations_path;
  std::vector<std::string> filters;
  bool list = false, quiet = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    auto number = [&](double lo, double hi) {
      const std::string text = value();
      char *end = nullptr;
      const double n = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !(n >= lo && n <= hi)) {
        usage_error(arg + " takes a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not '" + text +
                    "'");
      }
      return n;
    };
    if (arg == "--plugin")
      plugin = value();
    else if (arg == "--device")
      options.session.device = static_cast<int32_t>(number(0, 1 << 20));
    else if (arg == "--filter")
      filters.push_back(value());
    else if (arg == "--list")
      list = true;
    else if (arg == "--expectations")
      expectations_path = value();
    else if (arg == "--json")
      json = value();
    else if (arg == "--junit")
      junit = value();
    else if (arg == "--timeout")
      options.timeout_seconds = number(1, 86400);
    else if (arg == "--jobs")
      options.jobs = static_cast<int>(number(1, 256));
    else if (arg == "--cache")
      options.session.cache_dir = value();
    else if (arg == "--no-fork")
      options.isolate = false;
    else if (arg == "--quiet")
      quiet = true;
    else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }

  const std::vector<yc::TestCase> tests = yc::all_tests();
  std::vector<const yc::TestCase *> chosen;
  for (const yc::TestCase &t : tests) {
    if (selected(t.name, filters)) chosen.push_back(&t);
  }
  if (list) {
    for (const yc::TestCase *t : chosen) std::printf("%s\n", t->name.c_str());
    return 0;
  }
  if (plugin.empty()) usage_error("--plugin is required");
  if (chosen.empty()) usage_error("no test matches the filters");
  std::vector<yc::Expectation> expectations;
  try {
    if (!expectations_path.empty()) expectations = yc::load_expectations(expectations_path);
  } catch (const std::exception &e) {
    usage_error(e.what());
  }

  yc::RunInfo info;
  info.plugin_path = options.session.plugin_path = resolve_plugin(plugin);
  info.device = options.session.device;
  info.expectations_path = expectations_path;
  probe(options, info);

  size_t finished = 0;
  const auto results = yc::run_tests(chosen, options, [&](const yc::TestResult &r) {
    ++finished;
    if (quiet) return;
    std::printf("[%4zu/%zu] %-12s %s (%.1f s)\n", finished, chosen.size(), yc::outcome_name(r.outcome), r.name.c_str(),
                r.seconds);
    if (r.outcome != yc::Outcome::kPass && !r.message.empty()) std::printf("             %s\n", r.message.c_str());
    std::fflush(stdout);
  });

  std::vector<yc::JudgedResult> judged;
  std::vector<bool> used(expectations.size(), false);
  for (const yc::TestResult &r : results) {
    const yc::Expectation *e = yc::find_expectation(expectations, r.name);
    if (e) used[static_cast<size_t>(e - expectations.data())] = true;
    judged.push_back({r, e, yc::judge(r, e)});
  }
  std::vector<const yc::Expectation *> unused;
  for (size_t i = 0; i < expectations.size() && filters.empty(); ++i) {
    if (!used[i]) unused.push_back(&expectations[i]);
  }
  const int unexpected = yc::print_summary(stdout, info, judged, unused);
  try {
    if (!json.empty()) yc::write_json(json, info, judged);
    if (!junit.empty()) yc::write_junit(junit, info, judged);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "yirage-conformance: %s\n", e.what());
    return 2;
  }
  return unexpected == 0 ? 0 : 1;
}
