// The CPU plugin's matmul micro-kernel as the cost model sees it (backends/cpu/codegen/
// cpu_printer.cpp, print_matmul): the cycles one core spends and the bytes of B it reads, given
// the operands' shapes and element sizes. The CPU estimate counts these instead of FLOPs at a
// peak the generated loop never reaches, so that tile shapes and loop sizes rank apart.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/block_graph.hpp"

namespace yirage::search {

// print_matmul's register block: rows of A by columns of B per task (a 16-bit B with fewer rows
// takes 256 / rows columns, 32 to 128). The generator and this model share them.
constexpr int64_t kCpuMatmulRows = 16, kCpuMatmulCols = 128;
// Kernel-level products of a whole block of rows or more go to the plugin's small-GEMM (libxsmm);
// fewer rows (decode) stream B through the generated loop.
constexpr int64_t kCpuGemmRows = kCpuMatmulRows;
// A kernel-level product of 16-bit tensors converts each task's 16 rows of A and its k × 128
// block of B (and its sums, when the result is 16-bit) into its thread's scratch, kept until the
// thread ends; only where that scratch is at most this many bytes (k up to about 7,000). Longer
// sums keep the loop.
constexpr int64_t kCpuConvertedScratchBytes = int64_t{4} << 20;
// Whether a kernel-level product A [.., m, k] · B [.., k, n] goes to the small-GEMM.
bool cpu_kernel_product_gemm(int64_t m, int64_t k, bool a16, bool b16, bool out16);

// A µGraph's 16-bit input tile read only by matmuls of fewer rows than this is read in place by
// the loop (which converts B's rows as it streams them); with more, it is converted into the
// block's arena so that the matmuls go to the small-GEMM (benchmarks/cpu/README.md).
constexpr int64_t kCpuNarrowGemmRows = 4;

// Per tensor of `bg`: whether the CPU plugin reads that input tile in place, from the kernel's
// tensor through a strided view, instead of copying it into the block's arena: a tile read only
// by matmuls, in float32 always, in 16 bits where those matmuls have fewer than
// kCpuNarrowGemmRows rows. The generator (backends/cpu/codegen/cpu_source.cpp) and the cost
// model both follow it.
std::vector<bool> cpu_in_place_tiles(const BlockGraph &bg);

struct CpuMatmulCost {
  double cycles = 0;   // on one core, at `lanes` float32 SIMD lanes
  double b_bytes = 0;  // B as read: once per block of A's rows
};

// A [batches, m, k] · B [batches, k, n], elements of a_bytes, b_bytes and out_bytes bytes. With
// `gemm`, the blocks go to the plugin's small-GEMM (libxsmm; backends/cpu/gemm.hpp), 16-bit
// operands converted to float first; else they run the generated loop.
CpuMatmulCost cpu_matmul_cost(int64_t batches, int64_t m, int64_t n, int64_t k, int64_t a_bytes, int64_t b_bytes,
                              int64_t out_bytes, int64_t lanes, bool gemm = false);

}  // namespace yirage::search
