#include "opencl/codegen/opencl_printer.hpp"

#include <algorithm>
#include <cctype>

namespace yirage::codegen::opencl {

const char *element_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return "half";
    case DType::kBFloat16: return "ushort";
    case DType::kFloat32: return "float";
  }
  return "float";
}

// A C cast; `value` in parentheses unless it is a name.
std::string OpenclPrinter::convert(const std::string &type, const std::string &value) const {
  const bool name = std::all_of(value.begin(), value.end(),
                                [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  return "(" + type + ")" + (name ? value : "(" + value + ")");
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
  p_.line("const int lid = " + local_id() + ", col = lid % " + W + ", slice = lid / " + W + ";");
  open_group_parts("tile", s.tiles);
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

// o = a · b split over k where SplitK is wanted, else as every work-group printer does.
void OpenclPrinter::print_matmul(const Matmul &mm) {
  if (across_groups_ && mm.sharing == Sharing::kGrid) {
    print_split_k_matmul(mm);
  } else {
    WorkgroupPrinter::print_matmul(mm);
  }
}

}  // namespace yirage::codegen::opencl
