#include "ir/operator_graph.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.hpp"

namespace yirage {

size_t tensor_bytes(const Tensor &tensor) {
  return static_cast<size_t>(num_elements(tensor.dims)) * dtype_size(tensor.dtype);
}

namespace {

void check_same_dtype(const char *op, const Tensor &a, const Tensor &b) {
  if (a.dtype != b.dtype) {
    invalid_argument(std::string(op) + ": A is " + dtype_name(a.dtype) + ", B is " + dtype_name(b.dtype) +
                     ": dtypes differ");
  }
}

}  // namespace

OperatorGraph::Checkpoint OperatorGraph::checkpoint() const {
  return {tensors_.size(), operators_.size(), inputs_.size(), outputs_.size()};
}

void OperatorGraph::rollback(const Checkpoint &checkpoint) noexcept {
  // Shrinking erase never allocates, so this cannot fail.
  tensors_.erase(tensors_.begin() + static_cast<ptrdiff_t>(checkpoint.tensors), tensors_.end());
  operators_.erase(operators_.begin() + static_cast<ptrdiff_t>(checkpoint.operators), operators_.end());
  inputs_.erase(inputs_.begin() + static_cast<ptrdiff_t>(checkpoint.inputs), inputs_.end());
  outputs_.erase(outputs_.begin() + static_cast<ptrdiff_t>(checkpoint.outputs), outputs_.end());
}

const Tensor &OperatorGraph::checked(const char *op, const char *role, TensorId id) const {
  if (id < 0 || static_cast<size_t>(id) >= tensors_.size()) {
    invalid_argument(std::string(op) + ": " + role + " is not a tensor of this graph");
  }
  return tensors_[static_cast<size_t>(id)];
}

std::vector<TensorId> OperatorGraph::append(OpKind kind, std::vector<TensorId> inputs, OpAttributes attributes,
                                            const std::vector<Dims> &output_dims, DType dtype,
                                            std::optional<LoopPhase> phase) {
  for (const Dims &dims : output_dims) check_dims(op_name(kind), dims);
  const LoopPhase out_phase = phase ? *phase : result_phase(op_name(kind), inputs);
  check_new_tensors(op_name(kind), output_dims, dtype, out_phase);
  Transaction transaction(*this);
  const auto producer = static_cast<int32_t>(operators_.size());
  Operator op{kind, std::move(inputs), {}, std::move(attributes), nullptr};
  for (const Dims &dims : output_dims) {
    op.outputs.push_back(static_cast<TensorId>(tensors_.size()));
    tensors_.push_back(Tensor{dims, dtype, producer, out_phase});
  }
  operators_.push_back(std::move(op));
  transaction.commit();
  return operators_.back().outputs;
}

LoopPhase OperatorGraph::result_phase(const char *, const std::vector<TensorId> &) const {
  return LoopPhase::kInvariant;
}

void OperatorGraph::check_new_tensors(const char *, const std::vector<Dims> &, DType, LoopPhase) const {}

TensorId OperatorGraph::matmul(TensorId a_id, TensorId b_id) {
  const Tensor &a = checked("matmul", "A", a_id);
  const Tensor &b = checked("matmul", "B", b_id);
  const std::string shapes = "matmul: A is " + to_string(a.dims) + ", B is " + to_string(b.dims) + ": ";
  if (a.dims.size() < 2 || b.dims.size() != a.dims.size()) {
    invalid_argument(shapes + "operands need equal rank of at least 2");
  }
  check_same_dtype("matmul", a, b);
  const size_t rank = a.dims.size();
  const int64_t k_a = a.dims[rank - 1], k_b = b.dims[rank - 2];
  if (k_a != k_b) {
    invalid_argument(shapes + "inner dimensions " + std::to_string(k_a) + " and " + std::to_string(k_b) + " differ");
  }
  Dims out(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a.dims[i] != b.dims[i] && a.dims[i] != 1 && b.dims[i] != 1) {
      invalid_argument(shapes + "batch dim " + std::to_string(i) + " sizes " + std::to_string(a.dims[i]) + " and " +
                       std::to_string(b.dims[i]) + " are neither equal nor 1");
    }
    out[i] = a.dims[i] == 1 ? b.dims[i] : a.dims[i];
  }
  out[rank - 2] = a.dims[rank - 2];
  out[rank - 1] = b.dims[rank - 1];
  return append(OpKind::kMatmul, {a_id, b_id}, {}, {out}, a.dtype)[0];
}

