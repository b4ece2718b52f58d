#include "codegen/source_common.hpp"

#include <cmath>
#include <cstdio>

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

std::string index_expr(const std::vector<std::string> &vars, const Dims &strides) {
  std::string expr;
  for (size_t d = 0; d < vars.size(); ++d) {
    if (strides[d] == 0) continue;
    if (!expr.empty()) expr += " + ";
    expr += strides[d] == 1 ? vars[d] : vars[d] + " * " + std::to_string(strides[d]);
  }
  return expr.empty() ? "0" : expr;
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
