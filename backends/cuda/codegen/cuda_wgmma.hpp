// Warpgroup mma (sm_90a) as inline PTX: the one instruction form the generator uses, A in
// registers and B from a shared-memory descriptor (cuda_prelude.cpp's yr_wgmma_desc), and the
// fence that keeps the compiler from reading accumulators before a wait. Attention's Q·K and E·V
// (cuda_attention.cpp) and the tiled GEMM (cuda_gemm.cpp) print them.
#pragma once

#include <cstdint>
#include <string>

#include "ir/dtype.hpp"

namespace yirage::codegen::cuda {

// One wgmma.m64nNk16 with float accumulators acc[first …] ([n / 8][4] from 8-column chunk
// `first`: the layout of mma.m16n8's for each 8 columns, per warp of the group), A = the 4
// registers of `a` (mma.m16n8k16's A layout, per warp), B = the descriptor `desc` of an MN-major
// (transposed) operand of `dtype` (float16 or bfloat16); adds to acc where `accumulate`, else
// overwrites it.
std::string wgmma_call(int64_t n, DType dtype, const std::string &acc, int64_t first, const std::string &a,
                       const std::string &desc, bool accumulate);

// The same with A from shared memory too: `a_desc` the descriptor of a K-major 16-bit operand
// (64 rows from the descriptor's address).
std::string wgmma_call_shared(int64_t n, DType dtype, const std::string &acc, int64_t first, const std::string &a_desc,
                              const std::string &b_desc, bool accumulate);

// "+f"(acc[c][r]) for the 4 values of chunks [first, first + chunks).
std::string wgmma_register_list(const std::string &acc, int64_t first, int64_t chunks);

// After a wait: the accumulators' registers of chunks [first, first + chunks), as the compiler
// sees them, change here, so that it reads none of them before the wgmma wrote them.
std::string wgmma_operand_fence(const std::string &acc, int64_t first, int64_t chunks);

}  // namespace yirage::codegen::cuda
