// The OpenCL backend's code generator: OpenCL C 1.2 for one kernel program, through the shared
// lowering (src/codegen) and OpenclPrinter. No extension is required: float16 tensors use
// vload_half/vstore_half, bfloat16 tensors 16-bit shifts, arithmetic is float32.
//
// The source defines one kernel, __kernel void yirage_opencl_kernel(in0…, out0…), one __global
// pointer per program input, then per output, on compact row-major tensors, with a work-group
// size fixed in the source (reqd_work_group_size). A customized operator runs one work-group per
// µGraph block (get_group_id(0..2) = bx, by, bz), its tiles in a __local float arena; a
// pre-defined operator is loops strided over the NDRange's work-items. docs/backends/opencl.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "serialize/kernel_program.hpp"

namespace yirage::codegen {

inline constexpr const char *kOpenclKernelSymbol = "yirage_opencl_kernel";

// What the generated source may use on its device.
struct OpenclTarget {
  int64_t max_local_bytes = 0;   // CL_DEVICE_LOCAL_MEM_SIZE; 0: no limit
  int64_t max_work_group = 256;  // the largest work-group the kernel may have
  int64_t compute_units = 1;     // CL_DEVICE_MAX_COMPUTE_UNITS
  bool cpu = false;              // a CPU device (PoCL): fewer, smaller work-groups
};

struct OpenclKernel {
  std::string source;
  std::array<int64_t, 3> groups = {1, 1, 1};  // work-groups per dimension
  int64_t local_size = 1;                     // work-items per work-group (dimension 0 only)
};

// Throws Error(kUnsupported) for an operator it cannot generate: a customized operator whose
// tiles need more than target.max_local_bytes, or tensors too large for 32-bit indices.
OpenclKernel opencl_source(const serialize::KernelProgram &program, const OpenclTarget &target);

}  // namespace yirage::codegen
