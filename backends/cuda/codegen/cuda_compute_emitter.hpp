// The building blocks of the CUDA generator's loops, shared by the kernel-level code
// (cuda_source.cpp) and the µGraph code (cuda_ugraph.cpp): how a loop's elements are shared by
// threads, block-level row reductions, and ComputeEmitter, one operator's code.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/source_common.hpp"
#include "ir/block_graph.hpp"
#include "util/error.hpp"

namespace yirage::codegen::cuda {

// How a loop's iterations are shared: each thread starts at `start` and steps by `step` — the
// whole grid for a pre-defined operator, one block's threads inside a customized one (so at block
// level element e of every loop belongs to thread e % threads, which the barrier placement of
// CustomizedEmitter relies on). A customized kernel's thread count is a constant of its source:
// loops with constant bounds and steps unroll, and their index arithmetic folds.
struct Sharing {
  std::string start, step;
  int64_t threads = 0;  // the step when it is a constant (block level)
};
inline const Sharing kGridWide = {"static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x",
                           "static_cast<int64_t>(gridDim.x) * blockDim.x"};
inline Sharing block_wide(int64_t threads) { return {"static_cast<int64_t>(threadIdx.x)", std::to_string(threads), threads}; }

// What block-level code knows about its block: the thread count (a multiple of 32) and a
// shared-memory scratch array of one float per warp for reductions across warps.
struct BlockShape {
  int64_t threads = 0;
  // Two scratch arrays used in turn: a reduction writes one while threads still behind may read
  // the other from the reduction before (each use is followed by a barrier before its reads).
  std::string scratch[2];
  int next_scratch = 0;
  // The warp that takes the next tensor-core matmul's first item. Items are dealt to warps in
  // turn across matmuls, so that a matmul with fewer items than warps leaves the rest to the next
  // one: independent small matmuls (lora's X·W and X·A) run side by side, not one after another.
  int64_t next_warp = 0;
  // The warps the last tensor-core matmul left without an item (they come after its last).
  int64_t idle_warps = 0;
  int64_t warps() const { return threads / 32; }
};

// One step of a warp's sum (or max): `value` combined with that of the lane `off` away.
inline std::string warp_reduce_step(const std::string &value, bool is_max) {
  return value + " = " +
         (is_max ? "yr_max(" + value + ", __shfl_xor_sync(0xffffffffu, " + value + ", off));"
                 : value + " + __shfl_xor_sync(0xffffffffu, " + value + ", off);");
}
// Sums (or maxes) `value` across a warp; every lane gets the result.
inline std::string warp_reduce(const std::string &value, bool is_max) {
  return "for (int off = 16; off > 0; off /= 2) " + warp_reduce_step(value, is_max);
}

// A row sum's or max's starting value, and the statement adding (or maxing) `v` into `into`.
inline std::string reduce_identity(bool is_max) { return is_max ? "-INFINITY" : "0.0f"; }
inline std::string reduce_into(const std::string &into, const std::string &v, bool is_max) {
  return is_max ? into + " = yr_max(" + into + ", " + v + ");" : into + " += " + v + ";";
}

// rms_norm's reciprocal of a row of `cols` whose squares sum to `total`, as `const float name`:
// one reciprocal square root per row, then a multiplication per element. rsqrtf (2 ulp) rather
// than an IEEE square root and division: those are two dozen instructions on the block's
// critical path (ntrans, two norms one after the other: 0.05-0.1 us, benchmarks/gpu/RESULTS.md).
inline std::string rms_inverse(const std::string &total, int64_t cols, double eps, const std::string &name = "inv") {
  return "const float " + name + " = yr_rsqrt(" + total + " / " + literal(static_cast<double>(cols)) + " + " +
         literal(eps) + ");";
}

// Rows a warp of a block-level row reduction reduces side by side, at most (one float each).
inline constexpr int64_t kRowsAtOnce = 16;

// A reduction of `rows` rows of `cols` values at block level, then a per-row step.
struct RowReduce {
  int64_t rows = 0, cols = 0;
  bool is_max = false;
  std::string value;  // the value at row r, column c (an expression of the variables r and c)
  // Runs in every lane of the row's warps with `r`, `total` (the row's sum or max), and `rl` / RL
  // (the lane's index among the row's lanes and their count, to share a pass over the row).
  std::function<void(const std::string &RL)> finish;
};

// Each row is shared by a group of warps (one warp, looping over rows, when there are at least as
// many rows as warps), lanes striding along the row: a row's values are read by 32 or more
// threads at once instead of one thread walking it. Partial results meet through warp shuffles
// and, across a row's warps, the block's scratch array after a barrier (every thread reaches it).
inline void emit_block_row_reduce(Printer &p, BlockShape &block, const RowReduce &rr) {
  const int64_t warps = block.warps();
  const int64_t row_warps = rr.rows >= warps ? 1 : std::clamp<int64_t>(warps / rr.rows, 1, (rr.cols + 31) / 32);
  const std::string init = reduce_identity(rr.is_max);
  const std::string rows = std::to_string(rr.rows), cols = std::to_string(rr.cols);
  const std::string RL = std::to_string(row_warps * 32);
  auto accumulate = [&](const std::string &into, const std::string &v) { return reduce_into(into, v, rr.is_max); };
  p.open("");
  p.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
  const int64_t rows_per_warp = rr.rows / warps;
  if (row_warps == 1 && rr.rows % warps == 0 && rows_per_warp > 1 && rows_per_warp <= kRowsAtOnce) {
    // A warp's rows at once: first every row's loads, then their shuffle chains side by side,
    // then each row's step. One row after another, each row waited for its chain of 5 shuffles
    // (and rms_norm's division) before the next began, ~250 cycles a row: 8 rows per warp cost
    // qknorm's attention blocks (rms_norm of 64 rows of Q) about 1.5 µs on an H100.
    const std::string G = std::to_string(rows_per_warp), W = std::to_string(warps);
    p.line("float totals[" + G + "];");
    p.line("#pragma unroll");
    p.open("for (int g = 0; g < " + G + "; ++g)");
    p.line("const int r = warp + g * " + W + ";");
    p.line("float total = " + init + ";");
    p.line("for (int c = lane; c < " + cols + "; c += 32) " + accumulate("total", rr.value));
    p.line("totals[g] = total;");
    p.close();
    p.line("#pragma unroll");
    p.open("for (int off = 16; off > 0; off /= 2)");
    p.line("#pragma unroll");
    p.line("for (int g = 0; g < " + G + "; ++g) " + warp_reduce_step("totals[g]", rr.is_max));
    p.close();
    p.line("#pragma unroll");
    p.open("for (int g = 0; g < " + G + "; ++g)");
    p.line("const int r = warp + g * " + W + ", rl = lane;");
    p.line("float total = totals[g];");
    rr.finish(RL);
    p.close();
  } else if (row_warps == 1) {
    p.open("for (int r = warp; r < " + rows + "; r += " + std::to_string(warps) + ")");
    p.line("const int rl = lane;");
    p.line("float total = " + init + ";");
    p.line("for (int c = rl; c < " + cols + "; c += 32) " + accumulate("total", rr.value));
    p.line(warp_reduce("total", rr.is_max));
    rr.finish(RL);
    p.close();
  } else {
    const std::string RW = std::to_string(row_warps);
    p.line("const int r = warp / " + RW + ", rl = (warp % " + RW + ") * 32 + lane;");
    p.line("float total = " + init + ";");
    p.line("if (r < " + rows + ") for (int c = rl; c < " + cols + "; c += " + RL + ") " +
           accumulate("total", rr.value));
    p.line(warp_reduce("total", rr.is_max));
    const std::string scratch = block.scratch[block.next_scratch];
    block.next_scratch ^= 1;
    p.line("if (lane == 0) " + scratch + "[warp] = total;");
    p.line("__syncthreads();");
    p.open("if (r < " + rows + ")");
    p.line("total = " + init + ";");
    p.line("for (int w = 0; w < " + RW + "; ++w) " + accumulate("total", scratch + "[r * " + RW + " + w]"));
    rr.finish(RL);
    p.close();
  }
  p.close();
}

inline std::vector<std::string> index_vars(Printer &p, const std::string &type, const std::string &e, const Dims &dims,
                                    const std::string &prefix);

// How many elements of `dims` each of `threads` threads owns, at most.
inline int64_t per_thread(const Dims &dims, int64_t threads) { return (num_elements(dims) + threads - 1) / threads; }

// Runs body(vars) for every index of `dims`, the row-major linear index shared as `s` says.
inline void shared_loop(Printer &p, const Sharing &s, const Dims &dims, const std::string &prefix,
                 const std::function<void(const std::vector<std::string> &)> &body,
                 int unroll = 1) {
  const int64_t n = num_elements(dims);
  const std::string e = prefix + "_e";
  // 32-bit indices wherever they fit: 64-bit division by a constant costs many instructions on
  // a GPU, and a tile loop divides for every element.
  const std::string type = n <= 0x7fffffff ? "int" : "int64_t";
  const std::string first = "static_cast<" + type + ">(" + s.start + ")";
  if (s.threads > 0) {
    // Block level: every thread's count is known here, so the loop counts a thread's elements
    // (u, which callers may use to index per-thread register arrays) and a few iterations unroll
    // fully: independent elements interleave, indices fold.
    const int64_t count = per_thread(dims, s.threads);
    if (unroll > 1) p.line("#pragma unroll " + std::to_string(unroll));
    if (unroll <= 1 && count <= 8) p.line("#pragma unroll");
    p.open("for (int u = 0; u < " + std::to_string(count) + "; ++u)");
    p.line("const " + type + " " + e + " = " + first + " + u * " + std::to_string(s.threads) + ";");
    if (n % s.threads != 0) p.open("if (" + e + " < " + std::to_string(n) + ")");
    body(index_vars(p, type, e, dims, prefix));
    if (n % s.threads != 0) p.close();
    p.close();
    return;
  }
  if (unroll > 1) p.line("#pragma unroll " + std::to_string(unroll));
  p.open("for (" + type + " " + e + " = " + first + "; " + e + " < " + std::to_string(n) + "; " + e +
         " += static_cast<" + type + ">(" + s.step + "))");
  body(index_vars(p, type, e, dims, prefix));
  p.close();
}

// Declares prefix0, prefix1, … as the row-major index of linear element `e` in `dims`.
inline std::vector<std::string> index_vars(Printer &p, const std::string &type, const std::string &e, const Dims &dims,
                                    const std::string &prefix) {
  std::vector<std::string> vars;
  const Dims strides = row_major_strides(dims);
  // Divided as unsigned (e is never negative): a signed division or remainder by a power of 2
  // costs a sign fix-up of several instructions, an unsigned one a shift or a mask.
  const std::string unsigned_e = "static_cast<" + std::string(type == "int" ? "unsigned" : "uint64_t") + ">(" + e + ")";
  for (size_t d = 0; d < dims.size(); ++d) {
    const std::string v = prefix + std::to_string(d);
    if (dims.size() == 1) {
      p.line("const " + type + " " + v + " = " + e + ";");
      vars.push_back(v);
      continue;
    }
    std::string expr = strides[d] == 1 ? unsigned_e : unsigned_e + " / " + std::to_string(strides[d]) + "u";
    if (d > 0) expr += " % " + std::to_string(dims[d]) + "u";
    p.line("const " + type + " " + v + " = static_cast<" + type + ">(" + expr + ");");
    vars.push_back(v);
  }
  return vars;
}

// One compute operator, on typed tensors (kernel level) or float tiles (block level, where
// `block` describes the block).
class ComputeEmitter {
 public:
  // tensor_cores: block-level matmuls may use TF32 mma (only where rounding operands to TF32
  // stays within the graph's dtype tolerance: 16-bit graphs).
  ComputeEmitter(Printer &p, const Sharing &s, BlockShape *block = nullptr, bool tensor_cores = false)
      : p_(p), s_(s), block_(block), tensor_cores_(tensor_cores) {}

