// The six benchmark graphs (benchmarks/README.md) on the internal C++ IR, each in two forms:
// the user's unfused kernel graph, and a hand-written fully fused µGraph (one customized
// operator) computing the same function. Used by the µGraph and fingerprint tests, the graph
// files in examples/graphs/ and the search benchmarks.
//
// `scale` divides the large dims (256, 4096, 6144) so tests can run small versions with the same
// structure; scale 1 gives the benchmark shapes. It must be a power of two from 1 to 16.
#pragma once

#include <string>
#include <vector>

#include "ir/block_graph.hpp"
#include "ir/kernel_graph.hpp"

namespace yirage::bench {

const std::vector<std::string> &benchmark_names();
// Whether the graph has a batch parameter b (benchmarks/README.md runs those at b = 1 and 8;
// lora and gated_mlp ignore it).
bool takes_batch(const std::string &name);

KernelGraph build_unfused(const std::string &name, int64_t b, DType dtype, int64_t scale = 1);
KernelGraph build_fused(const std::string &name, int64_t b, DType dtype, int64_t scale = 1);
// `fused` (inputs, then one customized operator whose first output is the graph's output) with
// that operator's µGraph rebuilt under `config`: another grid or loop for the same µGraph.
KernelGraph with_config(const KernelGraph &fused, const BlockGraphConfig &config);

// Not a benchmark: block-level rms_norm (with a weight), sum and max reductions on odd shapes
// (no tile moves in 16-byte groups), with fewer and more rows than a block has warps, and an
// elementwise chain with a broadcast operand, (x − max)², on three
// blocks (`fused`: one customized operator) and the same operators at kernel level (`unfused`).
// Code generators' tests use it.
KernelGraph build_block_reductions(bool fused, DType dtype);

// Not a benchmark: a chain of rms_norm, row sum and max, elementwise operators with broadcast row
// statistics and a second rms_norm, on [2, 3, 256] tiles of three blocks (6 rows of 256 per
// tile: 192 chunks of 8 for 256 threads, so some warps have none), with no for-loop: the shape
// CUDA keeps in registers (backends/cuda/codegen/cuda_rows.hpp). `fused` / `unfused` as above.
KernelGraph build_row_chain(bool fused, DType dtype);

// Not a benchmark: Mirage's sum_todimx as its attention µGraphs end, on odd sizes. A [6, 5, 160]
// holds four partial results of 40 columns side by side; three blocks of two rows add them up
// over a loop of two iterations (accum_sum_todimx to 40), plus the row sums of B [6, 5, 4]
// (accum_reduce_sum). `unfused`: A split into its four slices, added, plus B's row sums.
KernelGraph build_sum_to_dimx(bool fused, DType dtype);

// Not a benchmark: a decoder's input norm and projection as models have them, rms_norm(X, w)
// with eps 1e-5 and a weight, then ·W (X [rows, 256], W [256, 96]). `fused`: w viewed as
// [1, 256], then one µGraph of 3 blocks of 32 columns looping over 8 tiles of 32 of the hidden
// dim, which computes (X ⊙ w)·W / rms(X), the rms accumulator adding eps (the form the search
// finds). CUDA runs 3 rows on FMAs, 8 on tensor cores.
KernelGraph build_weighted_norm_product(bool fused, DType dtype, int64_t rows = 3);

// Not a benchmark: a chain of three µGraphs, for programs of several operators in one launch
// (plugin ABI 1.4): Y = rms_norm(X)·W1 (X [8, 256], W1 [256, 256]; 8 blocks of 32 columns), then
// Z = Y·W2 (W2 [256, 128]; 4 blocks of 32 columns, each reading all of Y), then silu(Z) ⊙ B (B
// [8, 128]; 2 × 2 blocks of [4, 64], each reading two of Z's blocks). Outputs: silu(Z) ⊙ B, then Z
// (read by the host and by the third µGraph); Y only the chain reads. `unfused`: the same at
// kernel level. Without `gate`: the first two µGraphs, Z the output (a chain ending in weight
// products, where 16-bit).
KernelGraph build_ugraph_chain(bool fused, DType dtype, bool gate = true);

}  // namespace yirage::bench
