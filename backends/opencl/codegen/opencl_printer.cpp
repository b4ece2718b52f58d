#include "opencl/codegen/opencl_printer.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace yirage::codegen::opencl {
namespace {

// Declares vars[d] as the row-major index of linear element `e` in `dims`, divided as unsigned
// (e is never negative: an unsigned division by a power of 2 is a shift).
void index_vars(Printer &p, const std::string &e, const Dims &dims, const std::vector<std::string> &vars) {
  const Dims strides = row_major_strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims.size() == 1) {
      p.line("const int " + vars[d] + " = " + e + ";");
      continue;
    }
    std::string value = "(uint)" + e;
    if (strides[d] != 1) value += " / " + std::to_string(strides[d]) + "u";
    if (d > 0) value += " % " + std::to_string(dims[d]) + "u";
    p.line("const int " + vars[d] + " = (int)(" + value + ");");
  }
}

// Where a matmul operand's element (row, col) lies for the batch indices `batch_vars` (named in
// the generated code): its base plus each index times its stride (strides from
// matmul_operand_strides: 0 along broadcast dims).
Expr operand_at(const TensorRef &t, const Dims &strides, const std::vector<std::string> &batch_vars, const Expr &row,
                const Expr &col) {
  const size_t rank = strides.size();
  Expr index = t.base + row * int_const(strides[rank - 2]) + col * int_const(strides[rank - 1]);
  for (size_t d = 0; d + 2 < rank; ++d) index = index + var(batch_vars[d]) * int_const(strides[d]);
  return index;
}

}  // namespace

const char *element_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return "half";
    case DType::kBFloat16: return "ushort";
    case DType::kFloat32: return "float";
  }
  return "float";
}

std::string OpenclPrinter::pointer(const BufferRef &buffer) const {
  if (buffer.space == MemorySpace::kShared) return "(arena + " + std::to_string(buffer.offset) + ")";
  return buffer.name;
}

// A 16-bit buffer as a pointer of its element type: a global parameter itself, a narrow tile of
// the local arena (ugraph_layout.hpp) cast from its float offset.
std::string OpenclPrinter::element_pointer(const BufferRef &buffer) const {
  if (buffer.space == MemorySpace::kGlobal) return buffer.name;
  return std::string("((__local ") + element_type(buffer.element) + " *)" + pointer(buffer) + ")";
}

std::string OpenclPrinter::load_text(const BufferRef &buffer, const std::string &index) const {
  if (buffer.space == MemorySpace::kRegisters) return CPrinter::load_text(buffer, index);
  switch (buffer.element) {
    case DType::kFloat16: return "vload_half(" + index + ", " + element_pointer(buffer) + ")";
    case DType::kBFloat16: return "yr_ld_bf16(" + element_pointer(buffer) + "[" + index + "])";
    case DType::kFloat32: break;
  }
  return buffer.space == MemorySpace::kGlobal ? buffer.name + "[" + index + "]" : CPrinter::load_text(buffer, index);
}

void OpenclPrinter::print_store(const BufferRef &buffer, const std::string &index, const std::string &value) {
  if (buffer.space == MemorySpace::kRegisters) {
    CPrinter::print_store(buffer, index, value);
    return;
  }
  switch (buffer.element) {
    case DType::kFloat16:
      p_.line("vstore_half_rte(" + value + ", " + index + ", " + element_pointer(buffer) + ");");
      return;
    case DType::kBFloat16: p_.line(element_pointer(buffer) + "[" + index + "] = yr_st_bf16(" + value + ");"); return;
    case DType::kFloat32: break;
  }
  if (buffer.space == MemorySpace::kGlobal) {
    p_.line(buffer.name + "[" + index + "] = " + value + ";");
  } else {
    CPrinter::print_store(buffer, index, value);
  }
}

void OpenclPrinter::open_shared(const Dims &dims, const std::vector<std::string> &vars, Sharing sharing) {
  const int64_t n = num_elements(dims);
  const std::string &first = vars.empty() ? std::string("e") : vars[0];
  const std::string e = (first.size() > 1 && first.back() == '0' ? first.substr(0, first.size() - 1) : first) + "_e";
  if (sharing == Sharing::kGrid) {
    p_.open("for (int " + e + " = (int)get_global_id(0); " + e + " < " + std::to_string(n) + "; " + e +
            " += (int)get_global_size(0))");
  } else {
    if (threads_ <= 0) throw Error(ErrorCode::kInternal, "opencl codegen: a block-level loop outside a block");
    p_.open("for (int " + e + " = (int)get_local_id(0); " + e + " < " + std::to_string(n) + "; " + e +
            " += " + std::to_string(threads_) + ")");
  }
  index_vars(p_, e, dims, vars);
}

