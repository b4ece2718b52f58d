#include "vulkan/codegen/glsl_printer.hpp"

#include <algorithm>

#include "opencl/codegen/opencl_printer.hpp"
#include "util/error.hpp"

namespace yirage::codegen::vulkan {
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
    std::string value = "uint(" + e + ")";
    if (strides[d] != 1) value += " / " + std::to_string(strides[d]) + "u";
    if (d > 0) value += " % " + std::to_string(dims[d]) + "u";
    p.line("const int " + vars[d] + " = int(" + value + ");");
  }
}

// Where a matmul operand's element (row, col) lies for the batch indices `batch_vars`: its base
// plus each index times its stride (strides from matmul_operand_strides: 0 along broadcast dims).
Expr operand_at(const TensorRef &t, const Dims &strides, const std::vector<std::string> &batch_vars, const Expr &row,
                const Expr &col) {
  const size_t rank = strides.size();
  Expr index = t.base + row * int_const(strides[rank - 2]) + col * int_const(strides[rank - 1]);
  for (size_t d = 0; d + 2 < rank; ++d) index = index + var(batch_vars[d]) * int_const(strides[d]);
  return index;
}

}  // namespace

const char *element_type(DType dtype, bool storage16) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: return storage16 ? "uint16_t" : "uint";
    case DType::kFloat32: break;
  }
  return "float";
}

std::string GlslPrinter::pointer(const BufferRef &buffer) const {
  // Only ever indexed (load_text, print_store): GLSL has no pointers.
  if (buffer.space == MemorySpace::kShared) return "arena";
  return buffer.name;
}

std::string GlslPrinter::load_text(const BufferRef &buffer, const std::string &index) const {
  switch (buffer.space) {
    case MemorySpace::kShared: return "arena[" + std::to_string(buffer.offset) + " + " + index + "]";
    case MemorySpace::kRegisters: return buffer.name + "[" + index + "]";
    case MemorySpace::kGlobal: break;
  }
  const std::string element = buffer.name + ".data[" + index + "]";
  const std::string word = buffer.name + ".data[(" + index + ") >> 1]";
  switch (buffer.element) {
    case DType::kFloat16:
      return storage16_ ? "unpackHalf2x16(uint(" + element + ")).x" : "yr_half_of(" + word + ", " + index + ")";
    case DType::kBFloat16:
      return storage16_ ? "uintBitsToFloat(uint(" + element + ") << 16)" : "yr_bf16_of(" + word + ", " + index + ")";
    case DType::kFloat32: break;
  }
  return element;
}

void GlslPrinter::print_store(const BufferRef &buffer, const std::string &index, const std::string &value) {
  if (buffer.space != MemorySpace::kGlobal) {
    p_.line(load_text(buffer, index) + " = " + value + ";");
    return;
  }
  const std::string element = buffer.name + ".data[" + index + "]";
  if (buffer.element == DType::kFloat32) {
    p_.line(element + " = " + value + ";");
    return;
  }
  const bool half = buffer.element == DType::kFloat16;
  if (storage16_) {
    p_.line(element + " = uint16_t(" + (half ? "yr_f16_bits(" : "yr_bf16_bits(") + value + "));");
    return;
  }
  // The element's half of its word, cleared then set: the other half may be another invocation's.
  p_.open("");
  p_.line("const int yr_i = " + index + ";");
  p_.line("const uint yr_shift = uint(yr_i & 1) * 16u;");
  p_.line("atomicAnd(" + buffer.name + ".data[yr_i >> 1], ~(0xffffu << yr_shift));");
  p_.line("atomicOr(" + buffer.name + ".data[yr_i >> 1], " + (half ? "yr_f16_bits(" : "yr_bf16_bits(") + value +
          ") << yr_shift);");
  p_.close();
}

void GlslPrinter::open_shared(const Dims &dims, const std::vector<std::string> &vars, Sharing sharing) {
  const int64_t n = num_elements(dims);
  const std::string &first = vars.empty() ? std::string("e") : vars[0];
  const std::string e = (first.size() > 1 && first.back() == '0' ? first.substr(0, first.size() - 1) : first) + "_e";
  const std::string T = std::to_string(threads_);
  if (sharing == Sharing::kGrid) {
    p_.open("for (int " + e + " = yr_group_x() * " + T + " + yr_lid(); " + e + " < " + std::to_string(n) + "; " + e +
            " += yr_push.groups_x * " + T + ")");
  } else {
    if (!block_) throw Error(ErrorCode::kInternal, "vulkan codegen: a block-level loop outside a block");
    p_.open("for (int " + e + " = yr_lid(); " + e + " < " + std::to_string(n) + "; " + e + " += " + T + ")");
  }
  index_vars(p_, e, dims, vars);
}

void GlslPrinter::print_shared_loop(const Loop &l) {
  if (l.sharing == Sharing::kRowLanes) {
    if (row_lanes_ <= 1 || l.dims.size() != 1) {  // the row is one invocation's
      print_serial_loop(l);
    } else if (l.dims[0] == 1) {  // one of the row's invocations
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

// o = a · b with a register block of outputs per invocation: its rows' elements of A and its
// columns' of B are read once per step of k and used rows · cols times.
void GlslPrinter::print_matmul(const Matmul &mm) {
  const TensorRef &a = mm.a, &b = mm.b, &o = mm.o;
  const size_t rank = o.dims.size();
  const int64_t m = o.dims[rank - 2], n = o.dims[rank - 1], k = a.dims[rank - 1];
  const Dims batch(o.dims.begin(), o.dims.end() - 2);
  const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
  const Dims so = o.element_strides();
  const opencl::MicroTile tile =
      opencl::matmul_micro_tile(m, n, num_elements(batch), mm.sharing == Sharing::kGrid ? grid_items_ : threads_);
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

// Each row is shared by `lanes` invocations (opencl::row_share), each summing a strided part of
// it; the parts meet in the scratch array by halving, barriers between. Rows beyond the
// work-group's take further passes (at kernel level spread over the work-groups), so that every
// invocation of a work-group reaches every barrier (GLSL requires barriers in uniform control
// flow).
void GlslPrinter::print_row_reduce(const RowReduce &rr) {
  const opencl::RowShare share = opencl::row_share(rr.rows, rr.cols, threads_, across_groups_);
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
  p_.line("const int lid = yr_lid(), rl = lid % " + L + ";");
  if (across_groups_) {
    p_.open("for (int pass = yr_group_x(); pass < " + std::to_string(passes) + "; pass += yr_push.groups_x)");
  } else {
    p_.open("for (int pass = 0; pass < " + std::to_string(passes) + "; ++pass)");
  }
  // Invocations past the last whole group of lanes take no row.
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

}  // namespace yirage::codegen::vulkan
