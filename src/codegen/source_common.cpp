#include "codegen/source_common.hpp"

#include <cmath>
#include <cstdio>
#include <numeric>

#include "ir/block_graph.hpp"
#include "util/error.hpp"

namespace yirage::codegen {

std::string literal(double value) {
  if (std::isnan(value)) return "NAN";
  if (std::isinf(value)) return value > 0 ? "INFINITY" : "(-INFINITY)";
  char text[64];
  std::snprintf(text, sizeof text, "%.9gf", value);
  std::string s = text;
  if (s.find_first_of(".e") == std::string::npos) s.insert(s.size() - 1, ".0");
  return "(" + s + ")";
}

Dims broadcast_strides(const Dims &dims, const Dims &out) {
  Dims strides = row_major_strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1 && out[d] != 1) strides[d] = 0;
  }
  return strides;
}

Dims matmul_operand_strides(const Ref &x, const Dims &out) {
  Dims strides = x.element_strides();
  for (size_t d = 0; d + 2 < out.size(); ++d) {
    if (x.dims[d] == 1 && out[d] != 1) strides[d] = 0;
  }
  return strides;
}

namespace {
// A sum in parentheses, so that `pointer + sum` adds one offset to the pointer: unparenthesized,
// each term is a pointer addition of its own, which on a GPU is a 64-bit add (and a sign
// extension) per term, per element.
std::string grouped(const std::string &sum) {
  return sum.find(' ') == std::string::npos ? sum : "(" + sum + ")";
}
}  // namespace

std::string index_expr(const std::vector<std::string> &vars, const Dims &strides) {
  std::string expr;
  for (size_t d = 0; d < vars.size(); ++d) {
    if (strides[d] == 0) continue;
    if (!expr.empty()) expr += " + ";
    expr += strides[d] == 1 ? vars[d] : vars[d] + " * " + std::to_string(strides[d]);
  }
  return expr.empty() ? "0" : grouped(expr);
}

std::string unary_expr(OpKind kind, const OpAttributes &a, const std::string &v) {
  switch (kind) {
    case OpKind::kExp: return "yr_exp(" + v + ")";
    case OpKind::kSilu: return v + " * yr_sigmoid(" + v + ")";
    case OpKind::kGelu: return "0.5f * " + v + " * (1.0f + yr_erf(" + v + " * 0.70710678118654752f))";
    case OpKind::kRelu: return "(" + v + " > 0.0f ? " + v + " : (" + v + " != " + v + " ? " + v + " : 0.0f))";
    case OpKind::kSqrt: return "yr_sqrt(" + v + ")";
    case OpKind::kSquare: return v + " * " + v;
    case OpKind::kSigmoid: return "yr_sigmoid(" + v + ")";
    case OpKind::kLog: return "yr_log(" + v + ")";
    case OpKind::kNeg: return "-" + v;
    case OpKind::kClamp: return "yr_clamp(" + v + ", " + literal(a.lo) + ", " + literal(a.hi) + ")";
    case OpKind::kMulScalar: return v + " * " + literal(a.scalar);
    default: break;
  }
  throw Error(ErrorCode::kInternal, std::string("codegen: not unary: ") + op_name(kind));
}

std::string binary_expr(OpKind kind, const std::string &a, const std::string &b) {
  switch (kind) {
    case OpKind::kAdd: return a + " + " + b;
    case OpKind::kSub: return a + " - " + b;
    case OpKind::kMul: return a + " * " + b;
    case OpKind::kDiv: return a + " / " + b;
    case OpKind::kPow: return "yr_pow(" + a + ", " + b + ")";
    case OpKind::kMax: return "yr_max(" + a + ", " + b + ")";
    default: break;
  }
  throw Error(ErrorCode::kInternal, std::string("codegen: not binary: ") + op_name(kind));
}

void Printer::nest(const Dims &dims, const std::string &prefix, const std::string &pragma,
                   const std::function<void(const std::vector<std::string> &)> &body) {
  std::vector<std::string> vars;
  for (size_t d = 0; d < dims.size(); ++d) vars.push_back(prefix + std::to_string(d));
  if (!pragma.empty() && !dims.empty()) line(pragma);
  for (size_t d = 0; d < dims.size(); ++d) {
    open("for (int64_t " + vars[d] + " = 0; " + vars[d] + " < " + std::to_string(dims[d]) +
         "; ++" + vars[d] + ")");
  }
  body(vars);
  for (size_t d = 0; d < dims.size(); ++d) close();
}