void OpenclPrinter::print_shared_loop(const Loop &l) {
  if (l.sharing == Sharing::kRowLanes) {
    if (row_lanes_ <= 1 || l.dims.size() != 1) {  // the row is one work-item's
      print_serial_loop(l);
    } else if (l.dims[0] == 1) {  // one of the row's work-items
      p_.open("if (rl == 0)");
      print(substitute(l.body, l.vars[0], int_const(0)));
      p_.close();
    } else {
      p_.open("for (int " + l.vars[0] + " = rl; " + l.vars[0] + " < " + std::to_string(l.dims[0]) + "; " + l.vars[0] +
              " += " + std::to_string(row_lanes_) + ")");
      print(l.body);
      p_.close();
    }
    return;
  }
  open_shared(l.dims, l.vars, l.sharing);
  print(l.body);
  p_.close();
}

MicroTile matmul_micro_tile(int64_t m, int64_t n, int64_t batches, int64_t work_items) {
  static constexpr int64_t kShapes[][2] = {{4, 4}, {2, 4}, {4, 2}, {2, 2}, {1, 4}, {4, 1}, {1, 2}, {2, 1}};
  for (const auto &s : kShapes) {
    if (m % s[0] == 0 && n % s[1] == 0 && batches * (m / s[0]) * (n / s[1]) >= work_items) return {s[0], s[1]};
  }
  return {};
}

SplitK split_k_shape(int64_t m, int64_t n, int64_t batches, int64_t threads) {
  SplitK s;
  for (int64_t r = std::min<int64_t>(8, m); r >= 1; --r) {
    if (m % r == 0) {
      s.rows = r;
      break;
    }
  }
  s.vector = n % 8 == 0 ? 8 : 1;
  // 32 columns a tile: 64 bytes of a float16 row of B per step of k.
  while (s.width * s.vector < 32 && s.width * s.vector < n && s.width * 2 <= threads) s.width *= 2;
  while (s.slices * 2 * s.width <= threads) s.slices *= 2;
  // Two steps' loads at once with more than four rows; with fewer, unrolled steps measured slower
  // (benchmarks/gpu/RESULTS.md, "Forty-fourth session").
  s.unroll = s.rows > 4 ? 2 : 1;
  s.tiles = batches * (m / s.rows) * ((n + s.width * s.vector - 1) / (s.width * s.vector));
  return s;
}

// `vector` elements of B from element `index` on, as a float8 (vector 8) or a float.
std::string OpenclPrinter::load_columns(const BufferRef &b, const Expr &index, int64_t vector) const {
  if (vector == 1) return text(load(b, index));
  const std::string at = b.name + " + " + offset_text(index);
  switch (b.element) {
    case DType::kFloat16: return "vload_half8(0, " + at + ")";
    case DType::kBFloat16: return "as_float8(convert_uint8(vload8(0, " + at + ")) << 16)";
    case DType::kFloat32: break;
  }
  return "vload8(0, " + at + ")";
}

