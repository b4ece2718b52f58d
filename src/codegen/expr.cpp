#include "codegen/expr.hpp"

#include "util/error.hpp"

namespace yirage::codegen {

const char *const kHelpers[9] = {"yr_exp", "yr_erf",     "yr_sqrt", "yr_rsqrt", "yr_log",
                                 "yr_pow", "yr_sigmoid", "yr_max",  "yr_clamp"};

BufferRef global_buffer(const std::string &name, DType element) {
  return {MemorySpace::kGlobal, name, 0, element};
}
BufferRef shared_buffer(int64_t offset) {
  return {MemorySpace::kShared, "", offset, DType::kFloat32};
}

Expr int_const(int64_t v) {
  Expr e;
  e.kind = ExprKind::kInt;
  e.int_value = v;
  return e;
}

Expr float_const(double v) {
  Expr e;
  e.kind = ExprKind::kFloat;
  e.float_value = v;
  return e;
}

Expr var(const std::string &name) {
  Expr e;
  e.kind = ExprKind::kVar;
  e.name = name;
  return e;
}

Expr load(const BufferRef &buffer, Expr index) {
  Expr e;
  e.kind = ExprKind::kLoad;
  e.buffer = buffer;
  e.args.push_back(std::move(index));
  return e;
}

Expr call(const std::string &helper, std::vector<Expr> args) {
  Expr e;
  e.kind = ExprKind::kCall;
  e.name = helper;
  e.args = std::move(args);
  return e;
}

Expr select(Expr condition, Expr if_true, Expr if_false) {
  Expr e;
  e.kind = ExprKind::kSelect;
  e.args = {std::move(condition), std::move(if_true), std::move(if_false)};
  return e;
}

Expr binary(const std::string &op, Expr a, Expr b) {
  Expr e;
  e.kind = ExprKind::kBinary;
  e.name = op;
  e.args = {std::move(a), std::move(b)};
  return e;
}

namespace {

bool is_float(const Expr &e) {
  switch (e.kind) {
    case ExprKind::kFloat:
    case ExprKind::kLoad:
    case ExprKind::kCall: return true;
    case ExprKind::kNeg:
    case ExprKind::kBinary: return is_float(e.args[0]) || is_float(e.args[1 % e.args.size()]);
    case ExprKind::kSelect: return is_float(e.args[1]) || is_float(e.args[2]);
    default: return false;
  }
}

}  // namespace

Expr operator+(Expr a, Expr b) {
  if (a.kind == ExprKind::kInt && b.kind == ExprKind::kInt) return int_const(a.int_value + b.int_value);
  if (a.is_int(0) && !is_float(b)) return b;
  if (b.is_int(0) && !is_float(a)) return a;
  // a + (b + c) as (a + b) + c: integer sums read as one chain, without nested parentheses.
  if (b.kind == ExprKind::kBinary && b.name == "+" && !is_float(a) && !is_float(b)) {
    return (std::move(a) + b.args[0]) + b.args[1];
  }
  return binary("+", std::move(a), std::move(b));
}

Expr operator-(Expr a, Expr b) {
  if (a.kind == ExprKind::kInt && b.kind == ExprKind::kInt) return int_const(a.int_value - b.int_value);
  if (b.is_int(0) && !is_float(a)) return a;
  return binary("-", std::move(a), std::move(b));
}

Expr operator*(Expr a, Expr b) {
  if (a.kind == ExprKind::kInt && b.kind == ExprKind::kInt) return int_const(a.int_value * b.int_value);
  if ((a.is_int(0) && !is_float(b)) || (b.is_int(0) && !is_float(a))) return int_const(0);
  if (a.is_int(1) && !is_float(b)) return b;
  if (b.is_int(1) && !is_float(a)) return a;
  return binary("*", std::move(a), std::move(b));
}

Expr operator/(Expr a, Expr b) {
  if (a.kind == ExprKind::kInt && b.kind == ExprKind::kInt && b.int_value != 0) {
    return int_const(a.int_value / b.int_value);
  }
  if (b.is_int(1) && !is_float(a)) return a;
  return binary("/", std::move(a), std::move(b));
}

Expr operator%(Expr a, Expr b) {
  if (a.kind == ExprKind::kInt && b.kind == ExprKind::kInt && b.int_value != 0) {
    return int_const(a.int_value % b.int_value);
  }
  if (b.is_int(1)) return int_const(0);
  return binary("%", std::move(a), std::move(b));
}

Expr operator-(Expr a) {
  if (a.kind == ExprKind::kInt) return int_const(-a.int_value);
  Expr e;
  e.kind = ExprKind::kNeg;
  e.args.push_back(std::move(a));
  return e;
}

Expr index_of(const std::vector<Expr> &vars, const Dims &strides) {
  Expr sum = int_const(0);
  for (size_t d = 0; d < vars.size(); ++d) {
    if (strides[d] != 0) sum = std::move(sum) + vars[d] * int_const(strides[d]);
  }
  return sum;
}

std::vector<Expr> vars_of(const std::vector<std::string> &names) {
  std::vector<Expr> vars;
  for (const std::string &n : names) vars.push_back(var(n));
  return vars;
}

Expr unary_value(OpKind kind, const OpAttributes &a, const Expr &v) {
  switch (kind) {
    case OpKind::kExp: return call("yr_exp", {v});
    case OpKind::kSilu: return v * call("yr_sigmoid", {v});
    case OpKind::kGelu:
      return float_const(0.5) * v * (float_const(1.0) + call("yr_erf", {v * float_const(0.70710678118654752)}));
    case OpKind::kRelu:
      // NaN stays NaN (a comparison with NaN is false both ways).
      return select(binary(">", v, float_const(0)), v, select(binary("!=", v, v), v, float_const(0)));
    case OpKind::kSqrt: return call("yr_sqrt", {v});
    case OpKind::kSquare: return v * v;
    case OpKind::kSigmoid: return call("yr_sigmoid", {v});
    case OpKind::kLog: return call("yr_log", {v});
    case OpKind::kNeg: return -v;
    case OpKind::kClamp: return call("yr_clamp", {v, float_const(a.lo), float_const(a.hi)});
    case OpKind::kMulScalar: return v * float_const(a.scalar);
    default: break;
  }
  throw Error(ErrorCode::kInternal, std::string("codegen: not unary: ") + op_name(kind));
}

Expr binary_value(OpKind kind, const Expr &a, const Expr &b) {
  switch (kind) {
    case OpKind::kAdd: return a + b;
    case OpKind::kSub: return a - b;
    case OpKind::kMul: return a * b;
    case OpKind::kDiv: return a / b;
    case OpKind::kPow: return call("yr_pow", {a, b});
    case OpKind::kMax: return call("yr_max", {a, b});
    default: break;
  }
  throw Error(ErrorCode::kInternal, std::string("codegen: not binary: ") + op_name(kind));
}

}  // namespace yirage::codegen