  // A unary operator applied to a tensor-core matmul's results before they are stored, into
  // `out` instead of the matmul's own output (which then is never written). fused() says
  // whether emit() could.
  void set_epilogue(const Operator *unary, const Ref &out) {
    epilogue_ = unary;
    epilogue_out_ = out;
  }
  bool fused() const { return fused_; }
  // Running sums (for-loop accumulators, laid out like the result) that the tensor-core path
  // adds its results to in registers, as it stores them or, where `store_result` is false (no
  // other reader), instead. accumulated() says whether emit() did; devices before sm_80 (the
  // #else branch) store the result and leave the sums to the caller. A sum that only matters
  // row by row (its accumulator totals each row after the loop) takes a lane's two results of a
  // row as one addition.
  struct Sum {
    std::string ptr;
    bool row_total;
  };
  void set_sums(std::vector<Sum> sums, bool store_result) {
    sums_ = std::move(sums);
    store_result_ = store_result;
  }
  bool accumulated() const { return accumulated_; }
  // The transposed path takes A's operands from `fragments`, a per-lane register array that
  // register_fragments() filled before the loop (for an A that does not change in it).
  void set_a_fragments(std::string fragments) { a_fragments_ = std::move(fragments); }
  // Where the transposed path reads A from and stores its results instead of the tiles
  // (a private copy with padded rows, see CustomizedEmitter::plan_tensor_core_views).
  void set_views(std::optional<Ref> a_view, std::optional<Ref> out_view) {
    a_view_ = std::move(a_view);
    out_view_ = std::move(out_view);
  }
  // The most rows of A that skinny_tensor_core_matmul takes (4 mma tiles of 8).
  static constexpr int64_t kMaxTransposedRows = 32;
  // Whether skinny_tensor_core_matmul takes the matmul a·b = o.
  static bool transposes(const Ref &a, const Ref &b, const Ref &o, bool tensor_cores) {
    const size_t rank = o.dims.size();
    const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1], n = o.dims[rank - 1];
    if (!tensor_cores || m > kMaxTransposedRows || k % 16 != 0 || n % 16 != 0 || !a.strides.empty() || !b.raw_16bit) {
      return false;
    }
    // ldmatrix reads 16-byte rows: B's rows and batches start at multiples of 8 elements.
    const Dims sb = matmul_operand_strides(b, o.dims);
    if (sb[rank - 1] != 1) return false;
    for (size_t d = 0; d + 1 < rank; ++d) {
      if (sb[d] % 8 != 0) return false;
    }
    return true;
  }
  // Whether A's values are B's 16-bit type widened: the mma then takes them repacked, exactly.
  static bool exact_a(const Ref &a, const Ref &b) { return a.widened_16bit && a.element == b.element; }

