// Kernels of their own for the pre-defined operators that reduce: rms_norm (a block per row) and
// reductions (a block, a warp or a thread per output element, by the reduced dim's length and
// layout), combining partial results with warp shuffles.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_ref.hpp"
#include "ir/operator.hpp"

namespace yirage::codegen::cuda {

// Threads per block of these kernels.
inline constexpr int64_t kThreads = 256;
// A reduction along a contiguous dim of at least this many elements takes a block per output.
inline constexpr int64_t kBlockRun = 2048;

// Print the kernel body of `op` reading `in` and writing `o` (`dtype`: x's, the weight's and the
// output's); return the number of blocks.
int64_t rms_norm_kernel(Printer &p, const Operator &op, const std::vector<Ref> &in, const Ref &o, DType dtype);
// `per_block`: set where the reduction's kernel needs exactly kThreads threads a block.
int64_t reduction_kernel(Printer &p, const Operator &op, const Ref &x, const Ref &o, DType dtype, bool &per_block);

}  // namespace yirage::codegen::cuda
