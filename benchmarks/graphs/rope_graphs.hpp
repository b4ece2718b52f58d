// Rotary position embeddings (RoPE) at Qwen3-0.6B's decode shapes (head dim 128, 16 query heads,
// 8 key/value heads, one token), written with existing operators only. With x = [x1, x2] the two
// halves of a head, rotate_half(x) = [-x2, x1] = x · R for the fixed 128 × 128 matrix R of 0 and
// ±1 (R[j + 64][j] = -1, R[j][j + 64] = 1 for j < 64), so
//
//   RoPE(x) = x ⊙ cos + (x · R) ⊙ sin
//
// with cos, sin the position's [1, 128] tables (a row broadcast over the heads) and R given as
// inputs, as a model precomputes them.
#pragma once

#include "ir/kernel_graph.hpp"

namespace yirage::bench {

// RoPE of the 16 query heads and 8 key heads of one token, adjacent as a fused QKV projection
// leaves them: inputs x [24, 128], cos [1, 128], sin [1, 128], R [128, 128]; output [24, 128].
// (q and k as two inputs and two outputs is the same function in five inputs, one more than the
// search's default limit for a fused operator; docs/ugraphs.md, "Rotary embeddings".)
KernelGraph build_rope(DType dtype);

// The query projection before it, per head: x [1, 1, 1024] · Wq [16, 1024, 128] (the [1024, 2048]
// weight's columns grouped by head, as a loader can store it once; x broadcast over the heads),
// then RoPE with cos, sin [1, 1, 128] and R [1, 128, 128]. Inputs x, Wq, cos, sin, R; output
// RoPE(q) [16, 1, 128]. Five inputs: within the search's default limit of four, RoPE fuses after
// a pre-defined projection, not with it (docs/ugraphs.md, "Rotary embeddings").
KernelGraph build_rope_q_projection(DType dtype);

// The same function with RoPE as one rotation: x ⊙ cos + (x · R) ⊙ sin = x · M for the position's
// M = diag(cos) + R · diag(sin), a [1, 128, 128] input built per decoded token. Inputs x, Wq, M;
// output (x · Wq) · M [16, 1, 128]. Three inputs where the form above has five: within
// the search's four per fused operator, so the projection fuses with RoPE.
KernelGraph build_rope_q_projection_matrix(DType dtype);

// RoPE (as x · M) then attention over T = 4096 cached keys, as the gqa benchmark writes it: the
// two query heads of each key/value head are its rows, O = (E / Σ E) · V with E = exp((q · M) · K)
// (1/√128 can be folded into M). Inputs q [8, 2, 128], M [1, 128, 128], K [8, 128, 4096],
// V [8, 4096, 128]; output [8, 2, 128].
KernelGraph build_rope_attention(DType dtype);

}  // namespace yirage::bench
