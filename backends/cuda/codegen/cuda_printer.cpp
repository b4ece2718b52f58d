#include "cuda/codegen/cuda_printer.hpp"

#include <algorithm>

#include "cuda/codegen/cuda_tile_matmul.hpp"
#include "util/error.hpp"

namespace yirage::codegen::cuda {
namespace {

// Rows a warp of a block-level row reduction reduces side by side, at most (one float each).
constexpr int64_t kRowsAtOnce = 16;

}  // namespace

void declare_alignment(Printer &p, const std::string &tensor) {
  p.line("const bool " + aligned_name(tensor) + " = (reinterpret_cast<unsigned long long>(" + tensor + ") & 15) == 0;");
}

void emit_block_prologue(Printer &p, const BodyPlacement &placement, bool swizzled) {
  if (placement.smem_offset_floats >= 0) {
    p.line("float *const smem = yr_smem + " + std::to_string(placement.smem_offset_floats) + ";");
  } else if (swizzled) {
    p.line("extern __shared__ __align__(1024) float smem[];");
  } else {
    p.line("extern __shared__ float smem[];");
  }
  // Swizzled stages need their 1024-byte alignment from the base: asked for, and checked (a trap,
  // the launch's error, rather than wrong sums where a driver placed it otherwise).
  if (swizzled) p.line("if ((static_cast<unsigned>(__cvta_generic_to_shared(smem)) & 1023u) != 0) __trap();");
  const auto &[x, y, z] = placement.block;
  p.line("const int64_t bx = " + x + ", by = " + y + ", bz = " + z + ";");
  p.line("(void)bx; (void)by; (void)bz;");
}

void store_group(Printer &p, const std::string &tensor, const std::string &raw, const std::string &tile_at,
                 int64_t group) {
  p.line("float v[" + std::to_string(group) + "];");
  p.line("yr_cvt16(" + tensor + ", " + raw + ", v);");
  for (int64_t q = 0; q < group; q += 4) {
    p.line("*reinterpret_cast<float4 *>(" + tile_at + " + " + std::to_string(q) + ") = make_float4(v[" +
           std::to_string(q) + "], v[" + std::to_string(q + 1) + "], v[" + std::to_string(q + 2) + "], v[" +
           std::to_string(q + 3) + "]);");
  }
}

std::string inside_condition(const std::vector<CopyBound> &bounds, const std::vector<std::string> &v, int64_t group) {
  std::string condition;
  for (const CopyBound &b : bounds) {
    const bool groups = group > 1 && b.dim + 1 == v.size();
    condition +=
        (condition.empty() ? "" : " && ") + v[b.dim] + (groups ? " * " + std::to_string(group) : "") + " < " + b.inside;
  }
  return condition;
}

void store_zeros(Printer &p, const std::string &at, int64_t count) {
  if (count == 1) {
    p.line("(" + at + ")[0] = 0.0f;");
    return;
  }
  for (int64_t q = 0; q < count; q += 4) {
    p.line("*reinterpret_cast<float4 *>(" + at + " + " + std::to_string(q) +
           ") = make_float4(0.0f, 0.0f, 0.0f, 0.0f);");
  }
}

void transfer(Printer &p, const ThreadShare &share, const std::string &tensor, const Dims &tile_dims,
              const Dims &tensor_strides, const Dims &tile_strides, int64_t group, const TransferBody &element,
              const TransferBody &vector, const std::vector<CopyBound> &bounds, const AbsentBody &absent) {
  auto copy = [&](int64_t g, const TransferBody &body) {
    Dims gg = tensor_strides, gt = tile_strides;
    gg.back() = gt.back() = g;
    shared_loop(
        p, share, groups_of(tile_dims, g), "t",
        [&](const std::vector<std::string> &v) {
          const std::string inside = inside_condition(bounds, v, g);
          if (inside.empty()) {
            body(index_expr(v, gg), index_expr(v, gt));
            return;
          }
          if (!absent) {  // a store: skipped past the end
            p.open("if (" + inside + ")");
            body(index_expr(v, gg), index_expr(v, gt));
            p.close();
            return;
          }
          // A load: from the tile's first element past the end, then overwritten with zeros. No
          // branch around the read, so that the compiler keeps every read of a thread in flight
          // at once (it does not hoist a read out of a condition: the address may be invalid).
          body("(" + inside + " ? " + index_expr(v, gg) + " : 0)", index_expr(v, gt));
          p.open("if (!(" + inside + "))");
          absent(index_expr(v, gt), g);
          p.close();
        },
        8);
  };
  if (group == 1) {
    copy(1, element);
    return;
  }
  p.open("if (" + aligned_name(tensor) + ")");
  copy(group, vector);
  p.close();
  p.open("else");
  copy(1, element);
  p.close();
}

std::string CudaPrinter::pointer(const BufferRef &buffer) const {
  if (buffer.space == MemorySpace::kShared) return "(smem + " + std::to_string(buffer.offset) + ")";
  return buffer.name;
}

ThreadShare CudaPrinter::block_share() const {
  if (block_ == nullptr) throw Error(ErrorCode::kInternal, "cuda codegen: a block-level loop outside a block");
  return block_wide(block_->threads);
}

void CudaPrinter::print_shared_loop(const Loop &l) {
  const auto body = [&](const std::vector<std::string> &) { print(l.body); };
  // The linear index: i_e for i0, i1, …; e_e for e.
  const std::string &first = l.vars[0];
  const std::string linear =
      (first.size() > 1 && first.back() == '0' ? first.substr(0, first.size() - 1) : first) + "_e";
  switch (l.sharing) {
    case Sharing::kGrid: shared_loop(p_, kGridWide, l.dims, l.vars, linear, body, l.unroll); return;
    case Sharing::kThreads: shared_loop(p_, block_share(), l.dims, l.vars, linear, body, l.unroll); return;
    case Sharing::kRowLanes:
      if (row_lanes_.empty() || l.dims.size() != 1) break;
      if (l.dims[0] == 1) {  // one of the row's threads
        p_.open("if (rl == 0)");
        print(substitute(l.body, l.vars[0], int_const(0)));
        p_.close();
        return;
      }
      p_.open("for (int " + l.vars[0] + " = rl; " + l.vars[0] + " < " + std::to_string(l.dims[0]) + "; " + l.vars[0] +
              " += " + row_lanes_ + ")");
      print(l.body);
      p_.close();
      return;
    case Sharing::kSerial: break;
  }
  throw Error(ErrorCode::kInternal, "cuda codegen: a loop shared by a row's lanes outside a row reduction");
}

// Each row is shared by a group of warps (one warp, looping over rows, when there are at least as
// many rows as warps), lanes striding along the row: a row's values are read by 32 or more
// threads at once instead of one thread walking it. Partial results meet through warp shuffles
// and, across a row's warps, the block's scratch array after a barrier (every thread reaches it).
void CudaPrinter::print_row_reduce(const RowReduce &rr) {
  BlockShape &block = *block_;
  const int64_t warps = block.warps();
  const int64_t row_warps = rr.rows >= warps ? 1 : std::clamp<int64_t>(warps / rr.rows, 1, (rr.cols + 31) / 32);
  const std::string init = reduce_identity(rr.is_max);
  const std::string rows = std::to_string(rr.rows), cols = std::to_string(rr.cols);
  const std::string value = text(rr.value);
  auto accumulate = [&](const std::string &into, const std::string &v) { return reduce_into(into, v, rr.is_max); };
  row_lanes_ = std::to_string(row_warps * 32);
  p_.open("");
  p_.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
  const int64_t rows_per_warp = rr.rows / warps;
  if (row_warps == 1 && rr.rows % warps == 0 && rows_per_warp > 1 && rows_per_warp <= kRowsAtOnce) {
    // A warp's rows at once: first every row's loads, then their shuffle chains side by side,
    // then each row's step (one row after another, each would wait for its chain of shuffles).
    const std::string G = std::to_string(rows_per_warp), W = std::to_string(warps);
    p_.line("float totals[" + G + "];");
    p_.line("#pragma unroll");
    p_.open("for (int g = 0; g < " + G + "; ++g)");
    p_.line("const int r = warp + g * " + W + ";");
    p_.line("float total = " + init + ";");
    p_.line("for (int c = lane; c < " + cols + "; c += 32) " + accumulate("total", value));
    p_.line("totals[g] = total;");
    p_.close();
    p_.line("#pragma unroll");
    p_.open("for (int off = 16; off > 0; off /= 2)");
    p_.line("#pragma unroll");
    p_.line("for (int g = 0; g < " + G + "; ++g) " + warp_reduce_step("totals[g]", rr.is_max));
    p_.close();
    p_.line("#pragma unroll");
    p_.open("for (int g = 0; g < " + G + "; ++g)");
    p_.line("const int r = warp + g * " + W + ", rl = lane;");
    p_.line("float total = totals[g];");
    print(rr.finish);
    p_.close();
  } else if (row_warps == 1) {
    p_.open("for (int r = warp; r < " + rows + "; r += " + std::to_string(warps) + ")");
    p_.line("const int rl = lane;");
    p_.line("float total = " + init + ";");
    p_.line("for (int c = rl; c < " + cols + "; c += 32) " + accumulate("total", value));
    p_.line(warp_reduce("total", rr.is_max));
    print(rr.finish);
    p_.close();
  } else {
    const std::string RW = std::to_string(row_warps);
    p_.line("const int r = warp / " + RW + ", rl = (warp % " + RW + ") * 32 + lane;");
    p_.line("float total = " + init + ";");
    p_.line("if (r < " + rows + ") for (int c = rl; c < " + cols + "; c += " + row_lanes_ + ") " +
            accumulate("total", value));
    p_.line(warp_reduce("total", rr.is_max));
    const std::string scratch = block.scratch[block.next_scratch];
    block.next_scratch ^= 1;
    p_.line("if (lane == 0) " + scratch + "[warp] = total;");
    p_.line("__syncthreads();");
    p_.open("if (r < " + rows + ")");
    p_.line("total = " + init + ";");
    p_.line("for (int w = 0; w < " + RW + "; ++w) " + accumulate("total", scratch + "[r * " + RW + " + w]"));
    print(rr.finish);
    p_.close();
  }
  p_.close();
  row_lanes_.clear();
}

// Element by element, or in 16-byte groups (one global access, converted in registers, and one
// or two float4 accesses of shared memory) where the tensor's start is 16-byte aligned.
void CudaPrinter::print_copy(const TileCopy &c) {
  const std::string tensor = c.tensor.buffer.name, t = pointer(c.tile.buffer);
  const TransferBody element = [&](const std::string &g, const std::string &s) {
    p_.line(c.load ? t + "[" + s + "] = yr_ld(src + " + g + ");" : "yr_st(dst + " + g + ", " + t + "[" + s + "]);");
  };
  const TransferBody vector = [&](const std::string &g, const std::string &s) {
    if (c.load) {
      store_group(p_, tensor, "yr_stream16(src + " + g + ")", t + " + " + s, c.vector);
      return;
    }
    p_.line("float v[" + std::to_string(c.vector) + "];");
    for (int64_t q = 0; q < c.vector; q += 4) {
      p_.line("{ const float4 f = *reinterpret_cast<const float4 *>(" + t + " + " + s + " + " + std::to_string(q) +
              "); v[" + std::to_string(q) + "] = f.x; v[" + std::to_string(q + 1) + "] = f.y; v[" +
              std::to_string(q + 2) + "] = f.z; v[" + std::to_string(q + 3) + "] = f.w; }");
    }
    p_.line("*reinterpret_cast<uint4 *>(dst + " + g + ") = yr_pack16(dst, v);");
  };
  std::vector<CopyBound> bounds;
  for (const TileBound &b : c.inside) bounds.push_back({b.dim, "(" + text(b.inside) + ")"});
  AbsentBody zeros;
  if (c.load) zeros = [&](const std::string &s, int64_t count) { store_zeros(p_, t + " + " + s, count); };
  p_.open("");
  p_.line(std::string(c.load ? "const auto *src = " : "auto *dst = ") + tensor + " + " + offset_text(c.tensor.base) +
          ";");
  transfer(p_, block_share(), tensor, c.tile.dims, c.tensor.element_strides(), c.tile.element_strides(), c.vector,
           element, vector, bounds, zeros);
  p_.close();
}

void CudaPrinter::print_matmul(const Matmul &m) {
  if (block_ == nullptr)
    throw Error(ErrorCode::kInternal, "cuda codegen: kernel-level matmuls have kernels of their own");
  auto ref = [&](const TensorRef &t) {
    std::string ptr = pointer(t.buffer);
    if (!t.base.is_int(0)) ptr = "(" + ptr + " + " + offset_text(t.base) + ")";
    return Ref{ptr, t.dims, t.strides};
  };
  TileMatmul(p_, block_share(), *block_, false).emit(ref(m.a), ref(m.b), ref(m.o));
}

}  // namespace yirage::codegen::cuda
