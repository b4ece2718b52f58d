// The kernel-level operator set (ARCHITECTURE.md §3) and the attributes operators carry.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/shape.hpp"

namespace yirage {

// Values are stored in graph files: append only, never renumber.
enum class OpKind : int32_t {
  kInput = 1,
  kMatmul = 2,
  // Elementwise unary.
  kExp = 10,
  kSilu = 11,
  kGelu = 12,
  kRelu = 13,
  kSqrt = 14,
  kSquare = 15,
  kSigmoid = 16,
  kLog = 17,
  kNeg = 18,
  kClamp = 19,
  kMulScalar = 20,
  // Elementwise binary.
  kAdd = 30,
  kSub = 31,
  kMul = 32,
  kDiv = 33,
  kPow = 34,
  kMax = 35,
  // Reductions and normalization.
  kReduction = 50,
  kReductionMax = 51,
  kRmsNorm = 60,
  // Layout.
  kConcat = 70,
  kSplit = 71,
};

const char *op_name(OpKind kind);
bool is_unary(OpKind kind);   // exp … mul_scalar: one input, same shape out
bool is_binary(OpKind kind);  // add … max: two inputs, broadcast shape out

// Attributes used by some operators; the others leave them at their defaults.
struct OpAttributes {
  int dim = 0;              // reduction, concat, split: the (non-negative) dim acted on
  double scalar = 0;        // mul_scalar
  double lo = 0;            // clamp
  double hi = 0;            // clamp
  double eps = 0;           // rms_norm
  Dims sizes;               // split: part sizes; rms_norm: the normalized (trailing) shape
  bool has_weight = false;  // rms_norm: inputs[1] is the weight

  bool operator==(const OpAttributes &) const = default;
};

struct Operator {
  OpKind kind;
  std::vector<int32_t> inputs;   // tensor ids
  std::vector<int32_t> outputs;  // tensor ids
  OpAttributes attributes;
};

}  // namespace yirage
