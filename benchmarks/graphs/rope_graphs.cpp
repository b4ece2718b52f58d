#include "rope_graphs.hpp"

namespace yirage::bench {

namespace {

constexpr int64_t kHeadDim = 128, kQueryHeads = 16, kKvHeads = 8, kHidden = 1024;

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

std::vector<double> rope_rotation(int64_t dim) {
  const int64_t half = dim / 2;
  std::vector<double> r(static_cast<size_t>(dim * dim), 0.0);
  for (int64_t j = 0; j < half; ++j) {
    r[static_cast<size_t>((j + half) * dim + j)] = -1.0;
    r[static_cast<size_t>(j * dim + j + half)] = 1.0;
  }
  return r;
}

}  // namespace yirage::bench
