// Not benchmarks: µGraphs with ragged tiles (src/ir/ragged_tiles.hpp), whose grid and loop do
// not divide the dims they split, each beside the unfused kernel graph computing the same
// function. The absent elements past a dim's end count for nothing in these reductions only if
// they are filled with the right identity: exp(0) = 1 summed, or a zero in a max of negative
// numbers, would show. Used by the fingerprint tests and the conformance suite.
#pragma once

#include <string>
#include <vector>

#include "ir/kernel_graph.hpp"

namespace yirage::bench {

// "attention": softmax(Q·K)·V with online softmax, Q [15, 8] over 2 blocks (8 + 7 rows), K [8,
// 61] and V [61, 8] over 4 iterations (16 · 3 + 13 keys).
// "norm_product": rms_norm(X)·W, X [4, 61], W [61, 13]: the loop over the 61, the columns over 2
// blocks (7 + 6), the norm as the loop's rms divided out after it.
// "row_statistics": over X [7, 61] (rows over 2 blocks of 4, columns over 4 iterations), the
// row max of -exp(X), the row sum of exp(X), the row mean and the row rms, side by side.
// "tiled_exp": exp(X), X [5, 30], saved tile by tile from inside the loop (3 + 2 rows over 2
// blocks, 8 · 3 + 6 columns over 4 iterations).
// "exp_attention": Σ exp(Q·K)·V / Σ exp(Q·K) (the benchmark attention's form), Q [16, 16], K [16,
// 1,030], V [1,030, 16], the keys over 16 iterations: tiles of 65 keys (15 · 65 + 55), which
// attention in registers on CUDA rounds up to 80.
// "max_and_sum": the row max and the row sum of one loaded tile X [7, 61] (rows over 2 blocks,
// columns over 4 iterations): the max's −∞ fill must not reach the sum (a loaded tile holds zeros
// past the end only until a fill writes there).
const std::vector<std::string> &ragged_names();
KernelGraph build_ragged(const std::string &name, bool fused, DType dtype);

// softmax(Q·K)·V, Q [rows, 8], K [8, keys], V [keys, 8]: unfused with the max subtracted, or
// fused with online softmax (the rescale accumulator), the rows over 2 blocks and the keys over
// 4 iterations. "attention" is (15, 61); (16, 64) divides evenly.
KernelGraph build_online_softmax(int64_t rows, int64_t keys, bool fused, DType dtype);

}  // namespace yirage::bench
