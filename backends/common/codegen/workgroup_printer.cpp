#include "common/codegen/workgroup_printer.hpp"

#include <algorithm>
#include <variant>

#include "util/error.hpp"

namespace yirage::codegen {
namespace {

// Whether `block` holds a matmul or a row reduction (at any depth).
bool has_shared_work(const Block &block) {
  for (const Stmt &s : block) {
    if (std::holds_alternative<Matmul>(s.node) || std::holds_alternative<RowReduce>(s.node)) return true;
    if (const auto *b = std::get_if<Block>(&s.node); b != nullptr && has_shared_work(*b)) return true;
  }
  return false;
}

}  // namespace

MicroTile matmul_micro_tile(int64_t m, int64_t n, int64_t batches, int64_t work_items) {
  static constexpr int64_t kShapes[][2] = {{4, 4}, {2, 4}, {4, 2}, {2, 2}, {1, 4}, {4, 1}, {1, 2}, {2, 1}};
  for (const auto &s : kShapes) {
    if (m % s[0] == 0 && n % s[1] == 0 && batches * (m / s[0]) * (n / s[1]) >= work_items) return {s[0], s[1]};
  }
  return {};
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

Expr operand_at(const TensorRef &t, const Dims &strides, const std::vector<std::string> &batch_vars, const Expr &row,
                const Expr &col) {
  const size_t rank = strides.size();
  Expr index = t.base + row * int_const(strides[rank - 2]) + col * int_const(strides[rank - 1]);
  for (size_t d = 0; d + 2 < rank; ++d) index = index + var(batch_vars[d]) * int_const(strides[d]);
  return index;
}

// Divided as unsigned: e is never negative, and an unsigned division by a power of 2 is a shift.
void WorkgroupPrinter::index_vars(const std::string &e, const Dims &dims, const std::vector<std::string> &vars) {
  const Dims strides = row_major_strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims.size() == 1) {
      p_.line("const int " + vars[d] + " = " + e + ";");
      continue;
    }
    std::string value = convert("uint", e);
    if (strides[d] != 1) value += " / " + std::to_string(strides[d]) + "u";
    if (d > 0) value += " % " + std::to_string(dims[d]) + "u";
    p_.line("const int " + vars[d] + " = " + convert("int", value) + ";");
  }
}

void WorkgroupPrinter::open_shared(const Dims &dims, const std::vector<std::string> &vars, Sharing sharing) {
  const int64_t n = num_elements(dims);
  const std::string &first = vars.empty() ? std::string("e") : vars[0];
  const std::string e = (first.size() > 1 && first.back() == '0' ? first.substr(0, first.size() - 1) : first) + "_e";
  if (sharing != Sharing::kGrid && !block_) {
    throw Error(ErrorCode::kInternal, std::string(target_) + ": a block-level loop outside a block");
  }
  const bool grid = sharing == Sharing::kGrid;
  p_.open("for (int " + e + " = " + (grid ? global_id() : local_id()) + "; " + e + " < " + std::to_string(n) + "; " +
          e + " += " + (grid ? global_size() : std::to_string(threads_)) + ")");
  index_vars(e, dims, vars);
}

void WorkgroupPrinter::print_shared_loop(const Loop &l) {
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

// o = a · b with a register block of outputs per work-item: its rows' elements of A and columns'
// of B are read once per step of k and used rows · cols times.
void WorkgroupPrinter::print_matmul(const Matmul &mm) {
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
  // A ragged k (ir/ragged_tiles.hpp) ends where the tensor does.
  const std::string end =
      mm.k_inside ? "p < " + std::to_string(k) + " && p < (" + text(*mm.k_inside) + ")" : "p < " + std::to_string(k);
  p_.open("for (int p = 0; " + end + "; ++p)");
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

// Each row is shared by `lanes` work-items (row_share), each summing a strided part of it; the
// parts meet in the scratch array by halving, barriers between. Rows beyond the work-group's
// take further passes (at kernel level, the passes are spread over the work-groups), so that
// every work-item of a work-group reaches every barrier (GLSL requires barriers in uniform
// control flow).
void WorkgroupPrinter::print_row_reduce(const RowReduce &rr) {
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
  const std::string scratch = kScratch;
  p_.open("");
  p_.line("const int lid = " + local_id() + ", rl = lid % " + L + ";");
  if (across_groups_) {
    open_group_parts("pass", passes);
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
  p_.line(scratch + "[lid] = total;");
  print_barrier();
  p_.open("for (int step = " + std::to_string(lanes / 2) + "; step > 0; step >>= 1)");
  p_.line("if (rl < step && " + grouped + ") " + scratch +
          "[lid] = " + combine(scratch + "[lid]", scratch + "[lid + step]") + ";");
  print_barrier();
  p_.close();
  p_.line("total = " + scratch + "[lid - rl];");
  p_.open("if (r < " + rows + ")");
  row_lanes_ = lanes;
  print(rr.finish);
  row_lanes_ = 0;
  p_.close();
  print_barrier();  // the scratch array is written again by the next pass or reduction
  p_.close();
  p_.close();
}

void WorkgroupPrinter::open_group_parts(const std::string &var, int64_t parts) {
  if (parts <= max_groups_) {
    p_.open("");
    p_.line("const int " + var + " = " + group_id() + ";");
  } else {
    p_.open("for (int " + var + " = " + group_id() + "; " + var + " < " + std::to_string(parts) + "; " + var +
            " += " + num_groups() + ")");
  }
}

std::optional<bool> WorkgroupWalker::print_step(const Step &step) {
  UGraphWalker::print_step(step);
  if (has_shared_work(step.body)) return false;
  return std::nullopt;
}

}  // namespace yirage::codegen
