// Rows in registers: the CUDA code of a customized operator that is a chain of elementwise
// operators, rms_norms and reductions along rows, with no for-loop (ntrans's µGraph, a norm
// before an activation), or a sum over its for-loop of every input tile followed by elementwise
// operators (a split loop's sum of parts). Each thread loads its 8-element chunks of every input
// tile (of every iteration) into registers, computes every operator on them there and stores its
// chunks of the outputs: no tile in shared memory, one barrier per row reduction (where the
// warps' partial sums meet) instead of a shared-memory pass and a barrier per operator.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_printer.hpp"
#include "ir/block_graph.hpp"

namespace yirage::codegen::cuda {

// Emits the kernel body of µGraph `bg` for blocks of `threads` threads (a multiple of 32) this
// way and returns the dynamic shared memory it needs in bytes, or returns nullopt, printing
// nothing, when the µGraph is not such a chain: a for-loop over more than one iteration whose
// input tiles do not each feed one accum_sum and nothing else, other accumulators, matmuls,
// concat/split, an rms_norm over more than the last dim or with a weight, a reduction along
// another dim, tiles of other shapes than the first output's [..., C] and its row statistics
// [..., 1], C not a multiple of 8 (of 256 with a row reduction: each warp's 32 chunks must lie in
// one row), a tile base not a multiple of 8 elements, more than 8 chunks per thread of one tile,
// or more than 144 input values per thread (all iterations'). The code is the same for every
// target.
std::optional<int64_t> emit_rows_in_registers(Printer &p, const BlockGraph &bg, int64_t threads,
                                              const std::vector<DType> &output_dtypes,
                                              const BodyPlacement &placement = {});

}  // namespace yirage::codegen::cuda
