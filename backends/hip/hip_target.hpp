// What the HIP plugin tells the shared CUDA/HIP generator (backends/cuda/codegen/cuda_source.hpp)
// about an AMD GPU: HIP C++, no NVIDIA features, the device's LDS per block and per compute unit,
// its compute units and wavefront size, and whether matmuls may use its matrix cores (gfx90a's
// MFMA, cuda_mfma.hpp).
#pragma once

#include <cstdint>

#include "cuda/codegen/cuda_source.hpp"

namespace yirage::hip {

// mfma: pre-defined matmuls on MFMA; mfma_tiles: µGraphs' tile matmuls (both for 16-bit data).
inline codegen::CudaTarget hip_target(int64_t lds_per_block, int64_t compute_units, int64_t lds_per_compute_unit,
                                      int wavefront, bool mfma = false, bool mfma_tiles = false) {
  codegen::CudaTarget target{0, lds_per_block, compute_units, lds_per_compute_unit};
  target.dialect = codegen::CudaDialect::kHip;
  target.wavefront = wavefront;
  target.mfma = mfma;
  target.mfma_tiles = mfma_tiles;
  return target;
}

}  // namespace yirage::hip
