// What the plugins' own tests share (header-only; not part of any plugin): loading a plugin file
// and creating an instance through its table, as the core does; running a case in a child process
// (a plugin opens its vendor library once per process) with chosen environment variables; and the
// zero-device check every plugin passes where its library or driver is missing.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ir/kernel_graph.hpp"
#include "serialize/kernel_program.hpp"
#include "testing/bounded_child.hpp"
#include "util/file_cache.hpp"
#include "yirage_backend.h"

namespace yirage::testing {

// The variable's value, "" where it is not set.
inline std::string env(const char *name) {
  const char *value = std::getenv(name);
  return value != nullptr ? value : "";
}

// "" where `text` holds `part`, else a line saying which `what` lacks it.
inline std::string contains(const std::string &text, const std::string &part, const char *what) {
  return text.find(part) != std::string::npos ? "" : std::string(what) + " '" + text + "' lacks '" + part + "'\n";
}

// A kernel program: exp of 4096 float32s.
inline std::vector<uint8_t> exp_program() {
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.new_input({4096}, DType::kFloat32)));
  return serialize::kernel_program_to_bytes(serialize::make_kernel_program(g, 1));
}

// The table of the plugin file at `path`, opened for good (RTLD_LOCAL).
inline const yirage_backend_api *open_plugin(const std::string &path) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto entry = reinterpret_cast<yirage_backend_entry_fn>(dlsym(handle, YIRAGE_BACKEND_ENTRY_SYMBOL));
  if (entry == nullptr) throw std::runtime_error(path + " has no " + YIRAGE_BACKEND_ENTRY_SYMBOL);
  return entry(YIRAGE_BACKEND_ABI_MAJOR, YIRAGE_BACKEND_ABI_MINOR);
}

// One instance of the plugin at `plugin`, its cache in `cache_dir`, or in a fresh folder named
// after `name` (removed with the session) where that is "". Warnings are kept in `warnings`.
struct PluginSession {
  const yirage_backend_api *api = nullptr;
  yirage_backend_instance *instance = nullptr;
  std::string cache, warnings;
  bool own_cache;
  yirage_backend_error error{};

  PluginSession(const std::string &plugin, const std::string &name, const std::string &cache_dir = "")
      : cache(cache_dir), own_cache(cache_dir.empty()) {
    error.struct_size = sizeof error;
    api = open_plugin(plugin);
    if (own_cache)
      cache = std::filesystem::temp_directory_path() / ("yirage-" + name + "-test-" + util::unique_suffix());
    yirage_backend_host host{sizeof host,
                             YIRAGE_BACKEND_ABI_MAJOR,
                             YIRAGE_BACKEND_ABI_MINOR,
                             cache.c_str(),
                             [](void *self, yirage_backend_log_level, const char *message) {
                               static_cast<PluginSession *>(self)->warnings += std::string(message) + "\n";
                             },
                             this};
    if (api->create(&host, &instance, &error) != YIRAGE_OK) {
      throw std::runtime_error(std::string("create: ") + error.message);
    }
  }
  ~PluginSession() {
    api->destroy(instance);
    if (own_cache) std::filesystem::remove_all(cache);
  }
  PluginSession(const PluginSession &) = delete;
  PluginSession &operator=(const PluginSession &) = delete;
  int32_t count() {
    int32_t n = -1;
    if (api->device_count(instance, &n, &error) != YIRAGE_OK) throw std::runtime_error(error.message);
    return n;
  }
  std::string message() const { return error.message; }
};

// Runs `body` in a child with the environment variables `cleared` unset, then `variables` set;
// "" is success.
inline void expect_in_child(const std::vector<const char *> &cleared,
                            const std::vector<std::pair<const char *, std::string>> &variables,
                            const std::function<std::string()> &body) {
  EXPECT_TRUE(run_in_child([&]() -> std::string {
    for (const char *name : cleared) unsetenv(name);
    for (const auto &[name, value] : variables) setenv(name, value.c_str(), 1);
    return body();
  }));
}

// In a child: the plugin at `plugin`, with `variable` set to `value`, reports zero devices with a
// reason holding `reason_part`, and refuses an allocation on the missing device with NOT_FOUND
// and that reason (not a crash).
inline void expect_no_devices(const std::string &plugin, const char *variable, const std::string &value,
                              const std::string &reason_part) {
  expect_in_child({}, {{variable, value}}, [&]() -> std::string {
    const yirage_backend_api *api = open_plugin(plugin);
    yirage_backend_host host{sizeof host, YIRAGE_BACKEND_ABI_MAJOR, YIRAGE_BACKEND_ABI_MINOR, nullptr, nullptr,
                             nullptr};
    yirage_backend_error error{};
    error.struct_size = sizeof error;
    yirage_backend_instance *instance = nullptr;
    if (api->create(&host, &instance, &error) != YIRAGE_OK) return std::string("create: ") + error.message;
    int32_t count = -1;
    if (api->device_count(instance, &count, &error) != YIRAGE_OK) return std::string("count: ") + error.message;
    const std::string reason = api->unavailable_reason(instance);
    yirage_backend_buffer *buffer = nullptr;
    const yirage_status alloc = api->buffer_alloc(instance, 0, 16, &buffer, &error);
    const std::string alloc_message = error.message;
    api->destroy(instance);
    if (count != 0) return "expected zero devices, got " + std::to_string(count);
    if (reason.find(reason_part) == std::string::npos) return "reason '" + reason + "' lacks '" + reason_part + "'";
    if (alloc != YIRAGE_ERROR_NOT_FOUND || alloc_message.find(reason_part) == std::string::npos) {
      return "buffer_alloc on no device: status " + std::to_string(alloc) + ", '" + alloc_message + "'";
    }
    return "";
  });
}

}  // namespace yirage::testing
