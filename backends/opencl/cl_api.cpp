#include "cl_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace yirage::opencl {

const Api *Api::load(std::string &why) {
  static Api api;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *override_path = std::getenv("YIRAGE_OPENCL_LIBRARY");
    api.library = override_path != nullptr && *override_path != '\0' ? override_path : "libOpenCL.so.1";
    void *handle = dlopen(api.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char *e = dlerror();
      failure = "opencl: no ICD loader: " + (e ? std::string(e) : api.library + " cannot be opened") +
                " (Debian: ocl-icd-libopencl1 and a driver such as pocl-opencl-icd)";
      return;
    }
#define YIRAGE_RESOLVE(name)                                             \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name)); \
  if (api.name == nullptr && failure.empty()) failure = "opencl: " + api.library + " lacks " #name;
    YIRAGE_OPENCL_FUNCTIONS(YIRAGE_RESOLVE)
#undef YIRAGE_RESOLVE
  });
  why = failure;
  return failure.empty() ? &api : nullptr;
}

void Api::check(cl_int result, const std::string &what) const {
  if (result == CL_SUCCESS) return;
  // CL_OUT_OF_RESOURCES is not counted: drivers give it for a kernel they cannot run too.
  const bool memory = result == CL_OUT_OF_HOST_MEMORY || result == CL_MEM_OBJECT_ALLOCATION_FAILURE;
  throw backend::NativeError(memory ? ErrorCode::kOutOfMemory : ErrorCode::kBackend,
                             "opencl: " + what + ": " + error_name(result), result);
}

std::string error_name(cl_int code) {
  switch (code) {
#define YIRAGE_NAME(c) \
  case c: return #c;
    YIRAGE_NAME(CL_DEVICE_NOT_FOUND)
    YIRAGE_NAME(CL_DEVICE_NOT_AVAILABLE)
    YIRAGE_NAME(CL_COMPILER_NOT_AVAILABLE)
    YIRAGE_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    YIRAGE_NAME(CL_OUT_OF_RESOURCES)
    YIRAGE_NAME(CL_OUT_OF_HOST_MEMORY)
    YIRAGE_NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
    YIRAGE_NAME(CL_BUILD_PROGRAM_FAILURE)
    YIRAGE_NAME(CL_INVALID_VALUE)
    YIRAGE_NAME(CL_INVALID_DEVICE_TYPE)
    YIRAGE_NAME(CL_INVALID_PLATFORM)
    YIRAGE_NAME(CL_INVALID_DEVICE)
    YIRAGE_NAME(CL_INVALID_CONTEXT)
    YIRAGE_NAME(CL_INVALID_COMMAND_QUEUE)
    YIRAGE_NAME(CL_INVALID_MEM_OBJECT)
    YIRAGE_NAME(CL_INVALID_BINARY)
    YIRAGE_NAME(CL_INVALID_BUILD_OPTIONS)
    YIRAGE_NAME(CL_INVALID_PROGRAM)
    YIRAGE_NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    YIRAGE_NAME(CL_INVALID_KERNEL_NAME)
    YIRAGE_NAME(CL_INVALID_KERNEL)
    YIRAGE_NAME(CL_INVALID_ARG_INDEX)
    YIRAGE_NAME(CL_INVALID_ARG_VALUE)
    YIRAGE_NAME(CL_INVALID_ARG_SIZE)
    YIRAGE_NAME(CL_INVALID_KERNEL_ARGS)
    YIRAGE_NAME(CL_INVALID_WORK_DIMENSION)
    YIRAGE_NAME(CL_INVALID_WORK_GROUP_SIZE)
    YIRAGE_NAME(CL_INVALID_WORK_ITEM_SIZE)
    YIRAGE_NAME(CL_INVALID_GLOBAL_OFFSET)
    YIRAGE_NAME(CL_INVALID_EVENT_WAIT_LIST)
    YIRAGE_NAME(CL_INVALID_EVENT)
    YIRAGE_NAME(CL_INVALID_OPERATION)
    YIRAGE_NAME(CL_INVALID_BUFFER_SIZE)
    YIRAGE_NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    YIRAGE_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
#undef YIRAGE_NAME
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "cl_int " + std::to_string(code);
  }
}

}  // namespace yirage::opencl
