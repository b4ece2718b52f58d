// What every generated CUDA kernel starts with, for NVRTC without any header: integer types,
// NaN and infinity, float16/bfloat16 loads, stores and conversions as inline PTX, 16-byte and
// asynchronous copies, mma/ldmatrix/wgmma wrappers, mbarriers, and the yr_* math helpers of
// codegen/expr.hpp.
#pragma once

namespace yirage::codegen::cuda {

extern const char *const kCudaPrelude;

}  // namespace yirage::codegen::cuda
