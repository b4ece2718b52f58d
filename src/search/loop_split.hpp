// Splitting a customized operator's for-loop across blocks (split-k, flash-decoding's split-KV).
//
// A µGraph whose blocks are too few to fill the device (attention: 2 batches × 32 groups of 8
// query rows = 64 blocks on 132 multiprocessors, each looping over all 4096 keys) runs its loop
// in `parts` chunks on `parts` times as many blocks, then adds the chunks up in a second kernel:
//
//   kernel 1: the µGraph up to its accumulators, on a grid with one more split axis mapped to
//             the loop's dim of every per-iteration input, forloop_range / parts iterations;
//             it writes every accumulator's partial sum (float32: partial sums of a 16-bit
//             graph can exceed the 16-bit range that the final quotient fits in).
//   kernel 2: a for-loop over the parts that sums the partials (AccumSum), then the µGraph's
//             after-loop operators and output savers, on the original grid with one axis up
//             to `parts` times finer (as many blocks as kernel 1 where the tiles divide: its
//             work is elementwise, and on the original grid each block would read `parts`
//             times as much as a block of kernel 1 writes).
//
// The rewrite applies where every accumulator is a sum (kAccumSum, kAccumReduceSum: sums of
// chunk sums), the after-loop operators are elementwise on after-loop tiles, no output is
// written per iteration, and a grid axis is free. Its result is an ordinary kernel graph: the
// search verifies and profiles it like any other candidate.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/kernel_graph.hpp"

namespace yirage::search {

// `graph` with customized operator `op_index` split into two kernels as above, or nullopt where
// the operator does not qualify or `parts` does not divide its forloop_range.
std::optional<KernelGraph> split_loop(const KernelGraph &graph, size_t op_index, int64_t parts);

}  // namespace yirage::search
