// The part shared by kernel graphs and thread-block graphs: a DAG of operators over tensors with
// static shapes, and the compute-operator builders whose shape rules are the same at both levels
// (matmul, elementwise, reductions, rms_norm, softmax, concat, split).
//
// Tensors are numbered densely in creation order and operators are stored in creation order,
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

// When a thread-block tensor holds its value. Kernel-level tensors are all kInvariant.
enum class LoopPhase : uint8_t {
  kInvariant,     // the same in every for-loop iteration (and after the loop)
  kPerIteration,  // a new value each iteration
  kAfterLoop,     // computed once, after the loop, from accumulators
};

struct Tensor {
  Dims dims;
  DType dtype;
  int32_t producer;  // index into operators()
  LoopPhase phase = LoopPhase::kInvariant;
};

// The bytes of a compact row-major tensor.
size_t tensor_bytes(const Tensor &tensor);

class OperatorGraph {
 public:
  OperatorGraph() = default;
  OperatorGraph(const OperatorGraph &) = default;
  OperatorGraph &operator=(const OperatorGraph &) = default;
  OperatorGraph(OperatorGraph &&) = default;
  OperatorGraph &operator=(OperatorGraph &&) = default;
  virtual ~OperatorGraph() = default;

  TensorId matmul(TensorId a, TensorId b);
  // exp, silu, gelu, relu, sqrt, square, sigmoid, log, neg.
  TensorId unary(OpKind kind, TensorId x);
  TensorId clamp(TensorId x, double lo, double hi);
  TensorId mul_scalar(TensorId x, double scalar);
  // add, sub, mul, div, pow, max.
  TensorId binary(OpKind kind, TensorId a, TensorId b);
  // kReduction (sum) or kReductionMax over `dim` (may be negative); the dim becomes 1.
  TensorId reduction(OpKind kind, TensorId x, int64_t dim);
  TensorId rms_norm(TensorId x, const Dims &normalized_shape, double eps, std::optional<TensorId> weight);
  // Recorded as reduction_max, sub, exp, reduction, div; returns the div's result.
  TensorId softmax(TensorId x, int64_t dim);
  TensorId concat(TensorId a, TensorId b, int64_t dim);
  std::vector<TensorId> split(TensorId x, int64_t dim, const Dims &sizes);

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
  // Kernel graph: graph inputs / marked outputs. Block graph: input-iterator tiles / saved tiles.
  const std::vector<TensorId> &inputs() const { return inputs_; }
  const std::vector<TensorId> &outputs() const { return outputs_; }

 protected:
  // Rolls the graph back to its state at construction unless commit() is called, so that a
  // builder failing halfway (an exception, including bad_alloc) leaves no trace.
  class Transaction {
   public:
    explicit Transaction(OperatorGraph &graph) : graph_(graph), checkpoint_(graph.checkpoint()) {}
    ~Transaction() {
      if (!committed_) graph_.rollback(checkpoint_);
    }
    Transaction(const Transaction &) = delete;
    Transaction &operator=(const Transaction &) = delete;
    void commit() { committed_ = true; }

   private:
    OperatorGraph &graph_;
    Checkpoint checkpoint_;
    bool committed_ = false;
  };

  // Appends an operator producing tensors of the given shapes, all of dtype `dtype`, in `phase`
  // (by default the phase result_phase() derives from the inputs).
  std::vector<TensorId> append(OpKind kind, std::vector<TensorId> inputs, OpAttributes attributes,
                               const std::vector<Dims> &output_dims, DType dtype,
                               std::optional<LoopPhase> phase = std::nullopt);
  const Tensor &checked(const char *op, const char *role, TensorId id) const;

  // The phase of a compute operator's results given its inputs; thread-block graphs refuse to
  // mix per-iteration and after-loop operands.
  virtual LoopPhase result_phase(const char *op, const std::vector<TensorId> &inputs) const;
  // Called before new tensors are added; thread-block graphs check their shared-memory limit.
  virtual void check_new_tensors(const char *op, const std::vector<Dims> &dims, DType dtype, LoopPhase phase) const;

  std::vector<Tensor> tensors_;
  std::vector<Operator> operators_;
  std::vector<TensorId> inputs_;
  std::vector<TensorId> outputs_;
};

}  // namespace yirage
