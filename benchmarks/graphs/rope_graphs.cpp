#include "rope_graphs.hpp"

namespace yirage::bench {

namespace {

constexpr int64_t kHeadDim = 128, kQueryHeads = 16, kKvHeads = 8, kHidden = 1024, kKeys = 4096;

// x ⊙ cos + (x · R) ⊙ sin; one builder call per statement, as the recorded order is the graph's.
TensorId rope(KernelGraph &g, TensorId x, TensorId cos, TensorId sin, TensorId r) {
  const TensorId rotated = g.matmul(x, r);
  const TensorId x_cos = g.binary(OpKind::kMul, x, cos);
  const TensorId rotated_sin = g.binary(OpKind::kMul, rotated, sin);
  return g.binary(OpKind::kAdd, x_cos, rotated_sin);
}

}  // namespace

KernelGraph build_rope(DType dtype) {
  KernelGraph g;
  const TensorId x = g.new_input({kQueryHeads + kKvHeads, kHeadDim}, dtype);
  const TensorId cos = g.new_input({1, kHeadDim}, dtype);
  const TensorId sin = g.new_input({1, kHeadDim}, dtype);
  const TensorId r = g.new_input({kHeadDim, kHeadDim}, dtype);
  g.mark_output(rope(g, x, cos, sin, r));
  return g;
}

KernelGraph build_rope_q_projection(DType dtype) {
  KernelGraph g;
  const TensorId x = g.new_input({1, 1, kHidden}, dtype);
  const TensorId wq = g.new_input({kQueryHeads, kHidden, kHeadDim}, dtype);
  const TensorId cos = g.new_input({1, 1, kHeadDim}, dtype);
  const TensorId sin = g.new_input({1, 1, kHeadDim}, dtype);
  const TensorId r = g.new_input({1, kHeadDim, kHeadDim}, dtype);
  const TensorId q = g.matmul(x, wq);
  g.mark_output(rope(g, q, cos, sin, r));
  return g;
}

KernelGraph build_rope_q_projection_matrix(DType dtype) {
  KernelGraph g;
  const TensorId x = g.new_input({1, 1, kHidden}, dtype);
  const TensorId wq = g.new_input({kQueryHeads, kHidden, kHeadDim}, dtype);
  const TensorId m = g.new_input({1, kHeadDim, kHeadDim}, dtype);
  g.mark_output(g.matmul(g.matmul(x, wq), m));
  return g;
}

KernelGraph build_rope_attention(DType dtype) {
  KernelGraph g;
  const TensorId q = g.new_input({kKvHeads, kQueryHeads / kKvHeads, kHeadDim}, dtype);
  const TensorId m = g.new_input({1, kHeadDim, kHeadDim}, dtype);
  const TensorId k = g.new_input({kKvHeads, kHeadDim, kKeys}, dtype);
  const TensorId v = g.new_input({kKvHeads, kKeys, kHeadDim}, dtype);
  const TensorId e = g.unary(OpKind::kExp, g.matmul(g.matmul(q, m), k));
  const TensorId p = g.binary(OpKind::kDiv, e, g.reduction(OpKind::kReduction, e, 2));
  g.mark_output(g.matmul(p, v));
  return g;
}

}  // namespace yirage::bench
