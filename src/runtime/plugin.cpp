#include "runtime/plugin.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "target/target_abi.hpp"
#include "util/log.hpp"

namespace yirage::runtime {
namespace {

// The table as of ABI 1.0: a plugin's table must be at least this large.
constexpr size_t kApiSizeV1_0 = offsetof(yirage_backend_api, timer_elapsed) + sizeof(void *);

}  // namespace

void check_plugin_version(const std::string &path, uint32_t major, uint32_t minor, size_t size) {
  const std::string theirs = std::to_string(major) + "." + std::to_string(minor);
  const std::string ours =
      std::to_string(YIRAGE_BACKEND_ABI_MAJOR) + "." + std::to_string(YIRAGE_BACKEND_ABI_MINOR_REQUIRED);
  if (major > YIRAGE_BACKEND_ABI_MAJOR) {
    throw Error(ErrorCode::kVersionMismatch, path + ": plugin ABI " + theirs + " is newer than this library's (major " +
                                                 std::to_string(YIRAGE_BACKEND_ABI_MAJOR) + ")");
  }
  // (The minor test is vacuous while the required minor is 0; it binds once it grows.)
  if (major < YIRAGE_BACKEND_ABI_MAJOR || minor + 1 < YIRAGE_BACKEND_ABI_MINOR_REQUIRED + 1) {
    throw Error(ErrorCode::kVersionMismatch,
                path + ": plugin ABI " + theirs + " is too old (this library needs " + ours + ")");
  }
  if (size < kApiSizeV1_0) {
    throw Error(ErrorCode::kVersionMismatch, path + ": the plugin's table has struct_size " + std::to_string(size) +
                                                 ", ABI " + theirs + " needs at least " + std::to_string(kApiSizeV1_0));
  }
}

std::vector<std::string> missing_entries(const yirage_backend_api &api) {
  const std::pair<const char *, const void *> entries[] = {
      {"create", reinterpret_cast<const void *>(api.create)},
      {"destroy", reinterpret_cast<const void *>(api.destroy)},
      {"device_count", reinterpret_cast<const void *>(api.device_count)},
      {"unavailable_reason", reinterpret_cast<const void *>(api.unavailable_reason)},
      {"device_info", reinterpret_cast<const void *>(api.device_info)},
      {"buffer_alloc", reinterpret_cast<const void *>(api.buffer_alloc)},
      {"buffer_wrap", reinterpret_cast<const void *>(api.buffer_wrap)},
      {"buffer_release", reinterpret_cast<const void *>(api.buffer_release)},
      {"buffer_write", reinterpret_cast<const void *>(api.buffer_write)},
      {"buffer_read", reinterpret_cast<const void *>(api.buffer_read)},
      {"supports", reinterpret_cast<const void *>(api.supports)},
      {"compile", reinterpret_cast<const void *>(api.compile)},
      {"executable_release", reinterpret_cast<const void *>(api.executable_release)},
      {"launch", reinterpret_cast<const void *>(api.launch)},
      {"synchronize", reinterpret_cast<const void *>(api.synchronize)},
      {"timer_create", reinterpret_cast<const void *>(api.timer_create)},
      {"timer_release", reinterpret_cast<const void *>(api.timer_release)},
      {"timer_record", reinterpret_cast<const void *>(api.timer_record)},
      {"timer_elapsed", reinterpret_cast<const void *>(api.timer_elapsed)},
  };
  std::vector<std::string> missing;
  for (const auto &[name, pointer] : entries) {
    if (pointer == nullptr) missing.push_back(name);
  }
  return missing;
}

decltype(yirage_backend_api::estimate) Plugin::estimate_entry() const {
  const bool listed =
      api_->abi_minor >= 1 && api_->struct_size >= offsetof(yirage_backend_api, estimate) + sizeof(void *);
  return listed ? api_->estimate : nullptr;
}

decltype(yirage_backend_api::buffer_native) Plugin::buffer_native_entry() const {
  const bool listed =
      api_->abi_minor >= 2 && api_->struct_size >= offsetof(yirage_backend_api, buffer_native) + sizeof(void *);
  return listed ? api_->buffer_native : nullptr;
}

bool Plugin::records() const {
  const bool listed =
      api_->abi_minor >= 3 && api_->struct_size >= offsetof(yirage_backend_api, recording_release) + sizeof(void *);
  return listed && api_->recording_begin != nullptr && api_->recording_end != nullptr &&
         api_->recording_replay != nullptr && api_->recording_release != nullptr && buffer_native_entry() != nullptr;
}

bool Plugin::takes_operator_groups(int32_t device) const {
  return api_->abi_minor >= 4 && (this->device(device).raw.flags & YIRAGE_BACKEND_DEVICE_OPERATOR_GROUPS) != 0;
}

namespace {

// A plugin's log lines, printed as the host's own (util/log.hpp).
void log_to_stderr(void *, yirage_backend_log_level level, const char *message) {
  if (message == nullptr) return;
  util::log_line(static_cast<util::LogLevel>(std::clamp(static_cast<int>(level), 0, 2)), message);
}

}  // namespace

namespace {

// Bits of the dtypes this host knows, in yirage_backend_device_info.dtypes.
constexpr uint32_t kKnownDTypes = (1u << YIRAGE_FLOAT16) | (1u << YIRAGE_BFLOAT16) | (1u << YIRAGE_FLOAT32);

// A string a plugin hands over by pointer, read at most `limit` bytes far: one without a NUL
// within them is refused rather than read on.
std::string bounded_string(const std::string &path, const char *what, const char *text, size_t limit) {
  const size_t length = strnlen(text, limit);
  if (length == limit) {
    throw Error(ErrorCode::kBackend, path + ": the plugin's " + what + " is not a NUL-terminated string of at most " +
                                         std::to_string(limit - 1) + " bytes");
  }
  return std::string(text, length);
}

// A plugin's name: the C ABI's yirage_backend_info.name holds 64 bytes, and the name is what
// users type (--backend, yirage_context_get_device), so it is a short lowercase word.
std::string checked_plugin_name(const std::string &path, const char *name) {
  if (name == nullptr) throw Error(ErrorCode::kBackend, path + ": the plugin has no name");
  const std::string n = bounded_string(path, "name", name, 64);
  const bool word = !n.empty() && std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!word) {
    throw Error(ErrorCode::kBackend,
                path + ": the plugin's name \"" + n + "\" is not a short lowercase word ([a-z0-9_]+)");
  }
  return n;
}

// The bits of yirage_backend_device_info.flags this host knows.
constexpr uint32_t kKnownDeviceFlags = YIRAGE_BACKEND_DEVICE_OPERATOR_GROUPS;

// What the plugin says of one device, beyond the target properties (targets::validate): the
// strings end within their fields, and the dtypes, flags and DLPack device are ones there can be.
void check_device_fields(const std::string &path, int32_t device, const yirage_backend_device_info &raw) {
  const std::string prefix = path + ": device " + std::to_string(device) + " ";
  if (std::memchr(raw.name, '\0', sizeof raw.name) == nullptr) {
    throw Error(ErrorCode::kBackend, prefix + "has a name that is not NUL-terminated within its " +
                                         std::to_string(sizeof raw.name) + " bytes");
  }
  if (raw.name[0] == '\0') throw Error(ErrorCode::kBackend, prefix + "has an empty name");
  if (std::memchr(raw.target.name, '\0', sizeof raw.target.name) == nullptr) {
    throw Error(ErrorCode::kBackend, prefix + "has a target name that is not NUL-terminated within its " +
                                         std::to_string(sizeof raw.target.name) + " bytes");
  }
  if (raw.dtypes == 0 || (raw.dtypes & ~kKnownDTypes) != 0) {
    char text[64];
    std::snprintf(text, sizeof text, "reports dtypes 0x%x, ", raw.dtypes);
    throw Error(ErrorCode::kBackend, prefix + text +
                                         (raw.dtypes == 0 ? "no dtype at all"
                                                          : "which has bits of no dtype (float16, bfloat16 and "
                                                            "float32 are bits 1 to 3)"));
  }
  if ((raw.flags & ~kKnownDeviceFlags) != 0) {
    char text[64];
    std::snprintf(text, sizeof text, "reports flags 0x%x, ", raw.flags);
    throw Error(ErrorCode::kBackend,
                prefix + text + "which has bits of no flag (YIRAGE_BACKEND_DEVICE_OPERATOR_GROUPS is bit 0)");
  }
  if (raw.dlpack_device_type <= 0 || raw.dlpack_device_id < 0) {
    throw Error(ErrorCode::kBackend, prefix + "reports DLPack device (" + std::to_string(raw.dlpack_device_type) +
                                         ", " + std::to_string(raw.dlpack_device_id) +
                                         "): the type must be positive and the id not negative");
  }
}

}  // namespace

