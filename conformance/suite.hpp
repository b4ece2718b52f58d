// The conformance suite's test cases and what a test body sees (docs/plugin-guide.md,
// "Conformance"). Tests are generated from tables in the tests_*.cpp files; each body runs in its
// own child process (runner.cpp) against a freshly loaded plugin, and ends in one of the outcomes
// below: returning is Pass, fail() is Fail, not_supported() is NotSupported.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/dtype.hpp"
#include "runtime/plugin.hpp"
#include "yirage_backend.h"

namespace yirage::conformance {

enum class Outcome { kPass, kFail, kNotSupported, kCrash, kTimeout };
const char *outcome_name(Outcome outcome);
std::optional<Outcome> outcome_from_name(const std::string &name);

struct TestFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct TestNotSupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string &message);
[[noreturn]] void not_supported(const std::string &message);
inline void expect(bool ok, const std::string &message) {
  if (!ok) fail(message);
}

const char *status_name(yirage_status status);

// A fresh error channel.
yirage_backend_error new_error();
// Fails with `what`, the status and the plugin's message unless `status` is YIRAGE_OK.
void expect_ok(yirage_status status, const yirage_backend_error &error, const std::string &what);
// Fails unless `status` is one of `allowed`, the channel repeats it and carries a message.
void expect_error(yirage_status status, const yirage_backend_error &error, std::initializer_list<yirage_status> allowed,
                  const std::string &what);

struct SessionOptions {
  std::string plugin_path;
  int32_t device = 0;
  std::string cache_dir;  // "" : the plugin's default
};

// The plugin under test, as one test sees it: the raw entry point for ABI tests, and the
// runtime's loaded Plugin (one instance, created on first use) for everything else.
class Session {
 public:
  explicit Session(const SessionOptions &options);
  ~Session();

  const SessionOptions &options() const { return options_; }
  // The entry symbol (the library stays loaded for the session).
  yirage_backend_entry_fn entry() const { return entry_; }
  // The table for this host's version, after the runtime's checks.
  const yirage_backend_api &api();
  // A host struct as the runtime passes it.
  yirage_backend_host host() const;

  const runtime::Plugin &plugin();
  yirage_backend_instance *instance() { return plugin().instance(); }
  // The device under test; NotSupported when the plugin reports fewer devices.
  int32_t device();
  const runtime::DeviceInfo &device_info();
  // NotSupported unless the device claims `dtype`.
  void need_dtype(DType dtype);

 private:
  SessionOptions options_;
  void *handle_ = nullptr;
  yirage_backend_entry_fn entry_ = nullptr;
  std::unique_ptr<runtime::Plugin> plugin_;
};

// A small valid kernel program (elementwise exp of `n` float32 values): one input, one output.
std::vector<uint8_t> exp_program(int64_t n);

struct TestCase {
  std::string name;  // dotted: group.subject.variant
  std::function<void(Session &)> run;
};

// Every test, in a fixed order; the tests_*.cpp files each add one group.
std::vector<TestCase> all_tests();
void add_abi_tests(std::vector<TestCase> &tests);
void add_device_tests(std::vector<TestCase> &tests);
void add_buffer_tests(std::vector<TestCase> &tests);
void add_kernel_tests(std::vector<TestCase> &tests);
void add_error_tests(std::vector<TestCase> &tests);

}  // namespace yirage::conformance
