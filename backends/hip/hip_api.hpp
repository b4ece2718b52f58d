// The HIP runtime and hiprtc, opened with dlopen at run time (never linked: the plugin must load on
// machines without ROCm). Their headers are used for their types only. Also the code object
// manager's list of the GPU architectures this ROCm can compile for: hiprtc aborts the process
// for one it does not know (ROCm 5.2 for gfx940-gfx942 and gfx11xx), so the list is asked first.
#pragma once

#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include <mutex>
#include <string>
#include <vector>

#include "entry_guard.hpp"
#include "runtime.hpp"

namespace yirage::hip {

// clang-format off: one function per line
#define YIRAGE_HIP_FUNCTIONS(X) \
  X(hipGetErrorName)            \
  X(hipGetErrorString)          \
  X(hipRuntimeGetVersion)       \
  X(hipGetDeviceCount)          \
  X(hipGetDeviceProperties)     \
  X(hipSetDevice)               \
  X(hipDeviceSynchronize)       \
  X(hipFree)                    \
  X(hipMemcpyHtoD)              \
  X(hipMemcpyDtoH)              \
  X(hipModuleLoadData)          \
  X(hipModuleUnload)            \
  X(hipModuleGetFunction)       \
  X(hipModuleLaunchKernel)      \
  X(hipStreamSynchronize)       \
  X(hipEventCreate)             \
  X(hipEventDestroy)            \
  X(hipEventRecord)             \
  X(hipEventSynchronize)        \
  X(hipEventElapsedTime)

#define YIRAGE_HIPRTC_FUNCTIONS(X) \
  X(hiprtcVersion)                 \
  X(hiprtcGetErrorString)          \
  X(hiprtcCreateProgram)           \
  X(hiprtcDestroyProgram)          \
  X(hiprtcCompileProgram)          \
  X(hiprtcGetProgramLogSize)       \
  X(hiprtcGetProgramLog)           \
  X(hiprtcGetCodeSize)             \
  X(hiprtcGetCode)
// clang-format on

struct Api {
#define YIRAGE_DECLARE(name) decltype(&::name) name = nullptr;
  YIRAGE_HIP_FUNCTIONS(YIRAGE_DECLARE)
  YIRAGE_HIPRTC_FUNCTIONS(YIRAGE_DECLARE)
#undef YIRAGE_DECLARE
  hipError_t (*hipMalloc)(void **, size_t) = nullptr;  // C++ overloads it with a template
  std::string library;                                 // the HIP runtime that was opened
  std::string hiprtc_library;                          // where hiprtc was found (the runtime itself in ROCm 5)
  int hiprtc_major = 0, hiprtc_minor = 0;
  void *handle = nullptr;  // the runtime's

  // The architectures hiprtc can compile for ("gfx90a", …), from the code object manager, asked
  // at the first call (not when the plugin is created: the code object manager's clang cannot
  // share a process with another clang, such as PoCL's; docs/backends/hip.md); empty where it
  // could not be asked (then every architecture is refused, saying why in `why`).
  const std::vector<std::string> &architectures(std::string *why = nullptr) const;

  mutable std::once_flag architectures_once;
  mutable std::vector<std::string> architectures_found;
  mutable std::string architectures_why;

  // Opens $YIRAGE_HIP_LIBRARY, else libamdhip64.so (once per process); nullptr with `why` set when
  // it cannot.
  static const Api *load(std::string &why);

  // "hipErrorNoDevice (100): no ROCm-capable device is detected"-like text for `error`.
  std::string error_text(hipError_t error) const;
  // Throws NativeError (kOutOfMemory for hipErrorOutOfMemory, else kBackend) with the code unless
  // hipSuccess.
  void check(hipError_t error, const std::string &what) const;

  // HIP C++ → code object for `arch` (a gcnArchName such as "gfx90a:sramecc+:xnack-": the
  // features after the name are passed on). Throws Error(kUnsupported) for an architecture this
  // hiprtc cannot compile for, NativeError(kBackend) with hiprtc's log when compiling fails.
  std::string compile(const std::string &source, const std::string &arch) const;
};

}  // namespace yirage::hip
