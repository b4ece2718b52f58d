// One loaded backend plugin (include/yirage_backend.h): the dlopen handle, its function table
// after version negotiation, and one instance of it. Calls into the plugin go through call(),
// which turns a failed status into Error carrying the plugin's message and native code.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "target/target.hpp"
#include "util/error.hpp"
#include "yirage_backend.h"

namespace yirage::runtime {

// The most devices one plugin may report. A count above it (a plugin once reported 2·10^9, and the
// host spent minutes and gigabytes asking after each) or below zero refuses the plugin.
constexpr int32_t kMaxPluginDevices = 1024;

struct DeviceInfo {
  std::string name;
  targets::TargetProperties target;
  yirage_backend_device_info raw;  // as the plugin reported it
};

class Plugin {
 public:
  // Loads `path`. Throws Error(kNotFound) when the file cannot be opened, kVersionMismatch for an
  // incompatible ABI, kBackend for a missing entry symbol, a failed create, device_count or
  // device_info, or anything the plugin reports that the host refuses rather than trusts: a name
  // that is not a short lowercase word; a name, version, unavailable_reason or device name that
  // does not end within its field (64, 32, 4096, 128 bytes); a device count outside
  // [0, kMaxPluginDevices]; a device with dtype bits of no dtype, a DLPack device type below 1
  // or a negative id, or implausible target properties. The message names `path` and the value.
  // What runs in the plugin runs in this process: a crash there is this process's crash.
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
  // Whether the plugin records launches (ABI 1.3: its four recording entries, all set, with
  // buffer_native, which keys the recordings).
  bool records() const;
  // Whether device `device` may be offered programs of several operators (ABI 1.4 and the
  // device's YIRAGE_BACKEND_DEVICE_OPERATOR_GROUPS; its supports() says which it takes).
  bool takes_operator_groups(int32_t device) const;

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

// Loads each of `paths` as Plugin::load does, but in a child process of its own (fork; at most
// 16 at once), and gives for each nothing where it loaded there, or the Error to report instead
// of loading it here: the one Plugin::load gave in the child, or kBackend naming the signal that
// killed the child, the status it exited with, or the timeout after which it was killed. The
// child runs only the load and ends with _exit. Fork copies one thread: a lock another thread of
// this process held at that moment stays held in the child, and a load that needs it ends as a
// timeout. Throws nothing: a probe that cannot start (pipe or fork failing) gives kInternal for
// its path.
std::vector<std::optional<Error>> probe_plugins(const std::vector<std::string> &paths, const std::string &cache_dir,
                                                double timeout_seconds);

// The names of the ABI 1.0 entries that `api` leaves NULL (every one is required).
std::vector<std::string> missing_entries(const yirage_backend_api &api);

// Version negotiation, exposed for tests: throws Error(kVersionMismatch) unless a plugin of
// (major, minor) and table size `size` can serve this host.
void check_plugin_version(const std::string &path, uint32_t major, uint32_t minor, size_t size);

}  // namespace yirage::runtime
