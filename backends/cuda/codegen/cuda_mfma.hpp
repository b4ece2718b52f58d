// Matrix cores of AMD's CDNA 2 (gfx90a, MI200) for pre-defined matmuls of 16-bit data, in HIP
// sources only (CudaTarget::mfma): each 64-lane wavefront computes a 16 × 16 tile of the output
// with v_mfma_f32_16x16x16 (f16, or bf16_1k) over k in steps of 16, its operands loaded straight
// from the tensors (no LDS), float32 sums; a block of four wavefronts a 32 × 32 tile. Compiled for
// gfx90a and run on a host emulator of the instruction in CI (backends/hip/testing/); it has never
// run on an AMD GPU (NVIDIA cannot run it), so the HIP plugin turns it on only when asked
// (YIRAGE_HIP_MFMA=1, docs/backends/hip.md).
#pragma once

#include <optional>

#include "cuda/codegen/cuda_matmul.hpp"

namespace yirage::codegen::cuda {

// The kernel for o = a·b where the target has MFMA and the data is 16-bit; nullopt (nothing
// printed) elsewhere.
std::optional<MatmulLaunch> mfma_matmul(Printer &p, const Ref &a, const Ref &b, const Ref &o, DType dtype,
                                        const CudaTarget &target);

}  // namespace yirage::codegen::cuda