// o = a · b (kernel level) as SplitK says: a work-item's rows of its columns, summed over its
// part of k, then the parts of each column added in local memory.
void OpenclPrinter::print_split_k_matmul(const Matmul &mm) {
  const TensorRef &a = mm.a, &b = mm.b, &o = mm.o;
  const size_t rank = o.dims.size();
  const int64_t m = o.dims[rank - 2], n = o.dims[rank - 1], k = a.dims[rank - 1];
  const Dims batch(o.dims.begin(), o.dims.end() - 2);
  const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
  SplitK s = split_k_shape(m, n, num_elements(batch), threads_);
  // Vector loads need B's columns consecutive and every group of 8 starting at a multiple of 8.
  bool whole_groups = sb[rank - 1] == 1 && b.base.is_int(0);
  for (size_t d = 0; d + 1 < rank; ++d) whole_groups = whole_groups && sb[d] % 8 == 0;
  if (!whole_groups) s.vector = 1;
  const int64_t V = s.vector;
  const Dims so = o.element_strides();
  const int64_t tile_columns = s.width * V;
  const int64_t column_tiles = (n + tile_columns - 1) / tile_columns, row_tiles = m / s.rows;
  const std::vector<std::string> bvars = numbered("mb", batch.size());
  auto at = [&](const TensorRef &t, const Dims &strides, const Expr &row, const Expr &col) {
    return operand_at(t, strides, bvars, row, col);
  };
  auto row = [&](int64_t r) { return var("i0") + int_const(r); };
  const std::string W = std::to_string(s.width), S = std::to_string(s.slices);
  const std::string scratch = V == 1 ? kScratch : kScratch8, type = V == 1 ? "float" : "float8";
  p_.open("");
  p_.line("const int lid = (int)get_local_id(0), col = lid % " + W + ", slice = lid / " + W + ";");
  p_.open("for (int tile = (int)get_group_id(0); tile < " + std::to_string(s.tiles) +
          "; tile += (int)get_num_groups(0))");
  p_.line("const int j = (tile % " + std::to_string(column_tiles) + ") * " + std::to_string(tile_columns) +
          " + col * " + std::to_string(V) + ";");
  p_.line("const int i0 = (tile / " + std::to_string(column_tiles) + ") % " + std::to_string(row_tiles) + " * " +
          std::to_string(s.rows) + ";");
  p_.line("const int rest = tile / " + std::to_string(column_tiles * row_tiles) + ";");
  Dims batch_strides = row_major_strides(batch);
  for (size_t d = 0; d < batch.size(); ++d) {
    p_.line("const int " + bvars[d] + " = rest / " + std::to_string(batch_strides[d]) + " % " +
            std::to_string(batch[d]) + ";");
  }
  p_.line("const bool valid = j < " + std::to_string(n) + " && slice < " + S + ";");
  for (int64_t r = 0; r < s.rows; ++r) p_.line(type + " acc" + std::to_string(r) + " = (" + type + ")(0.0f);");
  // Steps p, p + S, ..., p + (unroll - 1) S: their loads of B first, then their sums; the steps
  // left over one at a time.
  const std::string K = std::to_string(k);
  auto step = [&](int64_t u) { return var("p") + int_const(u * s.slices); };
  auto sums = [&](int64_t steps) {
    for (int64_t u = 0; u < steps; ++u) {
      p_.line("const " + type + " bv" + std::to_string(u) + " = " +
              load_columns(b.buffer, at(b, sb, step(u), var("j")), V) + ";");
    }
    for (int64_t u = 0; u < steps; ++u) {
      for (int64_t r = 0; r < s.rows; ++r) {
        p_.line("acc" + std::to_string(r) + " += " + text(load(a.buffer, at(a, sa, row(r), step(u)))) + " * bv" +
                std::to_string(u) + ";");
      }
    }
  };
  p_.line("int p = slice;");
  p_.open("if (valid)");
  p_.open("for (; p + " + std::to_string((s.unroll - 1) * s.slices) + " < " + K +
          "; p += " + std::to_string(s.unroll * s.slices) + ")");
  sums(s.unroll);
  p_.close();
  p_.open("for (; p < " + K + "; p += " + S + ")");
  sums(1);
  p_.close();
  p_.close();
  for (int64_t r = 0; r < s.rows; ++r) {
    p_.line(scratch + "[lid] = acc" + std::to_string(r) + ";");
    print_barrier();
    p_.open("for (int step = " + std::to_string(s.slices / 2) + "; step > 0; step >>= 1)");
    p_.line("if (slice < step) " + scratch + "[lid] += " + scratch + "[lid + step * " + W + "];");
    print_barrier();
    p_.close();
    p_.open("if (slice == 0 && valid)");
    for (int64_t c = 0; c < V; ++c) {
      const std::string value = scratch + "[lid]" + (V == 1 ? "" : ".s" + std::to_string(c));
      print_store(o.buffer, offset_text(at(o, so, row(r), var("j") + int_const(c))), value);
    }
    p_.close();
    print_barrier();
  }
  p_.close();
  p_.close();
}

// o = a · b with a register block of outputs per work-item: its rows' elements of A and columns'
// of B are read once per step of k and used rows · cols times.
void OpenclPrinter::print_matmul(const Matmul &mm) {
  if (across_groups_ && mm.sharing == Sharing::kGrid) {
    print_split_k_matmul(mm);
    return;
  }
  const TensorRef &a = mm.a, &b = mm.b, &o = mm.o;
  const size_t rank = o.dims.size();
  const int64_t m = o.dims[rank - 2], n = o.dims[rank - 1], k = a.dims[rank - 1];
  const Dims batch(o.dims.begin(), o.dims.end() - 2);
  const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
  const Dims so = o.element_strides();
  const MicroTile tile =
      matmul_micro_tile(m, n, num_elements(batch), mm.sharing == Sharing::kGrid ? grid_items_ : threads_);
  const int64_t row_step = m / tile.rows, col_step = n / tile.cols;
  Dims dims = batch;
  dims.push_back(row_step);
  dims.push_back(col_step);
  std::vector<std::string> vars = numbered("mb", batch.size());
  vars.push_back("mr");
  vars.push_back("mc");
  auto at = [&](const TensorRef &t, const Dims &strides, const Expr &row, const Expr &col) {
    return operand_at(t, strides, vars, row, col);
  };
  auto row = [&](int64_t r) { return var("mr") + int_const(r * row_step); };
  auto col = [&](int64_t c) { return var("mc") + int_const(c * col_step); };
  auto acc = [](int64_t r, int64_t c) { return "acc" + std::to_string(r) + "_" + std::to_string(c); };
  open_shared(dims, vars, mm.sharing);
  for (int64_t r = 0; r < tile.rows; ++r) {
    for (int64_t c = 0; c < tile.cols; ++c) p_.line("float " + acc(r, c) + " = 0.0f;");
  }
  p_.open("for (int p = 0; p < " + std::to_string(k) + "; ++p)");
  for (int64_t r = 0; r < tile.rows; ++r) {
    p_.line("const float a" + std::to_string(r) + " = " + text(load(a.buffer, at(a, sa, row(r), var("p")))) + ";");
  }
  for (int64_t c = 0; c < tile.cols; ++c) {
    p_.line("const float b" + std::to_string(c) + " = " + text(load(b.buffer, at(b, sb, var("p"), col(c)))) + ";");
  }
  for (int64_t r = 0; r < tile.rows; ++r) {
    for (int64_t c = 0; c < tile.cols; ++c) {
      p_.line(acc(r, c) + " += a" + std::to_string(r) + " * b" + std::to_string(c) + ";");
    }
  }
  p_.close();
  for (int64_t r = 0; r < tile.rows; ++r) {
    for (int64_t c = 0; c < tile.cols; ++c) {
      print_store(o.buffer, offset_text(at(o, so, row(r), col(c))), acc(r, c));
    }
  }
  p_.close();
}

