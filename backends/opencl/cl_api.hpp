// The OpenCL API, opened at run time from the ICD loader (libOpenCL.so.1, or the file named by
// YIRAGE_OPENCL_LIBRARY) with dlopen, never linked: the plugin must load on machines without one.
// The Khronos headers are used for their types only (OpenCL 1.2 entries: every ICD has them).
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <string>

#include "entry_guard.hpp"

namespace yirage::opencl {

// clang-format off: one function per line
#define YIRAGE_OPENCL_FUNCTIONS(X) \
  X(clGetPlatformIDs)              \
  X(clGetPlatformInfo)             \
  X(clGetDeviceIDs)                \
  X(clGetDeviceInfo)               \
  X(clCreateContext)               \
  X(clReleaseContext)              \
  X(clCreateCommandQueue)          \
  X(clReleaseCommandQueue)         \
  X(clCreateBuffer)                \
  X(clReleaseMemObject)            \
  X(clGetMemObjectInfo)            \
  X(clEnqueueWriteBuffer)          \
  X(clEnqueueReadBuffer)           \
  X(clEnqueueFillBuffer)           \
  X(clCreateProgramWithSource)     \
  X(clCreateProgramWithBinary)     \
  X(clBuildProgram)                \
  X(clGetProgramBuildInfo)         \
  X(clGetProgramInfo)              \
  X(clReleaseProgram)              \
  X(clCreateKernel)                \
  X(clReleaseKernel)               \
  X(clSetKernelArg)                \
  X(clGetKernelWorkGroupInfo)      \
  X(clEnqueueNDRangeKernel)        \
  X(clEnqueueMarkerWithWaitList)   \
  X(clFinish)                      \
  X(clWaitForEvents)               \
  X(clGetEventProfilingInfo)       \
  X(clReleaseEvent)
// clang-format on

struct Api {
#define YIRAGE_DECLARE(name) decltype(&::name) name = nullptr;
  YIRAGE_OPENCL_FUNCTIONS(YIRAGE_DECLARE)
#undef YIRAGE_DECLARE
  std::string library;  // the file opened

  // The API, opened once per process; nullptr with `why` set when there is no ICD loader or it
  // lacks an entry.
  static const Api *load(std::string &why);

  // Throws NativeError (the cl_int as native code; OUT_OF_MEMORY for the allocation failures,
  // BACKEND otherwise) unless result is CL_SUCCESS.
  void check(cl_int result, const std::string &what) const;
};

// "CL_OUT_OF_RESOURCES" for -5, …; "cl_int <n>" for codes it does not know.
std::string error_name(cl_int code);

}  // namespace yirage::opencl
