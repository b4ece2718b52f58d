#include "codegen/stmt.hpp"

#include <cmath>

namespace yirage::codegen {

Dims TensorRef::element_strides() const {
  return strides.empty() ? row_major_strides(dims) : strides;
}
Expr TensorRef::index(const std::vector<Expr> &vars) const {
  return base + index_of(vars, element_strides());
}

Stmt block(Block body) {
  return {std::move(body)};
}

Stmt loop(const Dims &dims, std::vector<std::string> vars, Sharing sharing, Block body, int unroll) {
  return {Loop{dims, std::move(vars), sharing, unroll, std::move(body)}};
}

Stmt if_then(Expr condition, Block then_body, Block else_body) {
  return {If{std::move(condition), std::move(then_body), std::move(else_body)}};
}

Stmt let(const std::string &name, Expr value, bool is_float) {
  return {Let{name, std::move(value), is_float, false}};
}
Stmt let_mutable(const std::string &name, Expr value) {
  return {Let{name, std::move(value), true, true}};
}
Stmt assign(const std::string &name, Expr value) {
  return {Assign{name, std::move(value)}};
}
Stmt store(const BufferRef &buffer, Expr index, Expr value) {
  return {Store{buffer, std::move(index), std::move(value)}};
}
Stmt barrier() {
  return {Barrier{}};
}

Dims broadcast_strides(const Dims &dims, const Dims &out) {
  Dims strides = row_major_strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1 && out[d] != 1) strides[d] = 0;
  }
  return strides;
}

Expr substitute(const Expr &e, const std::string &name, const Expr &value) {
  if (e.kind == ExprKind::kVar && e.name == name) return value;
  Expr out = e;
  for (Expr &a : out.args) a = substitute(a, name, value);
  return out;
}

Block substitute(const Block &block, const std::string &name, const Expr &value) {
  Block out = block;
  auto sub = [&](const Expr &e) { return substitute(e, name, value); };
  for (Stmt &s : out) {
    if (auto *b = std::get_if<Block>(&s.node)) {
      *b = substitute(*b, name, value);
    } else if (auto *l = std::get_if<Loop>(&s.node)) {
      l->body = substitute(l->body, name, value);
    } else if (auto *i = std::get_if<If>(&s.node)) {
      i->condition = sub(i->condition);
      i->then_body = substitute(i->then_body, name, value);
      i->else_body = substitute(i->else_body, name, value);
    } else if (auto *l = std::get_if<Let>(&s.node)) {
      l->value = sub(l->value);
    } else if (auto *a = std::get_if<Assign>(&s.node)) {
      a->value = sub(a->value);
    } else if (auto *st = std::get_if<Store>(&s.node)) {
      st->index = sub(st->index);
      st->value = sub(st->value);
    }
  }
  return out;
}

std::vector<std::string> numbered(const std::string &prefix, size_t n) {
  std::vector<std::string> names;
  for (size_t d = 0; d < n; ++d) names.push_back(prefix + std::to_string(d));
  return names;
}

namespace {

// The finish of a row reduction run by one thread per row: its row loops become serial.
Block serial_rows(Block body) {
  for (Stmt &s : body) {
    if (auto *l = std::get_if<Loop>(&s.node)) {
      if (l->sharing == Sharing::kRowLanes) l->sharing = Sharing::kSerial;
      l->body = serial_rows(std::move(l->body));
    } else if (auto *i = std::get_if<If>(&s.node)) {
      i->then_body = serial_rows(std::move(i->then_body));
      i->else_body = serial_rows(std::move(i->else_body));
    } else if (auto *b = std::get_if<Block>(&s.node)) {
      *b = serial_rows(std::move(*b));
    }
  }
  return body;
}

}  // namespace

Block expand(const Matmul &m) {
  const size_t rank = m.o.dims.size();
  const int64_t k = m.a.dims[rank - 1];
  const Dims sa = matmul_operand_strides(m.a, m.o.dims), sb = matmul_operand_strides(m.b, m.o.dims);
  const std::vector<std::string> names = numbered("m", rank);
  std::vector<Expr> va = vars_of(names), vb = vars_of(names);
  va[rank - 1] = var("p");  // A[…, i, p]
  vb[rank - 2] = var("p");  // B[…, p, j]
  Block body;
  body.push_back(let_mutable("acc", float_const(0)));
  Stmt add = assign("acc", var("acc") + load(m.a.buffer, m.a.base + index_of(va, sa)) *
                                            load(m.b.buffer, m.b.base + index_of(vb, sb)));
  if (m.k_inside) add = if_then(binary("<", var("p"), *m.k_inside), {add});
  body.push_back(loop({k}, {"p"}, Sharing::kSerial, {std::move(add)}));
  body.push_back(store(m.o.buffer, m.o.index(vars_of(names)), var("acc")));
  if (m.n_inside) body = {if_then(binary("<", var(names[rank - 1]), *m.n_inside), std::move(body))};
  if (m.m_inside) body = {if_then(binary("<", var(names[rank - 2]), *m.m_inside), std::move(body))};
  return {loop(m.o.dims, names, m.sharing, std::move(body))};
}

Block expand(const RowReduce &r) {
  const Expr into = r.is_max ? call("yr_max", {var("total"), r.value}) : var("total") + r.value;
  Block body;
  body.push_back(let_mutable("total", float_const(r.is_max ? -INFINITY : 0.0)));
  body.push_back(loop({r.cols}, {"c"}, Sharing::kSerial, {assign("total", into)}));
  for (Stmt &s : serial_rows(r.finish)) body.push_back(std::move(s));
  return {loop({r.rows}, {"r"}, Sharing::kThreads, std::move(body))};
}

Block expand(const TileCopy &c) {
  const std::vector<std::string> names = numbered("t", c.tile.dims.size());
  const std::vector<Expr> v = vars_of(names);
  const Expr at_tensor = c.tensor.index(v), at_tile = c.tile.index(v);
  Stmt copy;
  if (c.load) {
    Expr value = load(c.tensor.buffer, at_tensor);
    for (const TileBound &b : c.inside) value = select(binary("<", v[b.dim], b.inside), value, float_const(0));
    copy = store(c.tile.buffer, at_tile, value);
  } else {
    copy = store(c.tensor.buffer, at_tensor, load(c.tile.buffer, at_tile));
    for (const TileBound &b : c.inside) copy = if_then(binary("<", v[b.dim], b.inside), {copy});
  }
  return {loop(c.tile.dims, names, Sharing::kThreads, {std::move(copy)})};
}

}  // namespace yirage::codegen