std::unique_ptr<Plugin> Plugin::load(const std::string &path, const std::string &cache_dir) {
  std::unique_ptr<Plugin> plugin(new Plugin());
  plugin->path_ = path;
  plugin->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (plugin->handle_ == nullptr) {
    const char *why = dlerror();
    throw Error(ErrorCode::kNotFound, "cannot load plugin " + path + ": " + (why ? why : "dlopen failed"));
  }
  auto entry = reinterpret_cast<yirage_backend_entry_fn>(dlsym(plugin->handle_, YIRAGE_BACKEND_ENTRY_SYMBOL));
  if (entry == nullptr) {
    throw Error(ErrorCode::kBackend,
                path + " is not a yirage plugin: it does not export " + YIRAGE_BACKEND_ENTRY_SYMBOL);
  }
  const yirage_backend_api *api = entry(YIRAGE_BACKEND_ABI_MAJOR, YIRAGE_BACKEND_ABI_MINOR);
  if (api == nullptr) {
    throw Error(ErrorCode::kVersionMismatch, path + ": the plugin refused ABI " +
                                                 std::to_string(YIRAGE_BACKEND_ABI_MAJOR) + "." +
                                                 std::to_string(YIRAGE_BACKEND_ABI_MINOR));
  }
  check_plugin_version(path, api->abi_major, api->abi_minor, api->struct_size);
  const std::vector<std::string> missing = missing_entries(*api);
  if (!missing.empty()) {
    std::string names;
    for (const std::string &m : missing) names += (names.empty() ? "" : ", ") + m;
    throw Error(ErrorCode::kBackend, path + ": the plugin's table leaves required entries NULL: " + names);
  }
  plugin->api_ = api;
  plugin->name_ = checked_plugin_name(path, api->name);
  // 32 bytes: the C ABI's yirage_backend_info.version.
  plugin->version_ = api->version ? bounded_string(path, "version", api->version, 32) : "";

  yirage_backend_host host{};
  host.struct_size = sizeof host;
  host.abi_major = YIRAGE_BACKEND_ABI_MAJOR;
  host.abi_minor = YIRAGE_BACKEND_ABI_MINOR;
  host.cache_dir = cache_dir.empty() ? nullptr : cache_dir.c_str();
  host.log = util::log_threshold() < 0 ? nullptr : log_to_stderr;
  yirage_backend_instance *instance = nullptr;
  plugin->call("create", api->create, static_cast<const yirage_backend_host *>(&host), &instance);
  plugin->instance_ = instance;

  int32_t count = 0;
  plugin->call("device_count", api->device_count, instance, &count);
  if (count < 0 || count > kMaxPluginDevices) {
    throw Error(ErrorCode::kBackend,
                path + ": the plugin reports " + std::to_string(count) + " devices (" +
                    (count < 0 ? "a count cannot be negative"
                               : "more than the " + std::to_string(kMaxPluginDevices) + " a plugin may report") +
                    ")");
  }
  if (count == 0) {
    const char *reason = api->unavailable_reason(instance);
    // 4096 bytes, as the error channel's message.
    const std::string text = reason ? bounded_string(path, "unavailable_reason", reason, 4096) : "";
    plugin->unavailable_reason_ = text.empty() ? "the plugin reports no devices" : text;
  }
  for (int32_t d = 0; d < count; ++d) {
    DeviceInfo info;
    info.raw = yirage_backend_device_info{};
    info.raw.struct_size = sizeof info.raw;
    info.raw.target.struct_size = sizeof info.raw.target;
    plugin->call("device_info", api->device_info, instance, d, &info.raw);
    check_device_fields(path, d, info.raw);
    info.name = info.raw.name;
    info.target = targets::target_from_c(info.raw.target);
    try {
      targets::validate(info.target);
    } catch (const Error &e) {
      throw Error(ErrorCode::kBackend,
                  path + ": device " + std::to_string(d) + " reports implausible properties: " + e.what());
    }
    plugin->devices_.push_back(std::move(info));
  }
  return plugin;
}

