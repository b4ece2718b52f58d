// The CUDA code of matmuls read as weight products: a pre-defined matmul (split along k, its
// weights streamed once where m is small), and a µGraph that is nothing but weight products of
// one small A with an elementwise epilogue (gated_mlp's silu(X·W1) ⊙ (X·W2)), generated as the
// same streaming kernel instead of tiles in shared memory.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_ref.hpp"
#include "cuda/codegen/cuda_source.hpp"
#include "ir/block_graph.hpp"

namespace yirage::codegen::cuda {

struct MatmulLaunch {
  int64_t blocks, threads;
  int64_t min_blocks_per_sm = 1;  // for __launch_bounds__: caps registers so that many fit an SM
  int64_t shared_bytes = 0;       // dynamic shared memory per block
  int64_t workspace_bytes = 0;    // CudaKernel::workspace_bytes
};

// The block's place in a pre-defined matmul's grid of blockIdx.x: `first` (fastest, of
// `first_count`), `second` (of `second_count`) and the batch `bt`, with ia / ib the batch offsets
// into A and B (sa / sb: their strides as matmul_operand_strides gives them). `block_index`: the
// block's index in that grid (C text).
void emit_matmul_block_origin(Printer &p, const std::string &first, int64_t first_count, const std::string &second,
                              int64_t second_count, const Dims &batch_out, const Dims &sa, const Dims &sb,
                              const std::string &block_index = "blockIdx.x");

// A pre-defined matmul o = a·b of `dtype` elements. What it puts in `before_wait` runs before
// griddepcontrol.wait and touches no memory but L2 prefetches of b.
MatmulLaunch predefined_matmul(Printer &before_wait, Printer &p, const Ref &a, const Ref &b, const Ref &o, DType dtype,
                               const CudaTarget &target);

// µGraph `bg` (kernel inputs `in`, outputs `out`) as weight products, when it is one: every
// block's loop only multiplies the same tile of a small A (all its rows, the loop along k) by
// tiles of weights of one shape (the grid along their columns in tiles of 4 lanes × 16 bytes,
// 32 columns of 16-bit weights; the loop along k) into sums, and after the loop elementwise
// operators of those sums are all that is saved. The block's loop becomes its warps' slices of
// k, streamed as a pre-defined matmul streams its weights (so a loop that does not divide k, its
// last tile ragged, is the same product). nullopt (nothing emitted) for any other µGraph.
// `block_index`: the block's index in the µGraph's grid (C text; a persistent kernel's task's).
std::optional<MatmulLaunch> ugraph_weight_products(Printer &before_wait, Printer &p, const BlockGraph &bg,
                                                   const std::vector<Ref> &in, const std::vector<Ref> &out,
                                                   const CudaTarget &target,
                                                   const std::string &block_index = "blockIdx.x");

}  // namespace yirage::codegen::cuda
