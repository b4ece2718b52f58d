// The kernel graph: a DAG of kernel-level operators over tensors with static shapes.
//
// Tensors are numbered densely in creation order, and operators are stored in creation order,
// which is therefore a topological order. Every builder validates its operands first and throws
// yirage::Error (kInvalidArgument) with a message naming the operator and the offending shapes;
// a builder that throws leaves the graph exactly as it was.
#pragma once

#include <optional>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/operator.hpp"
#include "ir/shape.hpp"

namespace yirage {

using TensorId = int32_t;

struct Tensor {
  Dims dims;
  DType dtype;
  int32_t producer;  // index into operators()
};

class KernelGraph {
 public:
  TensorId new_input(const Dims &dims, DType dtype);
  TensorId matmul(TensorId a, TensorId b);
  // exp, silu, gelu, relu, sqrt, square, sigmoid, log, neg.
  TensorId unary(OpKind kind, TensorId x);
  TensorId clamp(TensorId x, double lo, double hi);
  TensorId mul_scalar(TensorId x, double scalar);
  // add, sub, mul, div, pow, max.
  TensorId binary(OpKind kind, TensorId a, TensorId b);
  // kReduction (sum) or kReductionMax over `dim` (may be negative); the dim becomes 1.
  TensorId reduction(OpKind kind, TensorId x, int64_t dim);
  TensorId rms_norm(TensorId x, const Dims &normalized_shape, double eps,
                    std::optional<TensorId> weight);
  // Recorded as reduction_max, sub, exp, reduction, div; returns the div's result.
  TensorId softmax(TensorId x, int64_t dim);
  TensorId concat(TensorId a, TensorId b, int64_t dim);
  std::vector<TensorId> split(TensorId x, int64_t dim, const Dims &sizes);
  void mark_output(TensorId x);

  // A point to return to: rollback() removes everything built after checkpoint() was taken.
  // The capi layer uses this to undo a build when it cannot create the new tensors' handles.
  struct Checkpoint {
    size_t tensors, operators, inputs, outputs;
  };
  Checkpoint checkpoint() const;
  void rollback(const Checkpoint &checkpoint) noexcept;

  const Tensor &tensor(TensorId id) const { return tensors_.at(static_cast<size_t>(id)); }
  size_t num_tensors() const { return tensors_.size(); }
  const std::vector<Operator> &operators() const { return operators_; }
  const std::vector<TensorId> &inputs() const { return inputs_; }
  const std::vector<TensorId> &outputs() const { return outputs_; }

 private:
  class Transaction;

  // Appends an operator producing tensors of the given shapes, all of dtype `dtype`.
  std::vector<TensorId> append(OpKind kind, std::vector<TensorId> inputs, OpAttributes attributes,
                               const std::vector<Dims> &output_dims, DType dtype);
  const Tensor &checked(const char *op, const char *role, TensorId id) const;

  std::vector<Tensor> tensors_;
  std::vector<Operator> operators_;
  std::vector<TensorId> inputs_;
  std::vector<TensorId> outputs_;
};

}  // namespace yirage