  // For a transposed matmul whose A (without batch dims) does not change in the loop: declares
  // `name`, the lane's A operands for every mma tile and k16 step (2 registers per step on
  // 16-bit mma, 4 on TF32; tile j's from j · k / 8 or j · k / 4), and fills it from A's tile.
  // Returns false (emitting nothing) where it does not apply or would take more than 32
  // registers.
  bool register_fragments(const std::string &name, const Ref &a, const Ref &b, const Ref &o) {
    const size_t rank = o.dims.size();
    const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1];
    const bool exact = exact_a(a, b);
    const int64_t per_tile = exact ? k / 8 : k / 4, count = per_tile * row_tiles(m);
    if (!transposes(a, b, o, tensor_cores_) || count > 32) return false;
    for (size_t d = 0; d + 2 < rank; ++d) {
      if (a.dims[d] != 1) return false;
    }
    const std::string type = element_type(b.element);
    p_.line("unsigned " + name + "[" + std::to_string(count) + "];");
    p_.line("#if __CUDA_ARCH__ >= 800");
    p_.open("");
    p_.line("const int lane = threadIdx.x & 31, grp = lane >> 2, tig = lane & 3;");
    for (int64_t t = 0; t < row_tiles(m); ++t) {
      const std::string at = name + "[" + std::to_string(t * per_tile) + " + ";
      p_.open("");
      p_.line("const float *pa = " + transposed_a_lane(a.ptr, m, k, std::to_string(8 * t), 8 * t + 8 > m) + ";");
      p_.line("#pragma unroll");
      p_.open("for (int j = 0; j < " + std::to_string(k / 8) + "; ++j)");
      p_.line("const float2 x = *reinterpret_cast<const float2 *>(pa + 8 * j);");
      if (exact) {
        p_.line(at + "j] = yr_pack2(static_cast<const " + type + " *>(nullptr), x.x, x.y);");
      } else {
        p_.line(at + "2 * j] = " + tf32(a, "x.x") + ";");
        p_.line(at + "2 * j + 1] = " + tf32(a, "x.y") + ";");
      }
      p_.close();
      p_.close();
    }
    p_.close();
    p_.line("#endif");
    return true;
  }

  // Returns whether every output element e was written by the thread that owns e in a shared
  // loop (what CustomizedEmitter's barrier placement needs to know).
  bool emit(const Operator &op, const std::vector<Ref> &in, const std::vector<Ref> &out) {
    if (op.kind == OpKind::kMatmul) {
      if (skinny_tensor_core_matmul(in[0], in[1], out[0])) return false;
      if (tensor_core_matmul(in[0], in[1], out[0])) return false;
      if (tiled_matmul(in[0], in[1], out[0])) return false;
      matmul(in[0], in[1], out[0]);
      return true;
    }
    if (block_ != nullptr && op.kind == OpKind::kRmsNorm) {
      block_rms_norm(op, in, out[0]);
      return false;
    }
    if (block_ != nullptr && (op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax)) {
      block_reduction(op, in[0], out[0]);
      return false;
    }
    const LoopNest loop = [this](const Dims &dims, const std::string &prefix,
                                 const std::function<void(const std::vector<std::string> &)> &body) {
      shared_loop(p_, s_, dims, prefix, body);
    };
    if (!emit_portable_operator(p_, loop, op, in, out)) {
      throw Error(ErrorCode::kUnsupported,
                  std::string("cuda codegen: operator ") + op_name(op.kind) + " is not supported");
    }
    return true;
  }

 private:
  // rms_norm of float tiles: x / sqrt(mean(x²) + eps) (· weight) along each row.
  void block_rms_norm(const Operator &op, const std::vector<Ref> &in, const Ref &o) {
    const Ref &x = in[0];
    int64_t cols = 1;
    for (size_t d = x.dims.size() - op.attributes.sizes.size(); d < x.dims.size(); ++d) cols *= x.dims[d];
    const std::string C = std::to_string(cols);
    RowReduce rr;
    rr.rows = num_elements(x.dims) / cols;
    rr.cols = cols;
    rr.value = x.ptr + "[r * " + C + " + c] * " + x.ptr + "[r * " + C + " + c]";
    rr.finish = [&](const std::string &RL) {
      p_.line(rms_inverse("total", cols, op.attributes.eps));
      const std::string weight = op.attributes.has_weight ? " * " + in[1].ptr + "[c]" : std::string();
      p_.line("for (int c = rl; c < " + C + "; c += " + RL + ") " + o.ptr + "[r * " + C + " + c] = " + x.ptr +
              "[r * " + C + " + c] * inv" + weight + ";");
    };
    emit_block_row_reduce(p_, *block_, rr);
  }

  // A sum or max along one dim of a float tile: row r is (outer, inner) = (r / inner, r % inner).
  void block_reduction(const Operator &op, const Ref &x, const Ref &o) {
    const AxisView v = axis_view(x.dims, static_cast<size_t>(op.attributes.dim));
    const std::string I = std::to_string(v.inner);
    RowReduce rr;
    rr.rows = v.outer * v.inner;
    rr.cols = v.extent;
    rr.is_max = op.kind == OpKind::kReductionMax;
    rr.value = x.ptr + "[((r / " + I + ") * " + std::to_string(v.extent) + " + c) * " + I + " + r % " + I + "]";
    rr.finish = [&](const std::string &) { p_.line("if (rl == 0) " + o.ptr + "[r] = total;"); };
    emit_block_row_reduce(p_, *block_, rr);
  }

  // A matmul of shared-memory tiles (block level) on tensor cores, for compact tiles whose n and
  // k are multiples of 8: each warp computes 16×8 output tiles with mma.m16n8k8 in TF32 (float32
  // accumulation), rows past m reading row m − 1 and never stored. Devices before sm_80 get the
  // float4 or scalar loop instead (#else). Returns false (emitting nothing) where it does not
  // apply. Every lane of a warp runs the same items: mma is warp-synchronous.
  bool tensor_core_matmul(const Ref &a, const Ref &b, const Ref &o) {
    const size_t rank = o.dims.size();
    const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1], n = o.dims[rank - 1];
    if (!tensor_cores_ || block_ == nullptr || n % 8 != 0 || k % 8 != 0 || !a.strides.empty() ||
        (!b.strides.empty() && b.strides.back() != 1)) {
      return false;
    }
    const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
    const Dims so = row_major_strides(o.dims);
    Dims items = o.dims;
    items[rank - 2] = (m + 15) / 16;
    items[rank - 1] = n / 8;
    const std::string M = std::to_string(m), K = std::to_string(k), N = std::to_string(n);
    const std::string BS = std::to_string(sb[rank - 2]);  // B's row stride (its rows may be padded)
    p_.line("#if __CUDA_ARCH__ >= 800");
    // A warp's items (at most 4) are unrolled, so that their mma chains can interleave.
    shared_loop(p_, warp_items(items), items, "w", [&](const std::vector<std::string> &v) {
      std::vector<std::string> batch = v;
      batch[rank - 2] = batch[rank - 1] = "0";
      p_.line("const int grp = (threadIdx.x & 31) >> 2, tig = threadIdx.x & 3;");
      p_.line("const int r0 = " + v[rank - 2] + " * 16 + grp, r1 = r0 + 8, col = " + v[rank - 1] + " * 8;");
      auto mma = [&](const std::string &c, const std::string &x0, const std::string &x1, const std::string &x2,
                     const std::string &x3, const std::string &y0, const std::string &y1) {
        p_.line("yr_mma_tf32(" + c + ", " + x0 + ", " + x1 + ", " + x2 + ", " + x3 + ", " + y0 + ", " + y1 + ");");
      };
      auto row_of = [&](const std::string &r) {
        return a.ptr + " + " + index_expr(batch, sa) + " + (" + r + " < " + M + " ? " + r + " : " +
               std::to_string(m - 1) + ") * " + K;
      };
      // Rows r1 = r0 + 8 exist only where m > 8; below, their operands are zeros, never stored.
      const bool upper_rows = m > 8;
      p_.line("float c[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d[4] = {0.0f, 0.0f, 0.0f, 0.0f};");
      if (k % 16 == 0) {
        // Sixteen k at a time in two mma with their own accumulators (the second need not wait
        // for the first), k permuted so that a lane's A operands are 4 consecutive floats of its
        // rows: lane tig takes k = 4·tig … 4·tig + 3 of the sixteen, the first mma the first two
        // (as its k slots tig and tig + 4), the second the other two, and B's rows follow. One
        // float4 read instead of four scalar ones, each conflicting 8 ways in a tile whose row
        // length is a multiple of 32 floats.
        p_.line("const float *a0 = " + row_of("r0") + " + 4 * tig;");
        if (upper_rows) p_.line("const float *a1 = " + row_of("r1") + " + 4 * tig;");
        p_.line("const auto *bp = " + b.ptr + " + " + index_expr(batch, sb) + " + 4 * tig * " + BS + " + col + grp;");
        p_.line("#pragma unroll 4");
        p_.open("for (int kk = 0; kk < " + K + "; kk += 16)");
        p_.line("const float4 p = *reinterpret_cast<const float4 *>(a0 + kk);");
        p_.line(upper_rows ? "const float4 q = *reinterpret_cast<const float4 *>(a1 + kk);"
                           : "const float4 q = make_float4(0.0f, 0.0f, 0.0f, 0.0f);");
        p_.line("unsigned y[4];");
        p_.line("#pragma unroll");
        p_.line("for (int j = 0; j < 4; ++j) y[j] = " + tf32(b, "yr_ld(bp + (kk + j) * " + BS + ")") + ";");
        mma("c", tf32(a, "p.x"), tf32(a, "q.x"), tf32(a, "p.y"), tf32(a, "q.y"), "y[0]", "y[1]");
        mma("d", tf32(a, "p.z"), tf32(a, "q.z"), tf32(a, "p.w"), tf32(a, "q.w"), "y[2]", "y[3]");
        p_.close();
      } else {
        p_.line("const float *a0 = " + row_of("r0") + " + tig;");
        p_.line("const float *a1 = " + row_of("r1") + " + tig;");
        p_.line("const auto *bp = " + b.ptr + " + " + index_expr(batch, sb) + " + tig * " + BS + " + col + grp;");
        p_.line("#pragma unroll 4");
        p_.open("for (int kk = 0; kk < " + K + "; kk += 8)");
        mma("c", tf32(a, "a0[kk]"), tf32(a, "a1[kk]"), tf32(a, "a0[kk + 4]"), tf32(a, "a1[kk + 4]"),
            tf32(b, "yr_ld(bp + kk * " + BS + ")"), tf32(b, "yr_ld(bp + (kk + 4) * " + BS + ")"));
        p_.close();
      }
      p_.line("const float c0 = c[0] + d[0], c1 = c[1] + d[1], c2 = c[2] + d[2], c3 = c[3] + d[3];");
      p_.line("const float v0 = " + epilogue_value("c0") + ", v1 = " + epilogue_value("c1") + ", v2 = " +
              epilogue_value("c2") + ", v3 = " + epilogue_value("c3") + ";");
      // A lane's two results of a row are adjacent (8-byte aligned: n and col are even).
      const std::string at = index_expr(batch, so) + " + col + 2 * tig";
      // statement(address, values) for rows r0 and r1 where they exist.
      using RowStatement = std::function<std::string(const std::string &, const std::string &)>;
      auto for_rows = [&](const std::string &base, const RowStatement &statement) {
        p_.line("if (r0 < " + M + ") " + statement(base + " + r0 * " + N, "v0, v1"));
        p_.line("if (r1 < " + M + ") " + statement(base + " + r1 * " + N, "v2, v3"));
      };
      if (store_result_ || sums_.empty()) {
        for_rows((epilogue_ ? epilogue_out_.ptr : o.ptr) + " + " + at, [](const std::string &a, const std::string &v) {
          return "*reinterpret_cast<float2 *>(" + a + ") = make_float2(" + v + ");";
        });
      }
      for (const Sum &sum : sums_) {
        for_rows(sum.ptr + " + " + at, [&](const std::string &a, const std::string &v) {
          if (!sum.row_total) return "yr_add2(" + a + ", " + v + ");";
          return "*(" + a + ") += " + std::string(v == "v0, v1" ? "v0 + v1" : "v2 + v3") + ";";
        });
      }
    }, 4);
    finish_tensor_cores(a, b, o);
    return true;
  }

  // A matmul of at most 32 rows against a 16-bit B tile that the mma reads from its stage,
  // computed transposed: Cᵀ = Bᵀ·Aᵀ puts 16 of B's columns in the mma's 16 rows and A's rows in
  // its 8 columns, where the plain form would spend half of every mma on rows of zeros (and
  // moves to make them). ldmatrix .trans reads Bᵀ's fragments, four 8×8 tiles per instruction.
  // A warp's item is 16 columns of all of A's rows: one ldmatrix of B per k16 step feeds an mma
  // for each 8 of A's rows (B's fragments, the costly part, are read once per block of rows, not
  // once per 8 rows). Where A's values are widened from B's type (exact), each k16 step is one
  // mma.m16n8k16 per 8 rows on A repacked; otherwise two TF32 mma.m16n8k8 on B widened and A
  // rounded to TF32, k permuted so that a lane's two k are adjacent (one float2 of A, one
  // ldmatrix pair of B). Returns false (emitting nothing) where it does not apply.
  bool skinny_tensor_core_matmul(const Ref &a, const Ref &b, const Ref &o) {
    if (block_ == nullptr || !transposes(a, b, o, tensor_cores_)) return false;
    const size_t rank = o.dims.size();
    const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1], n = o.dims[rank - 1];
    const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
    const bool exact = exact_a(a, b);
    // The mma's 8-column tiles (8 of A's rows each). Where the blocks of 16 columns are fewer
    // than the warps, the tiles are dealt to warps in `groups` (each group's B operands are then
    // read once per group), unless A's operands are in registers, whose indices must be
    // constants, or B's must be widened for TF32 (each group would widen them again: measured
    // slower on attention's E·V). With one tile per item, two k16 steps run side by side into
    // their own accumulators (no mma waits for the one before); with more, the tiles do.
    const int64_t tiles = row_tiles(m), halves = exact ? 1 : 2;
    Dims items = o.dims;
    items[rank - 2] = 1;
    items[rank - 1] = n / 16;
    int64_t groups = 1;
    while (exact && a_fragments_.empty() && tiles % (groups * 2) == 0 && num_elements(items) * groups < block_->warps()) {
      groups *= 2;
    }
    items[rank - 2] = groups;
    const int64_t item_tiles = tiles / groups, steps = item_tiles == 1 ? 2 : 1;
    auto acc = [&](int64_t j, int64_t s, int64_t h) {
      return "acc[" + std::to_string((j * steps + s) * halves + h) + "]";
    };
    const std::string M = std::to_string(m), K = std::to_string(k), N = std::to_string(n);
    const std::string BS = std::to_string(sb[rank - 2]);
    p_.line("#if __CUDA_ARCH__ >= 800");
    shared_loop(p_, warp_items(items), items, "w", [&](const std::vector<std::string> &v) {
      std::vector<std::string> batch = v;
      batch[rank - 2] = batch[rank - 1] = "0";
      p_.line("const int lane = threadIdx.x & 31, grp = lane >> 2, tig = lane & 3, col = " + v[rank - 1] + " * 16;");
      // The first of A's rows in the item's tile j.
      auto first_row = [&](int64_t j) {
        if (groups == 1) return std::to_string(8 * j);
        return "(" + v[rank - 2] + " * " + std::to_string(8 * item_tiles) + (j == 0 ? "" : " + " + std::to_string(8 * j)) + ")";
      };
      // Whether tile j may hold rows past m.
      auto partial = [&](int64_t j) { return groups == 1 ? 8 * j + 8 > m : m % 8 != 0; };
      // This lane's rows of A (8·j + lane / 4 in the item; rows past m read row m − 1, never
      // stored) at k = 2·tig, and its ldmatrix row: k (lane / 16)·8 + lane % 8 of B, columns
      // from col + 8·((lane / 8) % 2).
      const Ref &ta = a_view_ ? *a_view_ : a;  // A as this path reads it (its rows may be padded)
      const Dims sta = matmul_operand_strides(ta, o.dims);
      if (a_fragments_.empty()) {
        for (int64_t j = 0; j < item_tiles; ++j) {
          p_.line("const float *pa" + std::to_string(j) + " = " +
                  transposed_a_lane(ta.ptr + " + " + index_expr(batch, sta), m, sta[rank - 2], first_row(j), partial(j)) +
                  ";");
        }
      }
      p_.line("const auto *pb = " + b.ptr + " + " + index_expr(batch, sb) + " + ((lane >> 4) * 8 + (lane & 7)) * " +
              BS + " + col + ((lane >> 3) & 1) * 8;");
      p_.line("float acc[" + std::to_string(item_tiles * steps * halves) + "][4] = {};");
      // The B operands of tile j's k16 step (A's values at k, k + 1 and k + 8, k + 9): from the
      // lane's registers where A's fragments were loaded before the loop (a_fragments_), else
      // read now.
      const int64_t per_tile = exact ? k / 8 : k / 4;
      auto a_operands = [&](const std::string &kk, int64_t j) -> std::vector<std::string> {
        if (!a_fragments_.empty()) {
          const std::string f = a_fragments_ + "[" + std::to_string(j * per_tile) + " + (" + kk + ") / " +
                                (exact ? "8" : "4");
          if (exact) return {f + "]", f + " + 1]"};
          return {f + "]", f + " + 1]", f + " + 2]", f + " + 3]"};
        }
        const std::string J = std::to_string(j), pa = "pa" + J;
        p_.line("const float2 x" + J + " = *reinterpret_cast<const float2 *>(" + pa + " + " + kk + ");");
        p_.line("const float2 y" + J + " = *reinterpret_cast<const float2 *>(" + pa + " + " + kk + " + 8);");
        if (exact) return {"yr_pack2(pb, x" + J + ".x, x" + J + ".y)", "yr_pack2(pb, y" + J + ".x, y" + J + ".y)"};
        return {tf32(ta, "x" + J + ".x"), tf32(ta, "x" + J + ".y"), tf32(ta, "y" + J + ".x"), tf32(ta, "y" + J + ".y")};
      };
      auto step = [&](const std::string &kk, int64_t s) {
        p_.line("unsigned t[4];");
        p_.line("yr_ldmatrix_t4(pb + (" + kk + ") * " + BS + ", t);");
        if (!exact) {
          p_.line("unsigned lo[4], hi[4];");
          p_.line("#pragma unroll");
          p_.line("for (int j = 0; j < 4; ++j) yr_widen2(pb, t[j], lo[j], hi[j]);");
        }
        for (int64_t j = 0; j < item_tiles; ++j) {
          const std::vector<std::string> x = a_operands(kk, j);
          if (exact) {
            p_.line("yr_mma16(pb, " + acc(j, s, 0) + ", t[0], t[1], t[2], t[3], " + x[0] + ", " + x[1] + ");");
            continue;
          }
          p_.line("yr_mma_tf32(" + acc(j, s, 0) + ", lo[0], lo[1], hi[0], hi[1], " + x[0] + ", " + x[1] + ");");
          p_.line("yr_mma_tf32(" + acc(j, s, 1) + ", lo[2], lo[3], hi[2], hi[3], " + x[2] + ", " + x[3] + ");");
        }
      };
      // Fully unrolled when A's fragments are in registers (their indices must be constants).
      p_.line(a_fragments_.empty() ? "#pragma unroll 2" : "#pragma unroll");
      p_.open("for (int kk = 0; kk < " + K + "; kk += " + std::to_string(16 * steps) + ")");
      for (int64_t s = 0; s < steps; ++s) {
        const std::string kk = s == 0 ? "kk" : "kk + " + std::to_string(16 * s);
        p_.open(s == 0 || k % (16 * steps) == 0 ? "" : "if (" + kk + " < " + K + ")");
        step(kk, s);
        p_.close();
      }
      p_.close();
      for (int64_t j = 0; j < item_tiles; ++j) {
        const std::string row = first_row(j);
        const std::string R0 = row == "0" ? "2 * tig" : "(" + row + " + 2 * tig)";
        const std::string R1 = row == "0" ? "(2 * tig + 1)" : "(" + row + " + 2 * tig + 1)";
        p_.open("");
        // acc[…][0] is C[8·j + 2·tig][col + grp], [1] the row below; [2] and [3] are 8 columns on.
        auto total = [&](int i) {  // the partial sums added pairwise
          std::vector<std::string> terms;
          for (int64_t s = 0; s < steps; ++s) {
            for (int64_t h = 0; h < halves; ++h) terms.push_back(acc(j, s, h) + "[" + std::to_string(i) + "]");
          }
          while (terms.size() > 1) {
            std::vector<std::string> sums;
            for (size_t t = 0; t + 1 < terms.size(); t += 2) sums.push_back("(" + terms[t] + " + " + terms[t + 1] + ")");
            if (terms.size() % 2 == 1) sums.push_back(terms.back());
            terms = std::move(sums);
          }
          return epilogue_value(terms[0]);
        };
        p_.line("const float v0 = " + total(0) + ", v1 = " + total(1) + ", v2 = " + total(2) + ", v3 = " + total(3) + ";");
        // Into `base`, laid out with `strides` (the result's own, or its view's padded rows).
        // Values v0…v3 (or those named `value`0…3), with `op` (= or +=).
        auto for_rows = [&](const std::string &base, const Dims &strides, const std::string &op,
                            const std::string &value = "v") {
          const std::string at = index_expr(batch, strides) + " + col + grp", R = std::to_string(strides[rank - 2]);
          const std::string x = " " + op + " " + value;
          p_.line("if (" + R0 + " < " + M + ") { " + base + "[" + at + " + " + R0 + " * " + R + "]" + x + "0; " +
                  base + "[" + at + " + " + R0 + " * " + R + " + 8]" + x + "2; }");
          p_.line("if (" + R1 + " < " + M + ") { " + base + "[" + at + " + " + R1 + " * " + R + "]" + x + "1; " +
                  base + "[" + at + " + " + R1 + " * " + R + " + 8]" + x + "3; }");
        };
        if (store_result_ || sums_.empty()) {
          const Ref &out = out_view_ ? *out_view_ : epilogue_ ? epilogue_out_ : o;
          if (out.tf32_rounded) {  // a view read only by TF32 mma: rounded once, here
            p_.line("const float r0 = __uint_as_float(yr_tf32(v0)), r1 = __uint_as_float(yr_tf32(v1)), r2 = "
                    "__uint_as_float(yr_tf32(v2)), r3 = __uint_as_float(yr_tf32(v3));");
          }
          for_rows("(" + out.ptr + ")", out.element_strides(), "=", out.tf32_rounded ? "r" : "v");
        }
        for (const Sum &sum : sums_) {
          if (!sum.row_total) {
            for_rows("(" + sum.ptr + ")", row_major_strides(o.dims), "+=");
            continue;
          }
          // Row R0's two results (8 columns apart) into one element of the row, row R1's into
          // the next row's.
          const std::string at = index_expr(batch, row_major_strides(o.dims)) + " + col + grp";
          p_.line("if (" + R0 + " < " + M + ") (" + sum.ptr + ")[" + at + " + " + R0 + " * " + N + "] += v0 + v2;");
          p_.line("if (" + R1 + " < " + M + ") (" + sum.ptr + ")[" + at + " + " + R1 + " * " + N + "] += v1 + v3;");
        }
        p_.close();
      }
    }, 4);
    finish_tensor_cores(a, b, o);
    return true;
  }

  // The mma tiles of 8 columns that a transposed matmul of m rows takes.
  static int64_t row_tiles(int64_t m) { return (m + 7) / 8; }

  // The address of the first A value a lane of a transposed matmul reads for the mma tile whose
  // rows start at `first`: row first + lane / 4 of the m rows at `base` (where the tile is
  // `partial`, rows past m read row m − 1, whose results are never stored), column 2·(lane % 4).
  // Its next values are 8 columns apart (one k8 block each).
  static std::string transposed_a_lane(const std::string &base, int64_t m, int64_t row_stride, const std::string &first,
                                       bool partial) {
    const std::string row = first == "0" ? "grp" : "(" + first + " + grp)", M = std::to_string(m);
    const std::string row_index = partial ? "(" + row + " < " + M + " ? " + row + " : " + std::to_string(m - 1) + ")" : row;
    return base + " + " + row_index + " * " + std::to_string(row_stride) + " + 2 * tig";
  }
  // A tensor-core result after the unary epilogue, if there is one.
  std::string epilogue_value(const std::string &c) const {
    return epilogue_ ? unary_expr(epilogue_->kind, epilogue_->attributes, c) : c;
  }

  // The warps' share of `items` (of a warp each), starting after the warps the previous
  // tensor-core operator left busiest.
  Sharing warp_items(const Dims &items) {
    const int64_t warps = block_->warps(), first = block_->next_warp % warps;
    const std::string warp = first == 0 ? "threadIdx.x >> 5"
                                        : "((threadIdx.x >> 5) + " + std::to_string(warps - first) + ") % " +
                                              std::to_string(warps);
    block_->next_warp = (first + num_elements(items)) % warps;
    block_->idle_warps = std::max<int64_t>(0, warps - num_elements(items));
    return {"static_cast<int64_t>(" + warp + ")", std::to_string(warps), warps};
  }

  // Ends a tensor-core matmul: devices before sm_80 (#else) get the float4 or scalar loop, and
  // the epilogue's unary after it, over the stored results.
  void finish_tensor_cores(const Ref &a, const Ref &b, const Ref &o) {
    accumulated_ = !sums_.empty();
    p_.line("#else");
    if (!tiled_matmul(a, b, o)) matmul(a, b, o);
    if (epilogue_) {
      p_.line("__syncthreads();");
      const LoopNest loop = [this](const Dims &dims, const std::string &prefix,
                                   const std::function<void(const std::vector<std::string> &)> &body) {
        shared_loop(p_, s_, dims, prefix, body);
      };
      emit_portable_operator(p_, loop, *epilogue_, {o}, {epilogue_out_});
    }
    p_.line("#endif");
    fused_ = epilogue_ != nullptr;
  }

  // An mma operand from a float of `x`: rounded to TF32, or its bits as they are where the value
  // is a widened 16-bit float (exact: the rounding would change nothing).
  static std::string tf32(const Ref &x, const std::string &value) {
    return x.widened_16bit || x.tf32_rounded ? "__float_as_uint(" + value + ")" : "yr_tf32(" + value + ")";
  }

  // A matmul of shared-memory tiles (block level) whose n is a multiple of 4: each iteration
  // computes 4 adjacent outputs of a row, reading A once and B as one float4 per k, with four
  // independent FMA chains. Returns false (emitting nothing) where it does not apply.
  bool tiled_matmul(const Ref &a, const Ref &b, const Ref &o) {
    const size_t rank = o.dims.size();
    const int64_t k = a.dims[rank - 1], n = o.dims[rank - 1];
    if (block_ == nullptr || n % 4 != 0 || !a.strides.empty() || !b.strides.empty() || b.raw_16bit) {
      return false;
    }
    const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
    Dims groups = o.dims;
    groups[rank - 1] = n / 4;
    shared_loop(p_, s_, groups, "g", [&](const std::vector<std::string> &v) {
      std::vector<std::string> va = v, vb = v, vo = v;
      va[rank - 1] = "0";
      vb[rank - 2] = "0";
      vb[rank - 1] = "(" + v[rank - 1] + " * 4)";
      vo[rank - 1] = "(" + v[rank - 1] + " * 4)";
      p_.line("const float *pa = " + a.ptr + " + " + index_expr(va, sa) + ";");
      p_.line("const float *pb = " + b.ptr + " + " + index_expr(vb, sb) + ";");
      p_.line("float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);");
      p_.open("for (int p = 0; p < " + std::to_string(k) + "; ++p)");
      p_.line("const float av = pa[p * " + std::to_string(sa[rank - 1]) + "];");
      p_.line("const float4 bv = *reinterpret_cast<const float4 *>(pb + p * " + std::to_string(sb[rank - 2]) + ");");
      p_.line("acc.x += av * bv.x; acc.y += av * bv.y; acc.z += av * bv.z; acc.w += av * bv.w;");
      p_.close();
      p_.line("*reinterpret_cast<float4 *>(" + o.ptr + " + " + index_expr(vo, row_major_strides(o.dims)) + ") = acc;");
    });
    return true;
  }

  // One output element per iteration: Σ_p A[…, i, p] · B[…, p, j] in float32. Operands may be
  // strided views; batch dims of size 1 broadcast.
  void matmul(const Ref &a, const Ref &b, const Ref &o) {
    const size_t rank = o.dims.size();
    const int64_t k = a.dims[rank - 1];
    const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
    const Dims so = row_major_strides(o.dims);
    shared_loop(p_, s_, o.dims, "m", [&](const std::vector<std::string> &v) {
      std::vector<std::string> va = v, vb = v;
      va[rank - 1] = "0";  // the row of A: (…, i, 0)
      vb[rank - 2] = "0";  // the column of B: (…, 0, j)
      p_.line("const auto *pa = " + a.ptr + " + " + index_expr(va, sa) + ";");
      p_.line("const auto *pb = " + b.ptr + " + " + index_expr(vb, sb) + ";");
      // Four partial sums: independent FMA chains hide the latency of the operand loads.
      const std::string a_at = "yr_ld(pa + (q) * " + std::to_string(sa[rank - 1]) + ")";
      const std::string b_at = "yr_ld(pb + (q) * " + std::to_string(sb[rank - 2]) + ")";
      auto term = [&](const std::string &q) {
        std::string t = a_at + " * " + b_at;
        for (size_t at; (at = t.find("(q)")) != std::string::npos;) t.replace(at, 3, "(" + q + ")");
        return t;
      };
      p_.line("float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;");
      p_.line("int p = 0;");
      p_.open("for (; p + 4 <= " + std::to_string(k) + "; p += 4)");
      p_.line("acc0 += " + term("p") + ";");
      p_.line("acc1 += " + term("p + 1") + ";");
      p_.line("acc2 += " + term("p + 2") + ";");
      p_.line("acc3 += " + term("p + 3") + ";");
      p_.close();
      p_.line("for (; p < " + std::to_string(k) + "; ++p) acc0 += " + term("p") + ";");
      p_.line("yr_st(" + o.ptr + " + " + index_expr(v, so) + ", (acc0 + acc1) + (acc2 + acc3));");
    });
  }

  Printer &p_;
  Sharing s_;
  BlockShape *block_;
  bool tensor_cores_;
  const Operator *epilogue_ = nullptr;
  Ref epilogue_out_;
  bool fused_ = false;
  std::vector<Sum> sums_;
  bool store_result_ = true, accumulated_ = false;
  std::string a_fragments_;
  std::optional<Ref> a_view_, out_view_;
};

}  // namespace yirage::codegen::cuda
