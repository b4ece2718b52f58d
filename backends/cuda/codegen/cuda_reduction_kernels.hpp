// Kernels of their own for the pre-defined operators that reduce: rms_norm (a block per row) and
// reductions (a warp per output element), both combining partial results with warp shuffles.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_ref.hpp"
#include "ir/operator.hpp"

namespace yirage::codegen::cuda {

// Threads per block of these kernels.
inline constexpr int64_t kThreads = 256;

// Print the kernel body of `op` reading `in` and writing `o`; return the number of blocks.
int64_t rms_norm_kernel(Printer &p, const Operator &op, const std::vector<Ref> &in, const Ref &o);
int64_t reduction_kernel(Printer &p, const Operator &op, const Ref &x, const Ref &o);

}  // namespace yirage::codegen::cuda
