#include "cuda/codegen/cuda_reduction_kernels.hpp"

#include <algorithm>

#include "cuda/codegen/cuda_loops.hpp"

namespace yirage::codegen::cuda {

// A pre-defined rms_norm: one block per row (rows shared grid-wide), the sum of squares reduced
// across the block through warp shuffles and shared memory. Returns the number of blocks.
int64_t rms_norm_kernel(Printer &p, const Operator &op, const std::vector<Ref> &in, const Ref &o) {
  const Ref &x = in[0];
  int64_t cols = 1;
  for (size_t d = x.dims.size() - op.attributes.sizes.size(); d < x.dims.size(); ++d) cols *= x.dims[d];
  const int64_t rows = num_elements(x.dims) / cols;
  const std::string c = std::to_string(cols);
  p.line("__shared__ float squares_of[" + std::to_string(kThreads / 32) + "];");
  p.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
  p.open("for (int64_t r = blockIdx.x; r < " + std::to_string(rows) + "; r += gridDim.x)");
  p.line("const auto *row = " + x.ptr + " + r * " + c + ";");
  p.line("auto *out_row = " + o.ptr + " + r * " + c + ";");
  const std::string weight = op.attributes.has_weight ? " * yr_ld(" + in[1].ptr + " + c)" : std::string();
  // Rows of up to 32 elements per thread are held in registers: every load is issued before the
  // first is used, and the row is read once. Longer rows stream through twice.
  const int64_t per_thread = (cols + kThreads - 1) / kThreads;
  const bool in_registers = per_thread <= 32;
  const std::string E = std::to_string(per_thread), T = std::to_string(kThreads);
  p.line("float s = 0.0f;");
  if (in_registers) {
    p.line("float v[" + E + "];");
    p.line("#pragma unroll");
    p.line("for (int e = 0; e < " + E + "; ++e) { const int64_t c = threadIdx.x + e * " + T + "; v[e] = c < " + c +
           " ? yr_ld(row + c) : 0.0f; }");
    p.line("#pragma unroll");
    p.line("for (int e = 0; e < " + E + "; ++e) s += v[e] * v[e];");
  } else {
    p.line("for (int64_t c = threadIdx.x; c < " + c +
           "; c += blockDim.x) { const float v = yr_ld(row + c); s += v * v; }");
  }
  p.line(warp_reduce("s", false));
  p.line("if (lane == 0) squares_of[warp] = s;");
  p.line("__syncthreads();");
  p.line("s = 0.0f;");
  p.line("for (int w = 0; w < " + std::to_string(kThreads / 32) + "; ++w) s += squares_of[w];");
  p.line(rms_inverse("s", cols, op.attributes.eps));
  if (in_registers) {
    p.line("#pragma unroll");
    p.line("for (int e = 0; e < " + E + "; ++e) { const int64_t c = threadIdx.x + e * " + T + "; if (c < " + c +
           ") yr_st(out_row + c, v[e] * inv" + weight + "); }");
  } else {
    p.line("for (int64_t c = threadIdx.x; c < " + c + "; c += blockDim.x) yr_st(out_row + c, yr_ld(row + c) * inv" +
           weight + ");");
  }
  p.line("__syncthreads();  // squares_of is reused by the next row");
  p.close();
  return std::clamp<int64_t>(rows, 1, int64_t{1} << 20);
}

// A pre-defined reduction: one warp per output element, its lanes striding along the reduced
// dim, combined with shuffles. Returns the number of blocks.
int64_t reduction_kernel(Printer &p, const Operator &op, const Ref &x, const Ref &o) {
  const AxisView v = axis_view(x.dims, static_cast<size_t>(op.attributes.dim));
  const bool is_max = op.kind == OpKind::kReductionMax;
  const int64_t outputs = v.outer * v.inner;
  p.line("const int lane = threadIdx.x & 31;");
  p.line("const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);");
  p.open("for (int64_t w = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; w < " +
         std::to_string(outputs) + "; w += warps)");
  p.line("const int64_t outer = w / " + std::to_string(v.inner) + ", inner = w % " + std::to_string(v.inner) + ";");
  p.line("const auto *base = " + x.ptr + " + outer * " + std::to_string(v.extent * v.inner) + " + inner;");
  p.line(std::string("float acc = ") + (is_max ? "-INFINITY" : "0.0f") + ";");
  const std::string value = "yr_ld(base + e * " + std::to_string(v.inner) + ")";
  p.line("for (int64_t e = lane; e < " + std::to_string(v.extent) + "; e += 32) " +
         (is_max ? "acc = yr_max(acc, " + value + ");" : "acc += " + value + ";"));
  p.line(warp_reduce("acc", is_max));
  p.line("if (lane == 0) yr_st(" + o.ptr + " + w, acc);");
  p.close();
  return std::clamp<int64_t>((outputs * 32 + kThreads - 1) / kThreads, 1, int64_t{1} << 20);
}

}  // namespace yirage::codegen::cuda