RowShare row_share(int64_t rows, int64_t cols, int64_t threads, bool across_groups) {
  RowShare share;
  const int64_t most = across_groups ? threads : 256;
  while (share.lanes * 2 <= most && share.lanes < cols && (across_groups || share.lanes * 2 * rows <= threads)) {
    share.lanes *= 2;
  }
  share.rows_at_once = std::max<int64_t>(1, threads / share.lanes);
  share.passes = (rows + share.rows_at_once - 1) / share.rows_at_once;
  return share;
}

// Each row is shared by `lanes` work-items (row_share), each summing a strided part of it; the
// parts meet in the scratch array by halving, barriers between. Rows beyond the work-group's
// take further passes (at kernel level, the passes are spread over the work-groups), so that
// every work-item of a work-group reaches every barrier.
void OpenclPrinter::print_row_reduce(const RowReduce &rr) {
  const RowShare share = row_share(rr.rows, rr.cols, threads_, across_groups_);
  const int64_t lanes = share.lanes, rows_at_once = share.rows_at_once, passes = share.passes;
  if (lanes == 1 && !across_groups_) {
    CPrinter::print_row_reduce(rr);
    return;
  }
  const std::string L = std::to_string(lanes), rows = std::to_string(rr.rows);
  const std::string identity = rr.is_max ? "-INFINITY" : "0.0f";
  auto combine = [&](const std::string &a, const std::string &b) {
    return rr.is_max ? "yr_max(" + a + ", " + b + ")" : a + " + " + b;
  };
  p_.open("");
  p_.line("const int lid = (int)get_local_id(0), rl = lid % " + L + ";");
  if (across_groups_) {
    p_.open("for (int pass = (int)get_group_id(0); pass < " + std::to_string(passes) +
            "; pass += (int)get_num_groups(0))");
  } else {
    p_.open("for (int pass = 0; pass < " + std::to_string(passes) + "; ++pass)");
  }
  // Work-items past the last whole group of lanes (a work-group size that is no multiple of
  // `lanes`) take no row.
  const std::string grouped = "lid < " + std::to_string(rows_at_once * lanes);
  p_.line("const int r = " + grouped + " ? pass * " + std::to_string(rows_at_once) + " + lid / " + L + " : " + rows +
          ";");
  p_.line("float total = " + identity + ";");
  p_.line("if (r < " + rows + ") for (int c = rl; c < " + std::to_string(rr.cols) + "; c += " + L +
          ") total = " + combine("total", text(rr.value)) + ";");
  p_.line(std::string(kScratch) + "[lid] = total;");
  print_barrier();
  p_.open("for (int step = " + std::to_string(lanes / 2) + "; step > 0; step >>= 1)");
  p_.line("if (rl < step && " + grouped + ") " + std::string(kScratch) +
          "[lid] = " + combine(std::string(kScratch) + "[lid]", std::string(kScratch) + "[lid + step]") + ";");
  print_barrier();
  p_.close();
  p_.line("total = " + std::string(kScratch) + "[lid - rl];");
  p_.open("if (r < " + rows + ")");
  row_lanes_ = lanes;
  print(rr.finish);
  row_lanes_ = 0;
  p_.close();
  print_barrier();  // the scratch array is written again by the next pass or reduction
  p_.close();
  p_.close();
}

}  // namespace yirage::codegen::opencl
