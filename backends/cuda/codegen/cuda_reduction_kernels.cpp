#include "cuda/codegen/cuda_reduction_kernels.hpp"

#include <algorithm>
#include <functional>

#include "codegen/lower_operator.hpp"
#include "cuda/codegen/cuda_loops.hpp"

namespace yirage::codegen::cuda {

namespace {

// Σ (or max) over the block of the float `into` every thread has, into every thread: warp
// shuffles, then each warp's result through `shared` (a float per warp), then a barrier so that
// `shared` may be written again.
void across_block(Printer &p, const std::string &into, bool is_max, const std::string &shared) {
  p.line(warp_reduce(into, is_max));
  p.line("if (lane == 0) " + shared + "[warp] = " + into + ";");
  p.line("__syncthreads();");
  p.line(into + " = " + shared + "[0];");
  p.line("for (int w = 1; w < " + std::to_string(kThreads / 32) + "; ++w) " +
         reduce_into(into, shared + "[w]", is_max));
  p.line("__syncthreads();  // " + shared + " is written again next");
}

// The statements adding (or maxing) into float `acc` the elements of a contiguous run of `extent`
// `type` elements at `base`, strided over `threads` consecutive threads from thread `index`: in
// 16-byte vectors where the run is whole vectors and `base` is 16-byte aligned (checked at run
// time), else one element at a time.
void reduce_run(Printer &p, const std::string &base, int64_t extent, DType dtype, const std::string &index,
                const std::string &threads, bool is_max) {
  const int64_t lanes = 16 / static_cast<int64_t>(dtype_size(dtype));
  const std::string type = element_type(dtype);
  const auto add = [is_max](const std::string &v) { return reduce_into("acc", v, is_max); };
  if (extent % lanes == 0) {
    p.open("if ((reinterpret_cast<unsigned long long>(" + base + ") & 15) == 0)");
    p.open("for (int64_t v = " + index + "; v < " + std::to_string(extent / lanes) + "; v += " + threads + ")");
    p.line("const uint4 raw = reinterpret_cast<const uint4 *>(" + base + ")[v];");
    p.line("const " + type + " *e = reinterpret_cast<const " + type + " *>(&raw);");
    p.line("#pragma unroll");
    p.line("for (int l = 0; l < " + std::to_string(lanes) + "; ++l) " + add("yr_ld(e + l)"));
    p.close();
    p.close();
    p.open("else");
  }
  p.line("for (int64_t e = " + index + "; e < " + std::to_string(extent) + "; e += " + threads + ") " +
         add("yr_ld(" + base + " + e)"));
  if (extent % lanes == 0) p.close();
}

// How an rms_norm block holds its row in registers (v[], the weight's in wv[]): `per_thread`
// floats a thread, element t + e · threads in v[e], or with `vectors` (where the pointers turn
// out 16-byte aligned) 16-byte vector t + q · threads in v[q · lanes ...].
struct RowInRegisters {
  int64_t cols = 0, per_thread = 0, lanes = 0, chunks = 0, chunks_per_thread = 0;
  bool vectors = false;
};

// The row's (and weight's) loads into v[] and wv[], every one issued before the first is used.
void load_row(Printer &p, const RowInRegisters &r, const std::string &weight) {
  const std::string T = std::to_string(kThreads), c = std::to_string(r.cols);
  const auto scalar = [&] {
    p.line("#pragma unroll");
    p.open("for (int e = 0; e < " + std::to_string(r.per_thread) + "; ++e)");
    p.line("const int64_t c = threadIdx.x + e * " + T + ";");
    p.line("v[e] = c < " + c + " ? yr_ld(row + c) : 0.0f;");
    if (!weight.empty()) p.line("wv[e] = c < " + c + " ? yr_ld(" + weight + " + c) : 0.0f;");
    p.close();
  };
  if (!r.vectors) return scalar();
  const std::string L = std::to_string(r.lanes), chunks = std::to_string(r.chunks);
  p.open("if (in_vectors)");
  p.line("#pragma unroll");
  p.open("for (int q = 0; q < " + std::to_string(r.chunks_per_thread) + "; ++q)");
  p.line("const int64_t k = threadIdx.x + q * " + T + ";");
  p.line("yr_cvt16(row, k < " + chunks + " ? yr_raw16(row + k * " + L + ") : uint4{}, v + q * " + L + ");");
  if (!weight.empty()) {
    p.line("yr_cvt16(" + weight + ", k < " + chunks + " ? yr_raw16(" + weight + " + k * " + L +
           ") : uint4{}, wv + q * " + L + ");");
  }
  p.close();
  p.close();
  p.open("else");
  scalar();
  p.close();
}

// The row's stores of v[] · inv (· wv[]).
void store_row(Printer &p, const RowInRegisters &r, bool weighted) {
  const std::string T = std::to_string(kThreads), c = std::to_string(r.cols);
  const auto value = [&](const std::string &at) {
    return "v[" + at + "] * inv" + (weighted ? " * wv[" + at + "]" : std::string());
  };
  const auto scalar = [&] {
    p.line("#pragma unroll");
    p.line("for (int e = 0; e < " + std::to_string(r.per_thread) + "; ++e) { const int64_t c = threadIdx.x + e * " + T +
           "; if (c < " + c + ") yr_st(out_row + c, " + value("e") + "); }");
  };
  if (!r.vectors) return scalar();
  const std::string L = std::to_string(r.lanes);
  p.open("if (in_vectors)");
  p.line("#pragma unroll");
  p.open("for (int q = 0; q < " + std::to_string(r.chunks_per_thread) + "; ++q)");
  p.line("const int64_t k = threadIdx.x + q * " + T + ";");
  p.open("if (k < " + std::to_string(r.chunks) + ")");
  p.line("float ys[" + L + "];");
  p.line("#pragma unroll");
  p.line("for (int l = 0; l < " + L + "; ++l) ys[l] = " + value("q * " + L + " + l") + ";");
  p.line("*reinterpret_cast<uint4 *>(out_row + k * " + L + ") = yr_pack16(out_row, ys);");
  p.close();
  p.close();
  p.close();
  p.open("else");
  scalar();
  p.close();
}

}  // namespace

// A pre-defined rms_norm: one block per row (rows shared grid-wide), the sum of squares reduced
// across the block through warp shuffles and shared memory. Where the row's mean square is out of
// float32's range (rms_mean_in_range: a row of 1e19s or 1e-23s; the same in every thread, so the
// block takes the branch together), the row is reduced again: its largest magnitude, then its
// squares scaled by it (rms_scale). `dtype`: x's, which the weight and the output share
// (OperatorGraph::rms_norm). Returns the number of blocks.
int64_t rms_norm_kernel(Printer &p, const Operator &op, const std::vector<Ref> &in, const Ref &o, DType dtype) {
  const Ref &x = in[0];
  const bool weighted = op.attributes.has_weight;
  const double eps = op.attributes.eps;
  RowInRegisters r;
  r.cols = 1;
  for (size_t d = x.dims.size() - op.attributes.sizes.size(); d < x.dims.size(); ++d) r.cols *= x.dims[d];
  const int64_t rows = num_elements(x.dims) / r.cols;
  const std::string c = std::to_string(r.cols), W = std::to_string(kThreads / 32);
  // Rows of up to 32 elements per thread are held in registers, with their weights: the row is
  // read once, the weight with it (not after the sum: one wait on memory, not two). Where the row
  // is whole 16-byte vectors, x, the weight and the output move in vectors when the pointers are
  // 16-byte aligned (checked once; the rows' offsets then are), a warp's vectors side by side.
  // Longer rows stream through twice (four times out of range).
  r.lanes = 16 / static_cast<int64_t>(dtype_size(dtype));
  r.vectors = r.cols % r.lanes == 0;
  r.chunks = r.cols / r.lanes;
  r.chunks_per_thread = (r.chunks + kThreads - 1) / kThreads;
  r.per_thread = std::max((r.cols + kThreads - 1) / kThreads, r.vectors ? r.chunks_per_thread * r.lanes : 0);
  const bool in_registers = r.per_thread <= 32;
  r.vectors = r.vectors && in_registers;
  const std::string E = std::to_string(r.per_thread);
  p.line("__shared__ float squares_of[" + W + "];");
  p.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
  if (r.vectors) {
    std::string pointers =
        "reinterpret_cast<unsigned long long>(" + x.ptr + ") | reinterpret_cast<unsigned long long>(" + o.ptr + ")";
    if (weighted) pointers += " | reinterpret_cast<unsigned long long>(" + in[1].ptr + ")";
    p.line("const bool in_vectors = ((" + pointers + ") & 15) == 0;");
  }
  p.open("for (int64_t r = blockIdx.x; r < " + std::to_string(rows) + "; r += gridDim.x)");
  p.line("const auto *row = " + x.ptr + " + r * " + c + ";");
  p.line("auto *out_row = " + o.ptr + " + r * " + c + ";");
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
    p.line("float v[" + E + "]" + (weighted ? ", wv[" + E + "]" : std::string()) + ";");
    load_row(p, r, weighted ? in[1].ptr : std::string());
  }
  each([](const std::string &v) { return "s += " + v + " * " + v + ";"; });
  across_block(p, "s", false, "squares_of");
  Expr mean = var("s") / float_const(static_cast<double>(r.cols));
  if (eps != 0) mean = mean + float_const(eps);
  p.line("const float mean = " + c_text(mean) + ";");
  p.line("float scale = 1.0f, inv = yr_rsqrt(mean);");
  p.open("if (!(" + c_text(rms_mean_in_range(var("mean"))) + "))");
  p.line("float peak = 0.0f;");
  each([](const std::string &v) { return "peak = yr_max(peak, fabsf(" + v + "));"; });
  across_block(p, "peak", true, "squares_of");
  p.line("scale = " + c_text(codegen::rms_scale(var("peak"), eps)) + ";");
  p.line("s = 0.0f;");
  each([](const std::string &v) { return "s += (" + v + " * scale) * (" + v + " * scale);"; });
  across_block(p, "s", false, "squares_of");
  p.line("inv = " + c_text(rms_scaled_inverse(var("s"), r.cols, eps, var("scale"))) + ";");
  if (in_registers) {  // the row scaled in place: the stores multiply by inv alone
    p.line("#pragma unroll");
    p.line("for (int e = 0; e < " + E + "; ++e) v[e] *= scale;");
  }
  p.close();
  if (in_registers) {
    store_row(p, r, weighted);
  } else {
    const std::string weight = weighted ? " * yr_ld(" + in[1].ptr + " + c)" : std::string();
    p.line("for (int64_t c = threadIdx.x; c < " + c +
           "; c += blockDim.x) yr_st(out_row + c, yr_ld(row + c) * scale * inv" + weight + ");");
  }
  p.close();
  return std::clamp<int64_t>(rows, 1, int64_t{1} << 20);
}