TensorId OperatorGraph::unary(OpKind kind, TensorId x_id) {
  if (!is_unary(kind) || kind == OpKind::kClamp || kind == OpKind::kMulScalar) {
    invalid_argument(std::string("unary: ") + op_name(kind) + " is not a parameterless unary op");
  }
  const Tensor &x = checked(op_name(kind), "X", x_id);
  return append(kind, {x_id}, {}, {x.dims}, x.dtype)[0];
}

TensorId OperatorGraph::clamp(TensorId x_id, double lo, double hi) {
  const Tensor &x = checked("clamp", "X", x_id);
  if (std::isnan(lo) || std::isnan(hi) || lo > hi) {
    invalid_argument("clamp: bounds [" + std::to_string(lo) + ", " + std::to_string(hi) +
                     "] are not an interval (need lo <= hi, neither NaN)");
  }
  OpAttributes attributes;
  attributes.lo = lo;
  attributes.hi = hi;
  return append(OpKind::kClamp, {x_id}, attributes, {x.dims}, x.dtype)[0];
}

TensorId OperatorGraph::mul_scalar(TensorId x_id, double scalar) {
  const Tensor &x = checked("mul_scalar", "X", x_id);
  if (!std::isfinite(scalar)) {
    invalid_argument("mul_scalar: scalar " + std::to_string(scalar) + " is not finite");
  }
  OpAttributes attributes;
  attributes.scalar = scalar;
  return append(OpKind::kMulScalar, {x_id}, attributes, {x.dims}, x.dtype)[0];
}

TensorId OperatorGraph::binary(OpKind kind, TensorId a_id, TensorId b_id) {
  if (!is_binary(kind)) {
    invalid_argument(std::string("binary: ") + op_name(kind) + " is not a binary op");
  }
  const Tensor &a = checked(op_name(kind), "A", a_id);
  const Tensor &b = checked(op_name(kind), "B", b_id);
  const Dims out = broadcast_dims(op_name(kind), a.dims, b.dims);
  check_same_dtype(op_name(kind), a, b);
  return append(kind, {a_id, b_id}, {}, {out}, a.dtype)[0];
}

TensorId OperatorGraph::reduction(OpKind kind, TensorId x_id, int64_t dim) {
  if (kind != OpKind::kReduction && kind != OpKind::kReductionMax) {
    invalid_argument(std::string("reduction: ") + op_name(kind) + " is not a reduction");
  }
  const Tensor &x = checked(op_name(kind), "X", x_id);
  OpAttributes attributes;
  attributes.dim = normalize_dim(op_name(kind), dim, static_cast<int>(x.dims.size()));
  Dims out = x.dims;
  out[static_cast<size_t>(attributes.dim)] = 1;
  return append(kind, {x_id}, attributes, {out}, x.dtype)[0];
}

