// One loaded backend plugin (include/yirage_backend.h): the dlopen handle, its function table
// after version negotiation, and one instance of it. Calls into the plugin go through call(),
// which turns a failed status into Error carrying the plugin's message and native code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "target/target.hpp"
#include "util/error.hpp"
#include "yirage_backend.h"

namespace yirage::runtime {

struct DeviceInfo {
  std::string name;
  targets::TargetProperties target;
  yirage_backend_device_info raw;  // as the plugin reported it
};

class Plugin {
 public:
  // Loads `path`. Throws Error(kNotFound) when the file cannot be opened, kBackend for a missing
  // entry symbol or a failed create, kVersionMismatch for an incompatible ABI.
  static std::unique_ptr<Plugin> load(const std::string &path, const std::string &cache_dir);
  ~Plugin();
  Plugin(const Plugin &) = delete;
  Plugin &operator=(const Plugin &) = delete;

  const std::string &name() const { return name_; }
  const std::string &path() const { return path_; }
  const std::string &version() const { return version_; }
  int32_t device_count() const { return static_cast<int32_t>(devices_.size()); }
  const std::string &unavailable_reason() const { return unavailable_reason_; }
  const DeviceInfo &device(int32_t index) const;  // throws kNotFound for a bad index

  const yirage_backend_api &api() const { return *api_; }
  yirage_backend_instance *instance() const { return instance_; }
  // The optional estimate entry (ABI 1.1) where the plugin's table and minor have it and it is
  // set; NULL otherwise.
  decltype(yirage_backend_api::estimate) estimate_entry() const;
  // The optional buffer_native entry (ABI 1.2), the same way.
  decltype(yirage_backend_api::buffer_native) buffer_native_entry() const;

  // Calls fn(args…, &error) and throws on failure; `what` names the step in the message.
  template <class Fn, class... Args>
  void call(const char *what, Fn fn, Args... args) const {
    // Not zero-filled: 4 KiB a call on the launch path, and the message is read only after a
    // failure, which writes it.
    yirage_backend_error error;
    error.struct_size = sizeof error;
    error.status = YIRAGE_OK;
    error.native_code = 0;
    error.message[0] = '\0';
    const yirage_status status = fn(args..., &error);
    if (status != YIRAGE_OK) fail(what, status, error);
  }

 private:
  Plugin() = default;
  [[noreturn]] void fail(const char *what, yirage_status status, const yirage_backend_error &error) const;

  void *handle_ = nullptr;
  const yirage_backend_api *api_ = nullptr;
  yirage_backend_instance *instance_ = nullptr;
  std::string name_, path_, version_, unavailable_reason_;
  std::vector<DeviceInfo> devices_;
};

// The names of the ABI 1.0 entries that `api` leaves NULL (every one is required).
std::vector<std::string> missing_entries(const yirage_backend_api &api);

// Version negotiation, exposed for tests: throws Error(kVersionMismatch) unless a plugin of
// (major, minor) and table size `size` can serve this host.
void check_plugin_version(const std::string &path, uint32_t major, uint32_t minor, size_t size);

}  // namespace yirage::runtime
