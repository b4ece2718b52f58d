#include "cuda/codegen/cuda_reduction_kernels.hpp"

#include <algorithm>
#include <functional>

#include "codegen/lower_operator.hpp"
#include "cuda/codegen/cuda_loops.hpp"

namespace yirage::codegen::cuda {

// A pre-defined rms_norm: one block per row (rows shared grid-wide), the sum of squares reduced
// across the block through warp shuffles and shared memory. Where the row's mean square is out of
// float32's range (rms_mean_in_range: a row of 1e19s or 1e-23s; the same in every thread, so the
// block takes the branch together), the row is reduced again: its largest magnitude, then its
// squares scaled by it (rms_scale). Returns the number of blocks.
int64_t rms_norm_kernel(Printer &p, const Operator &op, const std::vector<Ref> &in, const Ref &o) {
  const Ref &x = in[0];
  const double eps = op.attributes.eps;
  int64_t cols = 1;
  for (size_t d = x.dims.size() - op.attributes.sizes.size(); d < x.dims.size(); ++d) cols *= x.dims[d];
  const int64_t rows = num_elements(x.dims) / cols;
  const std::string c = std::to_string(cols), W = std::to_string(kThreads / 32);
  p.line("__shared__ float squares_of[" + W + "];");
  p.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
  p.open("for (int64_t r = blockIdx.x; r < " + std::to_string(rows) + "; r += gridDim.x)");
  p.line("const auto *row = " + x.ptr + " + r * " + c + ";");
  p.line("auto *out_row = " + o.ptr + " + r * " + c + ";");
  const std::string weight = op.attributes.has_weight ? " * yr_ld(" + in[1].ptr + " + c)" : std::string();
  // Rows of up to 32 elements per thread are held in registers: every load is issued before the
  // first is used, and the row is read once. Longer rows stream through twice (four times out of
  // range).
  const int64_t per_thread = (cols + kThreads - 1) / kThreads;
  const bool in_registers = per_thread <= 32;
  const std::string E = std::to_string(per_thread), T = std::to_string(kThreads);
  // Σ (or max) over the block of the float `into` every thread has, into every thread.
  auto across_block = [&](const std::string &into, bool is_max) {
    p.line(warp_reduce(into, is_max));
    p.line("if (lane == 0) squares_of[warp] = " + into + ";");
    p.line("__syncthreads();");
    p.line(into + " = squares_of[0];");
    p.line("for (int w = 1; w < " + W + "; ++w) " + reduce_into(into, "squares_of[w]", is_max));
    p.line("__syncthreads();  // squares_of is written again next");
  };
  // body(value) for each of the thread's elements of the row (value: its float).
  auto each = [&](const std::function<std::string(const std::string &)> &body) {
    if (in_registers) {
      p.line("#pragma unroll");
      p.line("for (int e = 0; e < " + E + "; ++e) { " + body("v[e]") + " }");
    } else {
      p.line("for (int64_t c = threadIdx.x; c < " + c + "; c += blockDim.x) { const float u = yr_ld(row + c); " +
             body("u") + " }");
    }
  };
  p.line("float s = 0.0f;");
  if (in_registers) {
    p.line("float v[" + E + "];");
    p.line("#pragma unroll");
    p.line("for (int e = 0; e < " + E + "; ++e) { const int64_t c = threadIdx.x + e * " + T + "; v[e] = c < " + c +
           " ? yr_ld(row + c) : 0.0f; }");
  }
  each([](const std::string &v) { return "s += " + v + " * " + v + ";"; });
  across_block("s", false);
  Expr mean = var("s") / float_const(static_cast<double>(cols));
  if (eps != 0) mean = mean + float_const(eps);
  p.line("const float mean = " + c_text(mean) + ";");
  p.line("float scale = 1.0f, inv = yr_rsqrt(mean);");
  p.open("if (!(" + c_text(rms_mean_in_range(var("mean"))) + "))");
  p.line("float peak = 0.0f;");
  each([](const std::string &v) { return "peak = yr_max(peak, fabsf(" + v + "));"; });
  across_block("peak", true);
  p.line("scale = " + c_text(codegen::rms_scale(var("peak"), eps)) + ";");
  p.line("s = 0.0f;");
  each([](const std::string &v) { return "s += (" + v + " * scale) * (" + v + " * scale);"; });
  across_block("s", false);
  p.line("inv = " + c_text(rms_scaled_inverse(var("s"), cols, eps, var("scale"))) + ";");
  if (in_registers) {  // the row scaled in place: the stores multiply by inv alone
    p.line("#pragma unroll");
    p.line("for (int e = 0; e < " + E + "; ++e) v[e] *= scale;");
  }
  p.close();
  if (in_registers) {
    p.line("#pragma unroll");
    p.line("for (int e = 0; e < " + E + "; ++e) { const int64_t c = threadIdx.x + e * " + T + "; if (c < " + c +
           ") yr_st(out_row + c, v[e] * inv" + weight + "); }");
  } else {
    p.line("for (int64_t c = threadIdx.x; c < " + c +
           "; c += blockDim.x) yr_st(out_row + c, yr_ld(row + c) * scale * inv" + weight + ");");
  }
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
