#include "ir/operator.hpp"

namespace yirage {

const char *op_name(OpKind kind) {
  switch (kind) {
    case OpKind::kInput: return "input";
    case OpKind::kMatmul: return "matmul";
    case OpKind::kExp: return "exp";
    case OpKind::kSilu: return "silu";
    case OpKind::kGelu: return "gelu";
    case OpKind::kRelu: return "relu";
    case OpKind::kSqrt: return "sqrt";
    case OpKind::kSquare: return "square";
    case OpKind::kSigmoid: return "sigmoid";
    case OpKind::kLog: return "log";
    case OpKind::kNeg: return "neg";
    case OpKind::kClamp: return "clamp";
    case OpKind::kMulScalar: return "mul_scalar";
    case OpKind::kAdd: return "add";
    case OpKind::kSub: return "sub";
    case OpKind::kMul: return "mul";
    case OpKind::kDiv: return "div";
    case OpKind::kPow: return "pow";
    case OpKind::kMax: return "max";
    case OpKind::kReduction: return "reduction";
    case OpKind::kReductionMax: return "reduction_max";
    case OpKind::kRmsNorm: return "rms_norm";
    case OpKind::kConcat: return "concat";
    case OpKind::kSplit: return "split";
    case OpKind::kReshape: return "reshape";
    case OpKind::kPermute: return "permute";
    case OpKind::kCustomized: return "customized";
    case OpKind::kInputIterator: return "input_iterator";
    case OpKind::kOutputSaver: return "output_saver";
    case OpKind::kAccumSum: return "accum_sum";
    case OpKind::kAccumReduceSum: return "accum_reduce_sum";
    case OpKind::kAccumReduceMean: return "accum_reduce_mean";
    case OpKind::kAccumReduceRms: return "accum_reduce_rms";
    case OpKind::kAccumMax: return "accum_max";
    case OpKind::kAccumRescale: return "accum_rescale";
    case OpKind::kAccumSumToDimx: return "accum_sum_todimx";
  }
  return "unknown";
}

bool is_unary(OpKind kind) {
  return static_cast<int32_t>(kind) >= static_cast<int32_t>(OpKind::kExp) &&
         static_cast<int32_t>(kind) <= static_cast<int32_t>(OpKind::kMulScalar);
}

bool is_binary(OpKind kind) {
  return static_cast<int32_t>(kind) >= static_cast<int32_t>(OpKind::kAdd) &&
         static_cast<int32_t>(kind) <= static_cast<int32_t>(OpKind::kMax);
}

bool is_accumulator(OpKind kind) {
  return static_cast<int32_t>(kind) >= static_cast<int32_t>(OpKind::kAccumSum) &&
         static_cast<int32_t>(kind) <= static_cast<int32_t>(OpKind::kAccumSumToDimx);
}

bool is_view(OpKind kind) {
  return kind == OpKind::kReshape || kind == OpKind::kPermute;
}

}  // namespace yirage
