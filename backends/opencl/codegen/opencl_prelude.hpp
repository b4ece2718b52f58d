#pragma once

namespace yirage::codegen::opencl {

// What every generated OpenCL C kernel starts with: the math helpers of the loop-level form
// (codegen/expr.hpp, kHelpers) and the bfloat16 conversions.
extern const char *const kOpenclPrelude;

}  // namespace yirage::codegen::opencl
