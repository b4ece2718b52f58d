// The Level Zero devices a plugin instance serves: every GPU of every driver the loader
// initialized, each with its own context, an immediate command list (the default stream), an
// event for host waits and a host staging buffer, described for the search
// (yirage_backend_device_info) from the device's properties (docs/backends/level_zero.md).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "opencl/codegen/opencl_source.hpp"
#include "yirage_backend.h"
#include "ze_api.hpp"

namespace yirage::level_zero {

// DLPack's kDLOneAPI (DLPack 0.7; Debian's dlpack.h predates it): Level Zero USM pointers.
constexpr int32_t kDLOneAPI = 14;

// Bytes of the host staging buffer that copies to and from pageable host memory go through (the
// Level Zero spec wants both sides of a copy accessible to the device).
constexpr size_t kStagingBytes = size_t{4} << 20;

struct Device {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t id = nullptr;
  ze_context_handle_t context = nullptr;
  ze_command_list_handle_t list = nullptr;  // immediate, asynchronous: the default stream
  ze_event_pool_handle_t pool = nullptr;    // one host-visible event: `done`
  ze_event_handle_t done = nullptr;         // signalled by the command the host waits for
  void *staging = nullptr;                  // kStagingBytes of host memory (zeMemAllocHost)
  // Guards list, done and staging: Level Zero command lists and events are not thread-safe.
  std::unique_ptr<std::mutex> lock = std::make_unique<std::mutex>();
  std::string device_name, driver_version;
  double timer_hz = 0;           // global timestamp ticks per second
  uint32_t timestamp_bits = 64;  // valid bits of a global timestamp
  int64_t max_alloc_bytes = 0;   // maxMemAllocSize
  codegen::OpenclTarget target;  // what the generated OpenCL C may use
  yirage_backend_device_info info{};
};

// Opens every GPU (at most kMaxDevices). Where there are none, `reason` says why; a device that
// could not be opened is left out and named in `skipped`.
constexpr size_t kMaxDevices = 1024;
std::vector<Device> open_devices(const Api &api, std::string &reason, std::vector<std::string> &skipped);

// Releases what open_devices created for the device.
void close_device(const Api &api, Device &device);

}  // namespace yirage::level_zero
