// The Level Zero API, opened at run time from the loader (libze_loader.so.1, or the file named by
// YIRAGE_LEVEL_ZERO_LIBRARY) with dlopen, never linked: the plugin must load on machines without
// it. The oneAPI headers (Debian: libze-dev) are used for their types only.
//
// Loading also initializes the drivers, once per process: zeInitDrivers where the loader has it
// (Level Zero 1.10; looked up as optional), else zeInit(ZE_INIT_FLAG_GPU_ONLY) and zeDriverGet.
// When that fails no other ze* function is ever called (one Intel driver crashes if called after
// a failed zeInit): load() hands out no Api then, so no caller can.
#pragma once

#include <level_zero/ze_api.h>

#include <string>
#include <vector>

#include "entry_guard.hpp"

namespace yirage::level_zero {

// clang-format off: one function per line
#define YIRAGE_LEVEL_ZERO_FUNCTIONS(X)       \
  X(zeInit)                                  \
  X(zeDriverGet)                             \
  X(zeDriverGetProperties)                   \
  X(zeDeviceGet)                             \
  X(zeDeviceGetProperties)                   \
  X(zeDeviceGetComputeProperties)            \
  X(zeDeviceGetMemoryProperties)             \
  X(zeDeviceGetCacheProperties)              \
  X(zeDeviceGetCommandQueueGroupProperties)  \
  X(zeContextCreate)                         \
  X(zeContextDestroy)                        \
  X(zeCommandListCreateImmediate)            \
  X(zeCommandListDestroy)                    \
  X(zeCommandListAppendLaunchKernel)         \
  X(zeCommandListAppendBarrier)              \
  X(zeCommandListAppendMemoryCopy)           \
  X(zeCommandListAppendWriteGlobalTimestamp) \
  X(zeEventPoolCreate)                       \
  X(zeEventPoolDestroy)                      \
  X(zeEventCreate)                           \
  X(zeEventDestroy)                          \
  X(zeEventHostSynchronize)                  \
  X(zeEventHostReset)                        \
  X(zeMemAllocDevice)                        \
  X(zeMemAllocHost)                          \
  X(zeMemFree)                               \
  X(zeMemGetAllocProperties)                 \
  X(zeMemGetAddressRange)                    \
  X(zeModuleCreate)                          \
  X(zeModuleDestroy)                         \
  X(zeModuleBuildLogGetString)               \
  X(zeModuleBuildLogDestroy)                 \
  X(zeKernelCreate)                          \
  X(zeKernelDestroy)                         \
  X(zeKernelSetGroupSize)                    \
  X(zeKernelSetArgumentValue)
// clang-format on

// zeInitDrivers and its descriptor (Level Zero 1.10), which Debian's 1.8 headers lack.
struct InitDriverTypeDesc {
  ze_structure_type_t stype;
  const void *pNext;
  uint32_t flags;
};
inline constexpr ze_structure_type_t kInitDriverTypeDescType = static_cast<ze_structure_type_t>(0x00020021);
inline constexpr uint32_t kInitDriverTypeGpu = 1;  // ZE_INIT_DRIVER_TYPE_FLAG_GPU
using InitDriversFunction = ze_result_t (*)(uint32_t *count, ze_driver_handle_t *drivers, InitDriverTypeDesc *desc);

struct Api {
#define YIRAGE_DECLARE(name) decltype(&::name) name = nullptr;
  YIRAGE_LEVEL_ZERO_FUNCTIONS(YIRAGE_DECLARE)
#undef YIRAGE_DECLARE
  InitDriversFunction zeInitDrivers = nullptr;  // optional
  std::string library;                          // the file opened
  std::vector<ze_driver_handle_t> drivers;      // the GPU drivers initialization gave

  // The API with its drivers initialized, once per process; nullptr with `why` set when there
  // is no loader, it lacks an entry, or initialization failed or found no GPU driver.
  static const Api *load(std::string &why);

  // Throws NativeError (the ze_result_t as native code; OUT_OF_MEMORY for the allocation
  // failures, BACKEND otherwise) unless result is ZE_RESULT_SUCCESS.
  void check(ze_result_t result, const std::string &what) const;
};

// "ZE_RESULT_ERROR_DEVICE_LOST (0x70000001)", …; "ze_result_t 0x…" for codes it does not know.
std::string result_name(ze_result_t result);

}  // namespace yirage::level_zero