// A pre-defined reduction. Along a contiguous dim (inner 1): a block per output where the dim is
// long (kBlockRun elements and more: a warp per output leaves most of a GPU idle on a few hundred
// long rows), else a warp per output, reading 16-byte vectors where it can. Along another dim: a
// thread per output where outputs next to each other are (inner 32 and more: a warp's loads
// coalesce), else a warp per output with its lanes striding along the dim. Partial results
// combine through shuffles (and shared memory across a block's warps). Returns the number of
// blocks; `per_block` is set where the kernel needs exactly kThreads threads a block.
int64_t reduction_kernel(Printer &p, const Operator &op, const Ref &x, const Ref &o, DType dtype, bool &per_block) {
  const AxisView v = axis_view(x.dims, static_cast<size_t>(op.attributes.dim));
  const bool is_max = op.kind == OpKind::kReductionMax;
  const int64_t outputs = v.outer * v.inner;
  const std::string extent = std::to_string(v.extent), count = std::to_string(outputs);
  per_block = false;
  if (v.inner == 1 && v.extent >= kBlockRun) {
    per_block = true;
    const std::string W = std::to_string(kThreads / 32);
    p.line("__shared__ float partial[" + W + "];");
    p.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
    p.open("for (int64_t r = blockIdx.x; r < " + count + "; r += gridDim.x)");
    p.line("const auto *row = " + x.ptr + " + r * " + extent + ";");
    p.line(std::string("float acc = ") + reduce_identity(is_max) + ";");
    reduce_run(p, "row", v.extent, dtype, "threadIdx.x", "blockDim.x", is_max);
    across_block(p, "acc", is_max, "partial");
    p.line("if (threadIdx.x == 0) yr_st(" + o.ptr + " + r, acc);");
    p.close();
    return std::clamp<int64_t>(outputs, 1, int64_t{1} << 20);
  }
  if (v.inner >= 32) {
    p.open("for (int64_t w = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < " + count +
           "; w += static_cast<int64_t>(gridDim.x) * blockDim.x)");
    p.line("const auto *base = " + x.ptr + " + w / " + std::to_string(v.inner) + " * " +
           std::to_string(v.extent * v.inner) + " + w % " + std::to_string(v.inner) + ";");
    p.line(std::string("float acc = ") + reduce_identity(is_max) + ";");
    p.line("for (int64_t e = 0; e < " + extent + "; ++e) " +
           reduce_into("acc", "yr_ld(base + e * " + std::to_string(v.inner) + ")", is_max));
    p.line("yr_st(" + o.ptr + " + w, acc);");
    p.close();
    return std::clamp<int64_t>((outputs + kThreads - 1) / kThreads, 1, int64_t{1} << 20);
  }
  p.line("const int lane = threadIdx.x & 31;");
  p.line("const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);");
  p.open("for (int64_t w = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; w < " + count +
         "; w += warps)");
  p.line(std::string("float acc = ") + reduce_identity(is_max) + ";");
  if (v.inner == 1) {
    p.line("const auto *row = " + x.ptr + " + w * " + extent + ";");
    reduce_run(p, "row", v.extent, dtype, "lane", "32", is_max);
  } else {
    p.line("const int64_t outer = w / " + std::to_string(v.inner) + ", inner = w % " + std::to_string(v.inner) + ";");
    p.line("const auto *base = " + x.ptr + " + outer * " + std::to_string(v.extent * v.inner) + " + inner;");
    p.line("for (int64_t e = lane; e < " + extent + "; e += 32) " +
           reduce_into("acc", "yr_ld(base + e * " + std::to_string(v.inner) + ")", is_max));
  }
  p.line(warp_reduce("acc", is_max));
  p.line("if (lane == 0) yr_st(" + o.ptr + " + w, acc);");
  p.close();
  return std::clamp<int64_t>((outputs * 32 + kThreads - 1) / kThreads, 1, int64_t{1} << 20);
}

}  // namespace yirage::codegen::cuda