BlockLayout plan_block_layout(const BlockGraph &bg, int64_t align, const std::vector<int64_t> &row_pad,
                              const std::vector<bool> &elsewhere, const std::vector<bool> &sums_elsewhere) {
  BlockLayout layout;
  auto reserve = [&](int64_t floats) {
    const int64_t offset = layout.floats;
    layout.floats += (floats + align - 1) / align * align;
    return offset;
  };
  for (size_t t = 0; t < bg.num_tensors(); ++t) {
    const Dims &dims = bg.tensor(static_cast<TensorId>(t)).dims;
    const int64_t pad = t < row_pad.size() ? row_pad[t] : 0;
    const bool none = t < elsewhere.size() && elsewhere[t];
    layout.tile.push_back(reserve(none ? 0 : num_elements(dims) / dims.back() * (dims.back() + pad)));
  }
  const auto &ops = bg.operators();
  layout.state.assign(ops.size(), -1);
  layout.running_max.assign(ops.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpKind kind = ops[i].kind;
    const bool own_sums = i >= sums_elsewhere.size() || !sums_elsewhere[i];
    if (own_sums && (kind == OpKind::kAccumReduceSum || kind == OpKind::kAccumReduceMean ||
                     kind == OpKind::kAccumReduceRms)) {
      layout.state[i] = reserve(num_elements(bg.tensor(ops[i].inputs[0]).dims));
    }
    if (kind == OpKind::kAccumRescale) {
      const int64_t m = num_elements(bg.tensor(ops[i].inputs[1]).dims);
      layout.running_max[i] = reserve(m);
      layout.state[i] = reserve(m);
    }
  }
  return layout;
}

namespace {

// The terms of tile_base: (variable, coefficient).
std::vector<std::pair<std::string, int64_t>> tile_base_terms(const BlockGraph &bg, const Operator &op,
                                                             const Dims &tile_dims, const std::string &it) {
  static const char *block_vars[3] = {"bx", "by", "bz"};
  const Dims &full = op.attributes.sizes;
  const Dims strides = row_major_strides(full);
  std::vector<std::pair<std::string, int64_t>> terms;
  for (size_t a = 0; a < 3; ++a) {
    const int32_t d = op.attributes.grid_map[a];
    if (d < 0) continue;
    const auto du = static_cast<size_t>(d);
    const int64_t part = op.kind == OpKind::kOutputSaver ? tile_dims[du] : full[du] / bg.config().grid[a];
    terms.emplace_back(block_vars[a], part * strides[du]);
  }
  if (op.attributes.forloop_dim >= 0) {
    const auto f = static_cast<size_t>(op.attributes.forloop_dim);
    terms.emplace_back(it, tile_dims[f] * strides[f]);
  }
  return terms;
}

}  // namespace

std::string tile_base(const BlockGraph &bg, const Operator &op, const Dims &tile_dims,
                      const std::string &it) {
  std::string expr;
  for (const auto &[var, coefficient] : tile_base_terms(bg, op, tile_dims, it)) {
    expr += (expr.empty() ? "" : " + ") + var + " * " + std::to_string(coefficient);
  }
  return expr.empty() ? "0" : grouped(expr);
}

int64_t tile_base_granule(const BlockGraph &bg, const Operator &op, const Dims &tile_dims) {
  int64_t granule = 0;
  for (const auto &term : tile_base_terms(bg, op, tile_dims, "it")) granule = std::gcd(granule, term.second);
  return granule;
}

const char *element_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return "yr_f16";
    case DType::kBFloat16: return "yr_bf16";
    case DType::kFloat32: return "float";
  }
  return "float";
}

