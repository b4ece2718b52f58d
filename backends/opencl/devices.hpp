// The OpenCL devices a plugin instance serves: every device of every platform the ICD loader
// lists, each with its own context and an in-order queue with profiling, described for the
// search (yirage_backend_device_info) from what the device reports (docs/backends/opencl.md).
#pragma once

#include <string>
#include <vector>

#include "cl_api.hpp"
#include "opencl/codegen/opencl_source.hpp"
#include "yirage_backend.h"

namespace yirage::opencl {

struct Device {
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // the default stream
  std::string platform_name, device_name, driver_version, extensions;
  bool fp16 = false;                   // cl_khr_fp16
  bool subgroups = false;              // cl_khr_subgroups or cl_intel_subgroups
  bool intel_subgroup_matrix = false;  // cl_intel_subgroup_matrix_multiply_accumulate
  int64_t max_alloc_bytes = 0;         // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  codegen::OpenclTarget target;
  yirage_backend_device_info info{};
};

// Opens every device (at most kMaxDevices). Where there are none, `reason` says why; a device
// that could not be opened is left out and named in `skipped`.
constexpr size_t kMaxDevices = 1024;
std::vector<Device> open_devices(const Api &api, std::string &reason, std::vector<std::string> &skipped);

// Releases the device's queue and context.
void close_device(const Api &api, Device &device);

}  // namespace yirage::opencl
