// The arithmetic of the reference executor: IEEE float64. The interpreter (interpreter.hpp) is
// written once over an "arithmetic" — a type with the members below — and run with this one to
// define what a graph means, and with verify/field_arithmetic.hpp to fingerprint it.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "ir/operator.hpp"
#include "util/error.hpp"

namespace yirage::reference {

struct Float64Arithmetic {
  using Value = double;

  Value constant(double c) const { return c; }
  Value zero() const { return 0.0; }
  Value max_identity() const { return -INFINITY; }  // identity of max
  Value add(Value a, Value b) const { return a + b; }
  Value sub(Value a, Value b) const { return a - b; }
  Value mul(Value a, Value b) const { return a * b; }
  Value div(Value a, Value b) const { return a / b; }
  Value sqrt(Value a) const { return std::sqrt(a); }
  Value exp(Value a) const { return std::exp(a); }
  // NaN-propagating, unlike std::max.
  Value max(Value a, Value b) const { return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b); }

  Value unary(OpKind kind, const OpAttributes &attributes, Value x) const {
    switch (kind) {
      case OpKind::kExp: return std::exp(x);
      case OpKind::kSilu: return x * sigmoid(x);
      case OpKind::kGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
      case OpKind::kRelu: return x > 0 ? x : (std::isnan(x) ? x : 0.0);
      case OpKind::kSqrt: return std::sqrt(x);
      case OpKind::kSquare: return x * x;
      case OpKind::kSigmoid: return sigmoid(x);
      case OpKind::kLog: return std::log(x);
      case OpKind::kNeg: return -x;
      case OpKind::kClamp: return std::isnan(x) ? x : std::min(std::max(x, attributes.lo), attributes.hi);
      case OpKind::kMulScalar: return x * attributes.scalar;
      default: break;
    }
    throw Error(ErrorCode::kInternal, std::string("float64: not a unary op: ") + op_name(kind));
  }

  Value binary(OpKind kind, Value a, Value b) const {
    switch (kind) {
      case OpKind::kAdd: return a + b;
      case OpKind::kSub: return a - b;
      case OpKind::kMul: return a * b;
      case OpKind::kDiv: return a / b;
      case OpKind::kPow: return std::pow(a, b);
      case OpKind::kMax: return max(a, b);
      default: break;
    }
    throw Error(ErrorCode::kInternal, std::string("float64: not a binary op: ") + op_name(kind));
  }

 private:
  static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
};

}  // namespace yirage::reference