namespace {

void emit_unary(Printer &p, const LoopNest &loop, const Operator &op, const Ref &x, const Ref &o) {
  loop({num_elements(o.dims)}, "e", [&](const std::vector<std::string> &v) {
    p.line("const float v = yr_ld(" + x.ptr + " + " + v[0] + ");");
    p.line("yr_st(" + o.ptr + " + " + v[0] + ", " + unary_expr(op.kind, op.attributes, "v") + ");");
  });
}

void emit_binary(Printer &p, const LoopNest &loop, OpKind kind, const Ref &a, const Ref &b,
                 const Ref &o) {
  if (a.dims == o.dims && b.dims == o.dims) {  // no broadcast: one flat loop, no index arithmetic
    loop({num_elements(o.dims)}, "e", [&](const std::vector<std::string> &v) {
      p.line("yr_st(" + o.ptr + " + " + v[0] + ", " +
             binary_expr(kind, "yr_ld(" + a.ptr + " + " + v[0] + ")", "yr_ld(" + b.ptr + " + " + v[0] + ")") +
             ");");
    });
    return;
  }
  const Dims sa = broadcast_strides(a.dims, o.dims), sb = broadcast_strides(b.dims, o.dims);
  const Dims so = row_major_strides(o.dims);
  loop(o.dims, "i", [&](const std::vector<std::string> &v) {
    p.line("yr_st(" + o.ptr + " + " + index_expr(v, so) + ", " +
           binary_expr(kind, "yr_ld(" + a.ptr + " + " + index_expr(v, sa) + ")",
                       "yr_ld(" + b.ptr + " + " + index_expr(v, sb) + ")") +
           ");");
  });
}

void emit_reduce(Printer &p, const LoopNest &loop, const Operator &op, const Ref &x, const Ref &o) {
  const AxisView v = axis_view(x.dims, static_cast<size_t>(op.attributes.dim));
  const bool is_max = op.kind == OpKind::kReductionMax;
  loop({v.outer, v.inner}, "r", [&](const std::vector<std::string> &r) {
    p.line(std::string("float acc = ") + (is_max ? "-INFINITY" : "0.0f") + ";");
    const std::string value = "yr_ld(" + x.ptr + " + (" + r[0] + " * " + std::to_string(v.extent) +
                              " + e) * " + std::to_string(v.inner) + " + " + r[1] + ")";
    p.line("for (int64_t e = 0; e < " + std::to_string(v.extent) + "; ++e) " +
           (is_max ? "acc = yr_max(acc, " + value + ");" : "acc += " + value + ";"));
    p.line("yr_st(" + o.ptr + " + " + r[0] + " * " + std::to_string(v.inner) + " + " + r[1] + ", acc);");
  });
}

void emit_rms_norm(Printer &p, const LoopNest &loop, const Operator &op, const std::vector<Ref> &in,
                   const Ref &o) {
  const Ref &x = in[0];
  int64_t cols = 1;
  for (size_t d = x.dims.size() - op.attributes.sizes.size(); d < x.dims.size(); ++d) cols *= x.dims[d];
  const int64_t rows = num_elements(x.dims) / cols;
  const std::string c = std::to_string(cols);
  loop({rows}, "r", [&](const std::vector<std::string> &r) {
    p.line("const auto *row = " + x.ptr + " + " + r[0] + " * " + c + ";");
    p.line("auto *out_row = " + o.ptr + " + " + r[0] + " * " + c + ";");
    p.line("float squares = 0.0f;");
    p.line("for (int64_t c = 0; c < " + c + "; ++c) { const float v = yr_ld(row + c); squares += v * v; }");
    p.line("const float inv = 1.0f / yr_sqrt(squares / " + literal(static_cast<double>(cols)) + " + " +
           literal(op.attributes.eps) + ");");
    const std::string weight = op.attributes.has_weight ? " * yr_ld(" + in[1].ptr + " + c)" : std::string();
    p.line("for (int64_t c = 0; c < " + c + "; ++c) yr_st(out_row + c, yr_ld(row + c) * inv" + weight + ");");
  });
}

void emit_concat(Printer &p, const LoopNest &loop, const Operator &op, const Ref &a, const Ref &b,
                 const Ref &o) {
  const auto dim = static_cast<size_t>(op.attributes.dim);
  const Dims so = row_major_strides(o.dims), sa = row_major_strides(a.dims), sb = row_major_strides(b.dims);
  loop(o.dims, "i", [&](const std::vector<std::string> &v) {
    std::vector<std::string> vb = v;
    vb[dim] = "(" + v[dim] + " - " + std::to_string(a.dims[dim]) + ")";
    p.line("yr_st(" + o.ptr + " + " + index_expr(v, so) + ", " + v[dim] + " < " +
           std::to_string(a.dims[dim]) + " ? yr_ld(" + a.ptr + " + " + index_expr(v, sa) +
           ") : yr_ld(" + b.ptr + " + " + index_expr(vb, sb) + "));");
  });
}

void emit_split(Printer &p, const LoopNest &loop, const Operator &op, const Ref &x,
                const std::vector<Ref> &parts) {
  const auto dim = static_cast<size_t>(op.attributes.dim);
  const Dims sx = row_major_strides(x.dims);
  int64_t start = 0;
  for (const Ref &part : parts) {
    const Dims sp = row_major_strides(part.dims);
    loop(part.dims, "i", [&](const std::vector<std::string> &v) {
      std::vector<std::string> vx = v;
      vx[dim] = "(" + v[dim] + " + " + std::to_string(start) + ")";
      p.line("yr_st(" + part.ptr + " + " + index_expr(v, sp) + ", yr_ld(" + x.ptr + " + " +
             index_expr(vx, sx) + "));");
    });
    start += part.dims[dim];
  }
}

}  // namespace

bool emit_portable_operator(Printer &p, const LoopNest &loop, const Operator &op,
                            const std::vector<Ref> &in, const std::vector<Ref> &out) {
  if (is_unary(op.kind)) {
    emit_unary(p, loop, op, in[0], out[0]);
  } else if (is_binary(op.kind)) {
    emit_binary(p, loop, op.kind, in[0], in[1], out[0]);
  } else if (op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax) {
    emit_reduce(p, loop, op, in[0], out[0]);
  } else if (op.kind == OpKind::kRmsNorm) {
    emit_rms_norm(p, loop, op, in, out[0]);
  } else if (op.kind == OpKind::kConcat) {
    emit_concat(p, loop, op, in[0], in[1], out[0]);
  } else if (op.kind == OpKind::kSplit) {
    emit_split(p, loop, op, in[0], out);
  } else {
    return false;
  }
  return true;
}

AxisView axis_view(const Dims &dims, size_t dim) {
  AxisView v;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d < dim) v.outer *= dims[d];
    if (d == dim) v.extent = dims[d];
    if (d > dim) v.inner *= dims[d];
  }
  return v;
}

}  // namespace yirage::codegen
