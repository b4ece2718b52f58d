#include <dlfcn.h>

#include <cstring>

#include "suite.hpp"

namespace yirage::conformance {

const char *outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "Pass";
    case Outcome::kFail: return "Fail";
    case Outcome::kNotSupported: return "NotSupported";
    case Outcome::kCrash: return "Crash";
    case Outcome::kTimeout: return "Timeout";
  }
  return "?";
}

std::optional<Outcome> outcome_from_name(const std::string &name) {
  for (Outcome o : {Outcome::kPass, Outcome::kFail, Outcome::kNotSupported, Outcome::kCrash, Outcome::kTimeout}) {
    if (name == outcome_name(o)) return o;
  }
  return std::nullopt;
}

void fail(const std::string &message) {
  throw TestFailure(message);
}
void not_supported(const std::string &message) {
  throw TestNotSupported(message);
}

const char *status_name(yirage_status status) {
  return yirage::status_name(static_cast<int>(status));
}

yirage_backend_error new_error() {
  yirage_backend_error error;
  std::memset(&error, 0, sizeof error);
  error.struct_size = sizeof error;
  return error;
}

void expect_ok(yirage_status status, const yirage_backend_error &error, const std::string &what) {
  if (status != YIRAGE_OK) {
    fail(what + " failed with " + status_name(status) + ": " + error.message);
  }
}

void expect_error(yirage_status status, const yirage_backend_error &error, std::initializer_list<yirage_status> allowed,
                  const std::string &what) {
  std::string names;
  bool found = false;
  for (yirage_status s : allowed) {
    names += (names.empty() ? "" : " or ") + std::string(status_name(s));
    found = found || s == status;
  }
  if (!found) fail(what + ": expected " + names + ", got " + status_name(status));
  expect(error.status == status, what + ": the error channel says " + status_name(error.status) +
                                     ", the entry returned " + status_name(status));
  expect(std::memchr(error.message, '\0', sizeof error.message) != nullptr,
         what + ": the error message is not NUL-terminated");
  expect(error.message[0] != '\0', what + ": the error channel has no message");
}

Session::Session(const SessionOptions &options) : options_(options) {
  handle_ = dlopen(options.plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char *why = dlerror();
    fail("cannot load " + options.plugin_path + ": " + (why ? why : "dlopen failed"));
  }
  entry_ = reinterpret_cast<yirage_backend_entry_fn>(dlsym(handle_, YIRAGE_BACKEND_ENTRY_SYMBOL));
  if (entry_ == nullptr) {
    fail(options.plugin_path + " does not export " YIRAGE_BACKEND_ENTRY_SYMBOL);
  }
}

// The library stays loaded: the plugin may have started threads (tests run in a child process
// that exits right after).
Session::~Session() = default;

const yirage_backend_api &Session::api() {
  const yirage_backend_api *api = entry_(YIRAGE_BACKEND_ABI_MAJOR, YIRAGE_BACKEND_ABI_MINOR);
  if (api == nullptr) fail("the entry point returned NULL for this host's ABI version");
  try {
    runtime::check_plugin_version(options_.plugin_path, api->abi_major, api->abi_minor, api->struct_size);
  } catch (const Error &e) {
    fail(e.what());
  }
  return *api;
}

yirage_backend_host Session::host() const {
  yirage_backend_host host;
  std::memset(&host, 0, sizeof host);
  host.struct_size = sizeof host;
  host.abi_major = YIRAGE_BACKEND_ABI_MAJOR;
  host.abi_minor = YIRAGE_BACKEND_ABI_MINOR;
  host.cache_dir = options_.cache_dir.empty() ? nullptr : options_.cache_dir.c_str();
  return host;
}

const runtime::Plugin &Session::plugin() {
  if (!plugin_) {
    try {
      plugin_ = runtime::Plugin::load(options_.plugin_path, options_.cache_dir);
    } catch (const Error &e) {
      fail(std::string("loading the plugin: ") + e.what());
    }
  }
  return *plugin_;
}

int32_t Session::device() {
  const runtime::Plugin &p = plugin();
  if (options_.device >= p.device_count()) {
    not_supported("the plugin reports " + std::to_string(p.device_count()) + " device(s)" +
                  (p.device_count() == 0 ? ": " + p.unavailable_reason() : std::string()));
  }
  return options_.device;
}

const runtime::DeviceInfo &Session::device_info() {
  return plugin().device(device());
}

void Session::need_dtype(DType dtype) {
  if ((device_info().raw.dtypes & (1u << static_cast<int>(dtype))) == 0) {
    not_supported(std::string("the device does not claim ") + dtype_name(dtype));
  }
}

std::vector<TestCase> all_tests() {
  std::vector<TestCase> tests;
  add_abi_tests(tests);
  add_device_tests(tests);
  add_buffer_tests(tests);
  add_kernel_tests(tests);
  add_error_tests(tests);
  return tests;
}

}  // namespace yirage::conformance
