#include "codegen/source_common.hpp"

#include <cmath>
#include <cstdio>
#include <numeric>

#include "ir/block_graph.hpp"
#include "util/error.hpp"

namespace yirage::codegen {



Dims matmul_operand_strides(const Ref &x, const Dims &out) {
  Dims strides = x.element_strides();
  for (size_t d = 0; d + 2 < out.size(); ++d) {
    if (x.dims[d] == 1 && out[d] != 1) strides[d] = 0;
  }
  return strides;
}



std::string unary_expr(OpKind kind, const OpAttributes &a, const std::string &v) {
  return c_text(unary_value(kind, a, var(v)));
}

std::string binary_expr(OpKind kind, const std::string &a, const std::string &b) {
  return c_text(binary_value(kind, var(a), var(b)));
}

std::string tile_base(const BlockGraph &bg, const Operator &op, const Dims &tile_dims, const std::string &it) {
  return c_text(codegen::tile_base(bg, op, tile_dims, var(it)), kOffsetPrecedence);
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

}  // namespace yirage::codegen
