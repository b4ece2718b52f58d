#include "search/cpu_matmul_cost.hpp"

#include <algorithm>

namespace yirage::search {

bool cpu_kernel_product_gemm(int64_t m, int64_t k, bool a16, bool b16, bool out16) {
  if (m < kCpuGemmRows) return false;
  const int64_t floats =
      (a16 ? kCpuMatmulRows * k : 0) + (b16 ? k * kCpuMatmulCols : 0) + (out16 ? kCpuMatmulRows * kCpuMatmulCols : 0);
  return 4 * floats <= kCpuConvertedScratchBytes;
}

std::vector<bool> cpu_in_place_tiles(const BlockGraph &bg) {
  std::vector<bool> in_place(bg.num_tensors(), false);
  for (const Operator &op : bg.operators()) {
    if (op.kind != OpKind::kInputIterator) continue;
    const TensorId tile = op.outputs[0];
    bool only_matmuls = true, used = false;
    int64_t rows = 0;
    for (const Operator &reader : bg.operators()) {
      if (std::find(reader.inputs.begin(), reader.inputs.end(), tile) == reader.inputs.end()) continue;
      used = true;
      if (reader.kind != OpKind::kMatmul) {  // an output saver, say, which has no outputs
        only_matmuls = false;
        break;
      }
      const Dims &out = bg.tensor(reader.outputs.at(0)).dims;
      rows = std::max(rows, out[out.size() - 2]);
    }
    in_place[static_cast<size_t>(tile)] =
        used && only_matmuls && (bg.tensor(tile).dtype == DType::kFloat32 || rows < kCpuNarrowGemmRows);
  }
  return in_place;
}

CpuMatmulCost cpu_matmul_cost(int64_t batches, int64_t m, int64_t n, int64_t k, int64_t a_bytes, int64_t b_bytes,
                              int64_t out_bytes, int64_t lanes, bool gemm) {
  const int64_t rows = std::min(m, kCpuMatmulRows);
  const bool narrow_b = b_bytes == 2 && rows < kCpuMatmulRows;
  const int64_t cols = std::min(n, narrow_b ? std::clamp<int64_t>(256 / rows, 32, kCpuMatmulCols) : kCpuMatmulCols);
  const int64_t row_blocks = (m + rows - 1) / rows, col_blocks = (n + cols - 1) / cols;
  const auto tasks = static_cast<double>(batches * row_blocks * col_blocks);
  const auto vectors = static_cast<double>((cols + lanes - 1) / lanes);  // per row of the block
  // The sums stay in registers while they fit half of them (32 with AVX-512, 16 below): a vector
  // FMA issues at two a cycle; beyond that each adds a load and a store in L1, a cycle.
  const double registers = lanes >= 16 ? 32 : 16;
  const double fma = static_cast<double>(rows) * vectors <= registers / 2 ? 0.5 : 1.0;
  // Per step of k: B's row converted into a buffer (a load and a store per vector, twice for
  // 16-bit), then per row of A a broadcast (converted when 16-bit) and the row's FMAs.
  const double step =
      vectors * (b_bytes == 2 ? 2 : 1) + static_cast<double>(rows) * ((a_bytes == 2 ? 2 : 1) + vectors * fma);
  // Per task: the sums zeroed, then stored (converted when 16-bit).
  const double task = static_cast<double>(rows) * vectors * (out_bytes == 2 ? 3 : 2);
  CpuMatmulCost c;
  c.cycles = tasks * (static_cast<double>(k) * step + task);
  if (gemm) {
    // libxsmm's kernels keep their sums in registers: two vector FMAs a cycle at about 3/4 of
    // that, a call's set-up per block; 16-bit operands and results converted a vector a cycle.
    const double fmas = static_cast<double>(batches) * static_cast<double>(m * n * k) / static_cast<double>(lanes);
    const double converted =
        static_cast<double>(batches) *
        static_cast<double>((a_bytes == 2 ? m * k : 0) + (b_bytes == 2 ? k * n : 0) + (out_bytes == 2 ? m * n : 0));
    c.cycles = fmas / (2 * 0.75) + tasks * 50 + converted / static_cast<double>(lanes);
  }
  c.b_bytes = static_cast<double>(batches * row_blocks * k * n * b_bytes);
  return c;
}

}  // namespace yirage::search
