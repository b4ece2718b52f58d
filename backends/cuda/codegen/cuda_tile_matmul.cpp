#include "cuda/codegen/cuda_tile_matmul.hpp"

#include <algorithm>
#include <functional>

#include "cuda/codegen/cuda_tile_mfma.hpp"

namespace yirage::codegen::cuda {

void TileMatmul::set_epilogue(const Operator *unary, const Ref &out) {
  epilogue_ = unary;
  epilogue_out_ = out;
}

void TileMatmul::set_sums(std::vector<Sum> sums, bool store_result) {
  sums_ = std::move(sums);
  store_result_ = store_result;
}

void TileMatmul::set_views(std::optional<Ref> a_view, std::optional<Ref> out_view) {
  a_view_ = std::move(a_view);
  out_view_ = std::move(out_view);
}

bool TileMatmul::transposes(const Ref &a, const Ref &b, const Ref &o, bool tensor_cores) {
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

bool TileMatmul::register_fragments(const std::string &name, const Ref &a, const Ref &b, const Ref &o) {
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

bool TileMatmul::emit(const Ref &a, const Ref &b, const Ref &o) {
  if (mfma_ && block_ != nullptr && mfma_tile_matmul(p_, a, b, o, block_->threads)) return false;
  if (skinny_tensor_core_matmul(a, b, o)) return false;
  if (tensor_core_matmul(a, b, o)) return false;
  if (tiled_matmul(a, b, o)) return false;
  matmul(a, b, o);
  return true;
}

bool TileMatmul::tensor_core_matmul(const Ref &a, const Ref &b, const Ref &o) {
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
  shared_loop(
      p_, warp_items(items), items, "w",
      [&](const std::vector<std::string> &v) {
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
        p_.line("const float v0 = " + epilogue_value("c0") + ", v1 = " + epilogue_value("c1") +
                ", v2 = " + epilogue_value("c2") + ", v3 = " + epilogue_value("c3") + ";");
        // A lane's two results of a row are adjacent (8-byte aligned: n and col are even).
        const std::string at = index_expr(batch, so) + " + col + 2 * tig";
        // statement(address, values) for rows r0 and r1 where they exist.
        using RowStatement = std::function<std::string(const std::string &, const std::string &)>;
        auto for_rows = [&](const std::string &base, const RowStatement &statement) {
          p_.line("if (r0 < " + M + ") " + statement(base + " + r0 * " + N, "v0, v1"));
          p_.line("if (r1 < " + M + ") " + statement(base + " + r1 * " + N, "v2, v3"));
        };
        if (store_result_ || sums_.empty()) {
          for_rows((epilogue_ ? epilogue_out_.ptr : o.ptr) + " + " + at,
                   [](const std::string &a, const std::string &v) {
                     return "*reinterpret_cast<float2 *>(" + a + ") = make_float2(" + v + ");";
                   });
        }
        for (const Sum &sum : sums_) {
          for_rows(sum.ptr + " + " + at, [&](const std::string &a, const std::string &v) {
            if (!sum.row_total) return "yr_add2(" + a + ", " + v + ");";
            return "*(" + a + ") += " + std::string(v == "v0, v1" ? "v0 + v1" : "v2 + v3") + ";";
          });
        }
      },
      4);
  finish_tensor_cores(a, b, o);
  return true;
}

bool TileMatmul::skinny_tensor_core_matmul(const Ref &a, const Ref &b, const Ref &o) {
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
  shared_loop(
      p_, warp_items(items), items, "w",
      [&](const std::vector<std::string> &v) {
        std::vector<std::string> batch = v;
        batch[rank - 2] = batch[rank - 1] = "0";
        p_.line("const int lane = threadIdx.x & 31, grp = lane >> 2, tig = lane & 3, col = " + v[rank - 1] + " * 16;");
        // The first of A's rows in the item's tile j.
        auto first_row = [&](int64_t j) {
          if (groups == 1) return std::to_string(8 * j);
          return "(" + v[rank - 2] + " * " + std::to_string(8 * item_tiles) +
                 (j == 0 ? "" : " + " + std::to_string(8 * j)) + ")";
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
            p_.line(
                "const float *pa" + std::to_string(j) + " = " +
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
            const std::string f =
                a_fragments_ + "[" + std::to_string(j * per_tile) + " + (" + kk + ") / " + (exact ? "8" : "4");
            if (exact) return {f + "]", f + " + 1]"};
            return {f + "]", f + " + 1]", f + " + 2]", f + " + 3]"};
          }
          const std::string J = std::to_string(j), pa = "pa" + J;
          p_.line("const float2 x" + J + " = *reinterpret_cast<const float2 *>(" + pa + " + " + kk + ");");
          p_.line("const float2 y" + J + " = *reinterpret_cast<const float2 *>(" + pa + " + " + kk + " + 8);");
          if (exact) return {"yr_pack2(pb, x" + J + ".x, x" + J + ".y)", "yr_pack2(pb, y" + J + ".x, y" + J + ".y)"};
          return {tf32(ta, "x" + J + ".x"), tf32(ta, "x" + J + ".y"), tf32(ta, "y" + J + ".x"),
                  tf32(ta, "y" + J + ".y")};
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
              for (size_t t = 0; t + 1 < terms.size(); t += 2)
                sums.push_back("(" + terms[t] + " + " + terms[t + 1] + ")");
              if (terms.size() % 2 == 1) sums.push_back(terms.back());
              terms = std::move(sums);
            }
            return epilogue_value(terms[0]);
          };
          p_.line("const float v0 = " + total(0) + ", v1 = " + total(1) + ", v2 = " + total(2) + ", v3 = " + total(3) +
                  ";");
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
              p_.line(
                  "const float r0 = __uint_as_float(yr_tf32(v0)), r1 = __uint_as_float(yr_tf32(v1)), r2 = "
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
      },
      4);
  finish_tensor_cores(a, b, o);
  return true;
}

std::string TileMatmul::transposed_a_lane(const std::string &base, int64_t m, int64_t row_stride,
                                          const std::string &first, bool partial) {
  const std::string row = first == "0" ? "grp" : "(" + first + " + grp)", M = std::to_string(m);
  const std::string row_index =
      partial ? "(" + row + " < " + M + " ? " + row + " : " + std::to_string(m - 1) + ")" : row;
  return base + " + " + row_index + " * " + std::to_string(row_stride) + " + 2 * tig";
}

std::string TileMatmul::epilogue_value(const std::string &c) const {
  return epilogue_ ? unary_expr(epilogue_->kind, epilogue_->attributes, c) : c;
}

ThreadShare TileMatmul::warp_items(const Dims &items) {
  const int64_t warps = block_->warps(), first = block_->next_warp % warps;
  const std::string warp =
      first == 0 ? "threadIdx.x >> 5"
                 : "((threadIdx.x >> 5) + " + std::to_string(warps - first) + ") % " + std::to_string(warps);
  block_->next_warp = (first + num_elements(items)) % warps;
  block_->idle_warps = std::max<int64_t>(0, warps - num_elements(items));
  return {"static_cast<int64_t>(" + warp + ")", std::to_string(warps), warps};
}

void TileMatmul::finish_tensor_cores(const Ref &a, const Ref &b, const Ref &o) {
  accumulated_ = !sums_.empty();
  p_.line("#else");
  if (!tiled_matmul(a, b, o)) matmul(a, b, o);
  if (epilogue_) {
    p_.line("__syncthreads();");
    shared_loop(p_, s_, {num_elements(o.dims)}, "e", [&](const std::vector<std::string> &v) {
      p_.line("const float v = " + o.ptr + "[" + v[0] + "];");
      p_.line(epilogue_out_.ptr + "[" + v[0] + "] = " + epilogue_value("v") + ";");
    });
  }
  p_.line("#endif");
  fused_ = epilogue_ != nullptr;
}

std::string TileMatmul::tf32(const Ref &x, const std::string &value) {
  return x.widened_16bit || x.tf32_rounded ? "__float_as_uint(" + value + ")" : "yr_tf32(" + value + ")";
}

bool TileMatmul::tiled_matmul(const Ref &a, const Ref &b, const Ref &o) {
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

void TileMatmul::matmul(const Ref &a, const Ref &b, const Ref &o) {
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

}  // namespace yirage::codegen::cuda
