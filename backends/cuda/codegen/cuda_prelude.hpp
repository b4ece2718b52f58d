// What every generated CUDA kernel starts with, for NVRTC without any header: integer types,
// NaN and infinity, float16/bfloat16 loads, stores and conversions as inline PTX, 16-byte and
// asynchronous copies, mma/ldmatrix/wgmma wrappers, mbarriers, and the yr_* math helpers of
// codegen/expr.hpp.
//
// A HIP source (CudaDialect::kHip) starts with the same helpers for hiprtc, also without any
// header: NVIDIA's features switched off, the PTX conversions replaced by clang's, CUDA's warp
// functions mapped to HIP's over 32 lanes, and the wavefront size it was generated for checked
// against the compiler's. Compiled by NVRTC instead, it keeps the PTX conversions and CUDA's warp
// functions and runs the code hiprtc would get otherwise (docs/backends/hip.md).
#pragma once

#include <string>

#include "cuda/codegen/cuda_source.hpp"

namespace yirage::codegen::cuda {

// wavefront: the HIP device's (64 or 32); ignored for CUDA.
std::string prelude(CudaDialect dialect, int wavefront);

}  // namespace yirage::codegen::cuda
