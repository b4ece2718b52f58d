#include "codegen/c_text.hpp"

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

namespace {

// C's binding strengths, loosest first.
enum Precedence { kTernary = 1, kEquality = 4, kRelational = 5, kAdditive = 6, kMultiplicative = 7, kUnary = 8 };
static_assert(kMultiplicative == kOffsetPrecedence);

int precedence_of(const std::string &op) {
  if (op == "*" || op == "/" || op == "%") return kMultiplicative;
  if (op == "+" || op == "-") return kAdditive;
  if (op == "<" || op == ">" || op == "<=" || op == ">=") return kRelational;
  if (op == "==" || op == "!=") return kEquality;
  throw Error(ErrorCode::kInternal, "codegen: unknown operator " + op);
}

}  // namespace

std::string unary_expr(OpKind kind, const OpAttributes &a, const std::string &v) {
  return c_text(unary_value(kind, a, var(v)));
}

std::string binary_expr(OpKind kind, const std::string &a, const std::string &b) {
  return c_text(binary_value(kind, var(a), var(b)));
}

std::string index_expr(const std::vector<std::string> &vars, const Dims &strides) {
  return c_text(index_of(vars_of(vars), strides), kOffsetPrecedence);
}

std::string c_text(const Expr &e, int outer, const LoadSpelling &load) {
  auto wrap = [outer](int own, const std::string &s) { return own < outer ? "(" + s + ")" : s; };
  auto sub = [&](const Expr &x, int precedence) { return c_text(x, precedence, load); };
  switch (e.kind) {
    case ExprKind::kInt: return e.int_value < 0 ? "(" + std::to_string(e.int_value) + ")" : std::to_string(e.int_value);
    case ExprKind::kFloat: {
      if (e.float_value < 0) return wrap(kUnary, "-" + c_text(float_const(-e.float_value)));
      const std::string s = literal(e.float_value);  // "(1.5f)": without the parentheses
      return s.front() == '(' ? s.substr(1, s.size() - 2) : s;
    }
    case ExprKind::kVar: return e.name;
    case ExprKind::kBinary: {
      const int own = precedence_of(e.name);
      return wrap(own, sub(e.args[0], own) + " " + e.name + " " + sub(e.args[1], own + 1));
    }
    case ExprKind::kNeg: return wrap(kUnary, "-" + sub(e.args[0], kUnary + 1));
    case ExprKind::kSelect:
      return wrap(kTernary, sub(e.args[0], kTernary + 1) + " ? " + sub(e.args[1], kTernary + 1) + " : " +
                                sub(e.args[2], kTernary));
    case ExprKind::kLoad: {
      const std::string index = sub(e.args[0], kOffsetPrecedence);
      return load ? load(e.buffer, index) : "yr_ld(" + e.buffer.name + " + " + index + ")";
    }
    case ExprKind::kCall: {
      std::string s = e.name + "(";
      for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + sub(e.args[i], 0);
      return s + ")";
    }
  }
  throw Error(ErrorCode::kInternal, "codegen: unknown expression");
}

void Printer::nest(const Dims &dims, const std::string &prefix, const std::string &pragma,
                   const std::function<void(const std::vector<std::string> &)> &body) {
  std::vector<std::string> vars;
  for (size_t d = 0; d < dims.size(); ++d) vars.push_back(prefix + std::to_string(d));
  if (!pragma.empty() && !dims.empty()) line(pragma);
  for (size_t d = 0; d < dims.size(); ++d) {
    open("for (int64_t " + vars[d] + " = 0; " + vars[d] + " < " + std::to_string(dims[d]) + "; ++" + vars[d] + ")");
  }
  body(vars);
  for (size_t d = 0; d < dims.size(); ++d) close();
}

const char *element_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return "yr_f16";
    case DType::kBFloat16: return "yr_bf16";
    case DType::kFloat32: return "float";
  }
  return "float";
}

}  // namespace yirage::codegen
