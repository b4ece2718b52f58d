// What every in-tree plugin's table entries share: turning exceptions into a status plus the
// error channel (yirage_backend.h: never throw across the ABI; honour the channel's struct_size),
// and the common argument checks.
#pragma once

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "yirage_backend.h"

namespace yirage::backend {

// An Error carrying the driver's own code (CUresult, cl_int, errno…) for the error channel.
class NativeError : public Error {
 public:
  NativeError(ErrorCode code, const std::string &message, int64_t native) : Error(code, message), native_(native) {}
  int64_t native() const { return native_; }

 private:
  int64_t native_;
};

// Fills the channel; a channel smaller than ABI 1.0's is left unwritten.
inline void set_error(yirage_backend_error *error, yirage_status status, const std::string &message,
                      int64_t native = 0) {
  if (error == nullptr || error->struct_size < sizeof(yirage_backend_error)) return;
  error->status = status;
  error->native_code = native;
  const size_t n = std::min(message.size(), sizeof error->message - 1);
  std::memcpy(error->message, message.data(), n);
  error->message[n] = '\0';
}

// Runs body; any exception becomes a status and the channel's message. `plugin` prefixes the
// messages of failures that did not say where they came from.
template <class Body>
yirage_status protect(const char *plugin, yirage_backend_error *error, Body &&body) noexcept {
  try {
    body();
    return YIRAGE_OK;
  } catch (const NativeError &e) {
    set_error(error, static_cast<yirage_status>(e.code()), e.what(), e.native());
    return static_cast<yirage_status>(e.code());
  } catch (const Error &e) {
    set_error(error, static_cast<yirage_status>(e.code()), e.what());
    return static_cast<yirage_status>(e.code());
  } catch (const std::bad_alloc &) {
    set_error(error, YIRAGE_ERROR_OUT_OF_MEMORY, std::string(plugin) + ": out of host memory");
    return YIRAGE_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    set_error(error, YIRAGE_ERROR_INTERNAL, std::string(plugin) + ": internal error: " + e.what());
    return YIRAGE_ERROR_INTERNAL;
  } catch (...) {
    set_error(error, YIRAGE_ERROR_INTERNAL, std::string(plugin) + ": internal error");
    return YIRAGE_ERROR_INTERNAL;
  }
}

[[noreturn]] inline void invalid(const char *plugin, const std::string &message) {
  throw Error(ErrorCode::kInvalidArgument, std::string(plugin) + ": " + message);
}

inline void require(const char *plugin, const void *pointer, const char *name) {
  if (pointer == nullptr) invalid(plugin, std::string(name) + " is NULL");
}

// create's checks of the host (yirage_backend.h): present, at least ABI 1.0's struct, same major.
inline void check_host(const char *plugin, const yirage_backend_host *host, const void *out) {
  require(plugin, host, "host");
  require(plugin, out, "out_instance");
  if (host->struct_size < sizeof(yirage_backend_host)) {
    invalid(plugin, "host->struct_size " + std::to_string(host->struct_size) + " is smaller than ABI 1.0's " +
                        std::to_string(sizeof(yirage_backend_host)));
  }
  if (host->abi_major != YIRAGE_BACKEND_ABI_MAJOR) {
    throw Error(ErrorCode::kVersionMismatch, std::string(plugin) + ": the host speaks plugin ABI " +
                                                 std::to_string(host->abi_major) + ".x, this plugin " +
                                                 std::to_string(YIRAGE_BACKEND_ABI_MAJOR) + ".x");
  }
}

// compile's optimization level: 3 for NULL options; short structs and values outside 0..3 are
// refused, never clamped.
inline int optimization_level(const char *plugin, const yirage_backend_compile_options *options) {
  if (options == nullptr) return 3;
  if (options->struct_size < sizeof(yirage_backend_compile_options)) {
    invalid(plugin, "options->struct_size too small");
  }
  if (options->optimization_level < 0 || options->optimization_level > 3) {
    invalid(plugin, "optimization_level must be 0..3, not " + std::to_string(options->optimization_level));
  }
  return options->optimization_level;
}

// launch's checks of one role's buffers (any plugin buffer type with a `bytes` member): the
// kernel's count, no NULLs, each at least the tensor's size. Nothing may run before they pass.
template <class Buffer>
void check_launch_buffers(const char *plugin, const char *role, Buffer *const *buffers, size_t n,
                          const std::vector<size_t> &bytes) {
  if (n != bytes.size()) {
    invalid(plugin, std::string("launch: the kernel takes ") + std::to_string(bytes.size()) + " " + role + "s, " +
                        std::to_string(n) + " were given");
  }
  if (n > 0) require(plugin, buffers, role);
  for (size_t i = 0; i < n; ++i) {
    const std::string which = std::string("launch: ") + role + " " + std::to_string(i);
    if (buffers[i] == nullptr) invalid(plugin, which + " is NULL");
    if (buffers[i]->bytes < bytes[i]) {
      invalid(plugin, which + " has " + std::to_string(buffers[i]->bytes) + " bytes, the kernel needs " +
                          std::to_string(bytes[i]));
    }
  }
}

// device_info's answer: `info` written to *out (checked: present, at least ABI 1.0's structs),
// keeping the host's struct sizes; bytes beyond stay as the host left them.
inline void copy_device_info(const char *plugin, const yirage_backend_device_info &info,
                             yirage_backend_device_info *out) {
  require(plugin, out, "out_info");
  if (out->struct_size < sizeof(yirage_backend_device_info)) invalid(plugin, "out_info->struct_size too small");
  if (out->target.struct_size < sizeof(yirage_target_properties)) {
    invalid(plugin, "out_info->target.struct_size too small");
  }
  yirage_backend_device_info copy = info;
  copy.struct_size = out->struct_size;
  copy.target.struct_size = out->target.struct_size;
  std::memcpy(out, &copy, sizeof copy);
}

// Device `device` of a plugin's list; NOT_FOUND naming the count (and, with none, why).
template <class Device>
Device &device_at(const char *plugin, std::vector<Device> &devices, int32_t device, const std::string &reason) {
  if (device < 0 || device >= static_cast<int32_t>(devices.size())) {
    throw Error(ErrorCode::kNotFound, std::string(plugin) + ": no device " + std::to_string(device) + " (" +
                                          std::to_string(devices.size()) + " present" +
                                          (devices.empty() ? ": " + reason : "") + ")");
  }
  return devices[static_cast<size_t>(device)];
}

// Throws INVALID_ARGUMENT unless [offset, offset + bytes) lies within `size` bytes.
inline void check_range(const char *plugin, size_t size, size_t offset, size_t bytes, const char *op) {
  if (offset > size || bytes > size - offset) {
    throw Error(ErrorCode::kInvalidArgument, std::string(plugin) + ": " + op + ": bytes [" + std::to_string(offset) +
                                                 ", " + std::to_string(offset + bytes) + ") are outside the buffer's " +
                                                 std::to_string(size));
  }
}

}  // namespace yirage::backend
