// Rotary position embeddings (RoPE) at Qwen3-0.6B's decode shapes (head dim 128, 16 query heads,
// 8 key/value heads, one token), written with existing operators only. With x = [x1, x2] the two
// halves of a head, rotate_half(x) = [-x2, x1] = x · R for the fixed 128 × 128 matrix R of 0 and
// ±1 (rope_rotation), so
//
//   RoPE(x) = x ⊙ cos + (x · R) ⊙ sin
//
// with cos, sin the position's [1, 128] tables (a row broadcast over the heads) and R given as
// inputs, as a model precomputes them.
#pragma once

#include <vector>

#include "ir/kernel_graph.hpp"

namespace yirage::bench {

// RoPE of the 16 query heads and 8 key heads of one token, adjacent as a fused QKV projection
// leaves them: inputs x [24, 128], cos [1, 128], sin [1, 128], R [128, 128]; output [24, 128].
// (q and k as two inputs and two outputs of 16 and 8 rows is the same function, but the search
// enumerates nothing for it: docs/ugraphs.md, "Rotary embeddings".)
KernelGraph build_rope(DType dtype);

// The query projection before it, per head: x [1, 1, 1024] · Wq [16, 1024, 128] (the [1024, 2048]
// weight's columns grouped by head, as a loader can store it once; x broadcast over the heads),
// then RoPE with cos, sin [1, 1, 128] and R [1, 128, 128]. Inputs x, Wq, cos, sin, R; output
// RoPE(q) [16, 1, 128]. (With the [1024, 2048] weight and a reshape of x · Wq to the heads, the
// search enumerates nothing: a view after the part worth fusing, docs/search.md, "Limits".)
KernelGraph build_rope_q_projection(DType dtype);

// R for head dim `dim` (even), row-major: (x · R)[j] = -x[j + dim/2] for j < dim/2 and
// x[j - dim/2] after, so R[j + dim/2][j] = -1 and R[j][j + dim/2] = 1.
std::vector<double> rope_rotation(int64_t dim);

}  // namespace yirage::bench
