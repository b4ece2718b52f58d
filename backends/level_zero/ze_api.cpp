#include "ze_api.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace yirage::level_zero {
namespace {

// What the failed initialization means, for unavailable_reason.
std::string init_failure(const Api &api, const std::string &call, ze_result_t result) {
  std::string text = "level_zero: " + call + " returned " + result_name(result);
  if (result == ZE_RESULT_ERROR_UNINITIALIZED) {
    text +=
        ": no Level Zero driver found a GPU (no Intel GPU on this machine, or no driver for it: "
        "Debian's intel-opencl-icd provides libze_intel_gpu.so.1 for Arc and Data Center GPU Max)";
  }
  return text + "; loader " + api.library;
}

// Initializes the drivers; "" on success, else why. After a failure nothing else is called.
std::string init_drivers(Api &api) {
  uint32_t count = 0;
  if (api.zeInitDrivers != nullptr) {
    InitDriverTypeDesc desc{kInitDriverTypeDescType, nullptr, kInitDriverTypeGpu};
    const ze_result_t counted = api.zeInitDrivers(&count, nullptr, &desc);
    if (counted != ZE_RESULT_SUCCESS) return init_failure(api, "zeInitDrivers(GPU)", counted);
    api.drivers.resize(count);
    if (count > 0) {
      const ze_result_t listed = api.zeInitDrivers(&count, api.drivers.data(), &desc);
      if (listed != ZE_RESULT_SUCCESS) return init_failure(api, "zeInitDrivers(GPU)", listed);
    }
  } else {
    const ze_result_t initialized = api.zeInit(ZE_INIT_FLAG_GPU_ONLY);
    if (initialized != ZE_RESULT_SUCCESS) return init_failure(api, "zeInit(ZE_INIT_FLAG_GPU_ONLY)", initialized);
    const ze_result_t counted = api.zeDriverGet(&count, nullptr);
    if (counted != ZE_RESULT_SUCCESS) return init_failure(api, "zeDriverGet", counted);
    api.drivers.resize(count);
    if (count > 0) {
      const ze_result_t listed = api.zeDriverGet(&count, api.drivers.data());
      if (listed != ZE_RESULT_SUCCESS) return init_failure(api, "zeDriverGet", listed);
    }
  }
  api.drivers.resize(count);
  if (api.drivers.empty()) return "level_zero: the loader " + api.library + " initialized no GPU driver";
  return "";
}

}  // namespace

const Api *Api::load(std::string &why) {
  static Api api;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *override_path = std::getenv("YIRAGE_LEVEL_ZERO_LIBRARY");
    api.library = override_path != nullptr && *override_path != '\0' ? override_path : "libze_loader.so.1";
    void *handle = dlopen(api.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char *e = dlerror();
      failure = "level_zero: no Level Zero loader: " + (e ? std::string(e) : api.library + " cannot be opened") +
                " (Debian: libze1, and a driver such as intel-opencl-icd's libze_intel_gpu.so.1)";
      return;
    }
#define YIRAGE_RESOLVE(name)                                             \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name)); \
  if (api.name == nullptr && failure.empty()) failure = "level_zero: " + api.library + " lacks " #name;
    YIRAGE_LEVEL_ZERO_FUNCTIONS(YIRAGE_RESOLVE)
#undef YIRAGE_RESOLVE
    api.zeInitDrivers = reinterpret_cast<InitDriversFunction>(dlsym(handle, "zeInitDrivers"));
    if (failure.empty()) failure = init_drivers(api);
  });
  why = failure;
  return failure.empty() ? &api : nullptr;
}

void Api::check(ze_result_t result, const std::string &what) const {
  if (result == ZE_RESULT_SUCCESS) return;
  const bool memory = result == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY || result == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  throw backend::NativeError(memory ? ErrorCode::kOutOfMemory : ErrorCode::kBackend,
                             "level_zero: " + what + ": " + result_name(result), static_cast<int64_t>(result));
}

std::string result_name(ze_result_t result) {
  const char *name = nullptr;
  switch (result) {
#define YIRAGE_NAME(c) \
  case c: name = #c; break;
    YIRAGE_NAME(ZE_RESULT_SUCCESS)
    YIRAGE_NAME(ZE_RESULT_NOT_READY)
    YIRAGE_NAME(ZE_RESULT_ERROR_DEVICE_LOST)
    YIRAGE_NAME(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)
    YIRAGE_NAME(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
    YIRAGE_NAME(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)
    YIRAGE_NAME(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)
    YIRAGE_NAME(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET)
    YIRAGE_NAME(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE)
    YIRAGE_NAME(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS)
    YIRAGE_NAME(ZE_RESULT_ERROR_NOT_AVAILABLE)
    YIRAGE_NAME(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE)
    YIRAGE_NAME(ZE_RESULT_ERROR_UNINITIALIZED)
    YIRAGE_NAME(ZE_RESULT_ERROR_UNSUPPORTED_VERSION)
    YIRAGE_NAME(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
    YIRAGE_NAME(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_SIZE)
    YIRAGE_NAME(ZE_RESULT_ERROR_UNSUPPORTED_SIZE)
    YIRAGE_NAME(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_ENUMERATION)
    YIRAGE_NAME(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED)
    YIRAGE_NAME(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE)
    YIRAGE_NAME(ZE_RESULT_ERROR_OVERLAPPING_REGIONS)
    YIRAGE_NAME(ZE_RESULT_ERROR_UNKNOWN)
#undef YIRAGE_NAME
    default: break;
  }
  char code[32];
  std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned>(result));
  return name != nullptr ? std::string(name) + " (" + code + ")" : std::string("ze_result_t ") + code;
}

}  // namespace yirage::level_zero