TensorId OperatorGraph::rms_norm(TensorId x_id, const Dims &normalized_shape, double eps,
                                 std::optional<TensorId> weight_id) {
  const Tensor &x = checked("rms_norm", "X", x_id);
  const size_t n = normalized_shape.size();
  const Dims trailing(x.dims.end() - static_cast<ptrdiff_t>(std::min(n, x.dims.size())), x.dims.end());
  if (n == 0 || n > x.dims.size() || trailing != normalized_shape) {
    invalid_argument("rms_norm: X is " + to_string(x.dims) + ", normalized_shape is " + to_string(normalized_shape) +
                     ": normalized_shape must be non-empty and equal X's trailing dims");
  }
  if (!std::isfinite(eps) || eps < 0) {
    invalid_argument("rms_norm: eps " + std::to_string(eps) + " must be finite and >= 0");
  }
  OpAttributes attributes;
  attributes.sizes = normalized_shape;
  attributes.eps = eps;
  std::vector<TensorId> inputs{x_id};
  if (weight_id) {
    const Tensor &w = checked("rms_norm", "weight", *weight_id);
    if (w.dims != normalized_shape) {
      invalid_argument("rms_norm: weight is " + to_string(w.dims) + ", normalized_shape is " +
                       to_string(normalized_shape) + ": they must be equal");
    }
    if (w.dtype != x.dtype) {
      invalid_argument(std::string("rms_norm: X is ") + dtype_name(x.dtype) + ", weight is " + dtype_name(w.dtype) +
                       ": dtypes differ");
    }
    attributes.has_weight = true;
    inputs.push_back(*weight_id);
  }
  return append(OpKind::kRmsNorm, std::move(inputs), attributes, {x.dims}, x.dtype)[0];
}

TensorId OperatorGraph::softmax(TensorId x_id, int64_t dim) {
  const Tensor &x = checked("softmax", "X", x_id);
  const int d = normalize_dim("softmax", dim, static_cast<int>(x.dims.size()));
  Transaction transaction(*this);
  const TensorId max = reduction(OpKind::kReductionMax, x_id, d);
  const TensorId shifted = binary(OpKind::kSub, x_id, max);
  const TensorId exps = unary(OpKind::kExp, shifted);
  const TensorId sum = reduction(OpKind::kReduction, exps, d);
  const TensorId result = binary(OpKind::kDiv, exps, sum);
  transaction.commit();
  return result;
}

TensorId OperatorGraph::concat(TensorId a_id, TensorId b_id, int64_t dim) {
  const Tensor &a = checked("concat", "A", a_id);
  const Tensor &b = checked("concat", "B", b_id);
  const int d = normalize_dim("concat", dim, static_cast<int>(a.dims.size()));
  bool compatible = a.dims.size() == b.dims.size();
  for (size_t i = 0; compatible && i < a.dims.size(); ++i) {
    compatible = static_cast<int>(i) == d || a.dims[i] == b.dims[i];
  }
  if (!compatible) {
    invalid_argument("concat: A is " + to_string(a.dims) + ", B is " + to_string(b.dims) +
                     ": ranks and every dim except " + std::to_string(d) + " must be equal");
  }
  check_same_dtype("concat", a, b);
  OpAttributes attributes;
  attributes.dim = d;
  Dims out = a.dims;
  out[static_cast<size_t>(d)] += b.dims[static_cast<size_t>(d)];
  return append(OpKind::kConcat, {a_id, b_id}, attributes, {out}, a.dtype)[0];
}

std::vector<TensorId> OperatorGraph::split(TensorId x_id, int64_t dim, const Dims &sizes) {
  const Tensor &x = checked("split", "X", x_id);
  const int d = normalize_dim("split", dim, static_cast<int>(x.dims.size()));
  const int64_t extent = x.dims[static_cast<size_t>(d)];
  int64_t total = 0;
  bool positive = !sizes.empty();
  for (int64_t s : sizes) {
    positive = positive && s >= 1 && s <= extent;
    total += positive ? s : 0;
  }
  if (!positive || total != extent) {
    invalid_argument("split: X is " + to_string(x.dims) + ", sizes " + to_string(sizes) +
                     ": sizes must be >= 1 and sum to " + std::to_string(extent) + " (dim " + std::to_string(d) + ")");
  }
  OpAttributes attributes;
  attributes.dim = d;
  attributes.sizes = sizes;
  std::vector<Dims> outs(sizes.size(), x.dims);
  for (size_t i = 0; i < sizes.size(); ++i) outs[i][static_cast<size_t>(d)] = sizes[i];
  return append(OpKind::kSplit, {x_id}, attributes, outs, x.dtype);
}

}  // namespace yirage