Plugin::~Plugin() {
  if (api_ != nullptr && instance_ != nullptr) {
    api_->destroy(instance_);
    // The plugin stays mapped once it has run: runtimes it pulled in (OpenMP, drivers) keep
    // threads and atexit handlers that do not survive being unloaded.
  } else if (handle_ != nullptr) {
    dlclose(handle_);  // refused before it did anything
  }
}

const DeviceInfo &Plugin::device(int32_t index) const {
  if (index < 0 || index >= device_count()) {
    throw Error(ErrorCode::kNotFound, name_ + ": no device " + std::to_string(index) + " (it has " +
                                          std::to_string(device_count()) +
                                          (devices_.empty() ? ": " + unavailable_reason_ : "") + ")");
  }
  return devices_[static_cast<size_t>(index)];
}

void Plugin::fail(const char *what, yirage_status status, const yirage_backend_error &error) const {
  std::string message(error.message, strnlen(error.message, sizeof error.message));
  if (message.empty()) message = "failed with status " + std::to_string(status);
  if (error.native_code != 0) message += " (native error " + std::to_string(error.native_code) + ")";
  const auto code = status >= YIRAGE_ERROR_INVALID_ARGUMENT && status <= YIRAGE_ERROR_INTERNAL
                        ? static_cast<ErrorCode>(status)
                        : ErrorCode::kBackend;
  throw Error(code, (name_.empty() ? path_ : name_) + " " + what + ": " + message);
}

}  // namespace yirage::runtime
