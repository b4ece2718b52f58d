// The CUDA driver API, NVRTC and cuBLASLt, opened with dlopen at run time (never linked: the
// plugin must load on machines without them). Their headers are used for their types only.
#pragma once

#include <cublasLt.h>
#include <cuda.h>
#include <nvrtc.h>

#include <string>

#include "entry_guard.hpp"

namespace yirage::cuda {

using backend::NativeError;

// clang-format off: one function per line
#define YIRAGE_CUDA_DRIVER_FUNCTIONS(X)                                                         \
  X(cuInit, "cuInit")                                                                           \
  X(cuGetErrorName, "cuGetErrorName")                                                           \
  X(cuDriverGetVersion, "cuDriverGetVersion")                                                   \
  X(cuDeviceGetCount, "cuDeviceGetCount")                                                       \
  X(cuDeviceGet, "cuDeviceGet")                                                                 \
  X(cuDeviceGetName, "cuDeviceGetName")                                                         \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                                               \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2")                                                    \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                                       \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")                                  \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                                                         \
  X(cuCtxSynchronize, "cuCtxSynchronize")                                                       \
  X(cuMemAlloc, "cuMemAlloc_v2")                                                                \
  X(cuMemFree, "cuMemFree_v2")                                                                  \
  X(cuMemHostAlloc, "cuMemHostAlloc")                                                           \
  X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2")                                  \
  X(cuMemFreeHost, "cuMemFreeHost")                                                             \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                                                            \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")                                                            \
  X(cuMemsetD32Async, "cuMemsetD32Async")                                                       \
  X(cuModuleLoadData, "cuModuleLoadData")                                                       \
  X(cuModuleUnload, "cuModuleUnload")                                                           \
  X(cuModuleGetFunction, "cuModuleGetFunction")                                                 \
  X(cuFuncSetAttribute, "cuFuncSetAttribute")                                                   \
  X(cuFuncGetAttribute, "cuFuncGetAttribute")                                                   \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor") \
  X(cuLaunchKernel, "cuLaunchKernel")                                                           \
  X(cuStreamSynchronize, "cuStreamSynchronize")                                                 \
  X(cuEventCreate, "cuEventCreate")                                                             \
  X(cuEventDestroy, "cuEventDestroy_v2")                                                        \
  X(cuEventRecord, "cuEventRecord")                                                             \
  X(cuEventSynchronize, "cuEventSynchronize")

#define YIRAGE_NVRTC_FUNCTIONS(X) \
  X(nvrtcVersion)                 \
  X(nvrtcGetErrorString)          \
  X(nvrtcCreateProgram)           \
  X(nvrtcDestroyProgram)          \
  X(nvrtcCompileProgram)          \
  X(nvrtcGetProgramLogSize)       \
  X(nvrtcGetProgramLog)           \
  X(nvrtcGetCUBINSize)            \
  X(nvrtcGetCUBIN)

#define YIRAGE_CUBLASLT_FUNCTIONS(X)      \
  X(cublasLtCreate)                       \
  X(cublasLtDestroy)                      \
  X(cublasLtGetStatusString)              \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatrixLayoutSetAttribute)     \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmul)
// clang-format on

struct Driver {
#define YIRAGE_DECLARE(name, symbol) decltype(&::name) name = nullptr;
  YIRAGE_CUDA_DRIVER_FUNCTIONS(YIRAGE_DECLARE)
#undef YIRAGE_DECLARE
  // cuEventElapsedTime_v2 where the driver has it, else the original (same signature).
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent) = nullptr;
  // Drivers of CUDA 12 and newer; nullptr before (launches then go through cuLaunchKernel).
  decltype(&::cuLaunchKernelEx) cuLaunchKernelEx = nullptr;
  // CUDA graphs, for recordings (plugin ABI 1.3): all set, or all nullptr where the driver
  // lacks one (recording_begin then says so).
  decltype(&::cuStreamCreate) cuStreamCreate = nullptr;
  decltype(&::cuStreamDestroy) cuStreamDestroy = nullptr;
  decltype(&::cuStreamBeginCapture) cuStreamBeginCapture = nullptr;
  decltype(&::cuStreamEndCapture) cuStreamEndCapture = nullptr;
  decltype(&::cuGraphInstantiate) cuGraphInstantiate = nullptr;
  decltype(&::cuGraphDestroy) cuGraphDestroy = nullptr;
  decltype(&::cuGraphLaunch) cuGraphLaunch = nullptr;
  decltype(&::cuGraphExecDestroy) cuGraphExecDestroy = nullptr;
  bool graphs() const {
    return cuGraphExecDestroy != nullptr;
  }

  // Opens libcuda.so.1 (once per process); nullptr with `why` set when it cannot.
  static const Driver *load(std::string &why);

  // Throws NativeError(kBackend, or kOutOfMemory for CUDA_ERROR_OUT_OF_MEMORY) unless OK.
  void check(CUresult result, const std::string &what) const;
};

struct Nvrtc {
#define YIRAGE_DECLARE(name) decltype(&::name) name = nullptr;
  YIRAGE_NVRTC_FUNCTIONS(YIRAGE_DECLARE)
#undef YIRAGE_DECLARE
  int major = 0, minor = 0;
  std::string library;  // the file that was opened

  // Opens NVRTC (once per process): $YIRAGE_NVRTC, else libnvrtc.so[.13/.12] from the library
  // path, else $CUDA_HOME/lib64 and /usr/local/cuda/lib64. Throws Error(kNotFound) listing what
  // was tried.
  static const Nvrtc &load();

  // CUDA C++ → cubin for `arch` ("sm_90"). Throws NativeError(kBackend) with the build log.
  std::string compile(const std::string &source, const std::string &arch) const;
};

// cuBLASLt, for kernel-level matmuls (cublas_matmul.hpp).
struct CublasLt {
#define YIRAGE_DECLARE(name) decltype(&::name) name = nullptr;
  YIRAGE_CUBLASLT_FUNCTIONS(YIRAGE_DECLARE)
#undef YIRAGE_DECLARE
  std::string library;  // the file that was opened

  // Opens cuBLASLt (once per process) like NVRTC, from $YIRAGE_CUBLASLT or libcublasLt.so[.13/
  // .12]; nullptr with `why` set when it cannot, or when YIRAGE_CUDA_CUBLAS=0 turns it off.
  static const CublasLt *load(std::string &why);

  // Throws NativeError(kBackend, or kOutOfMemory for CUBLAS_STATUS_ALLOC_FAILED) unless OK.
  void check(cublasStatus_t status, const std::string &what) const;
};

}  // namespace yirage::cuda
