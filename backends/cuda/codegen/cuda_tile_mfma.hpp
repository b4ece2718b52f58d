// A µGraph's tile matmul on the matrix cores of AMD's CDNA 2 (gfx90a, MI200), in HIP sources for
// 64-lane wavefronts only (CudaTarget::mfma_tiles). The output is cut into 16 × 16 tiles (batch
// dims included) dealt to the block's wavefronts in turn; a wavefront computes one with MFMA over
// k, float32 sums in its registers, and stores it into the result tile in LDS:
//  - both operands hold 16-bit values of one type widened (tiles of float16 or bfloat16 inputs):
//    v_mfma_f32_16x16x16f16 or v_mfma_f32_16x16x16bf16_1k, k in steps of 16, exact;
//  - otherwise (a computed tile: rms_norm's, exp's, another matmul's): v_mfma_f32_16x16x4f32 on
//    the float32 values as they are, k in steps of 4.
// Any shape: rows and columns past the output read its last one (in bounds) and are never stored,
// k past the end is zero. Lane l of a wavefront holds A's row l % 16 and B's column l % 16 at k =
// 4 (l / 16) + 0..3 (16-bit) or k = l / 16 (float32), and receives the output's column l % 16 at
// rows 4 (l / 16) + 0..3 (AMD's layouts; backends/hip/testing/mfma_emulator.hpp emulates them).
// Compiled for gfx90a in CI and run there on the emulator; never on an AMD GPU.
#pragma once

#include <cstdint>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_ref.hpp"

namespace yirage::codegen::cuda {

// Which MFMA instruction a tile matmul a·b takes (see above).
enum class MfmaKind { kFloat16, kBFloat16, kFloat32 };
MfmaKind mfma_kind(const Ref &a, const Ref &b);

// Emits o = a·b on MFMA for a block of `threads` threads (whole 64-lane wavefronts), o compact in
// LDS. Returns false, printing nothing, where it does not apply: a block that is not whole
// wavefronts, or an operand read as raw 16-bit elements (a stage of NVIDIA's tensor-core path).
bool mfma_tile_matmul(Printer &p, const Ref &a, const Ref &b, const Ref &o, int64_t threads);

}  // namespace yirage::codegen::cuda
