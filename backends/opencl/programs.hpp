// Building generated OpenCL C for a device, with the program binaries kept in the checksummed
// kernel cache (util/file_cache.hpp), keyed by the source, the build options and the platform,
// device and driver version, so a driver update never loads a stale binary.
#pragma once

#include <functional>
#include <string>

#include "devices.hpp"

namespace yirage::opencl {

// A built program and its one kernel; both released by release_kernel.
struct BuiltKernel {
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
  size_t work_group_size = 0;  // CL_KERNEL_WORK_GROUP_SIZE: the most work-items it may run with
};

// Warnings: a damaged entry rebuilt, or a cache that cannot be written (a caller may give that one
// once).
enum class BuildWarning { kRebuilt, kCacheUnwritable };
using BuildLog = std::function<void(BuildWarning, const std::string &)>;

// The kernel named `symbol` in `source`, built for `device`: from the cached binary where one is
// intact, else compiled and its binary kept (with the source beside it, `<key>.cl`). A failed
// build throws NativeError(kBackend) carrying the driver's code and its build log.
BuiltKernel build_kernel(const Api &api, const Device &device, const std::string &source, const char *symbol,
                         const std::string &cache_dir, const BuildLog &log);

void release_kernel(const Api &api, BuiltKernel &built);

}  // namespace yirage::opencl
