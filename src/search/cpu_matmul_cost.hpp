// The CPU plugin's matmul micro-kernel as the cost model sees it (backends/cpu/codegen/
// cpu_printer.cpp, print_matmul): the cycles one core spends and the bytes of B it reads, given
// the operands' shapes and element sizes. The CPU estimate counts these instead of FLOPs at a
// peak the generated loop never reaches, so that tile shapes and loop sizes rank apart.
#pragma once

#include <cstdint>

namespace yirage::search {

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
