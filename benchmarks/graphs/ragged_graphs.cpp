#include "ragged_graphs.hpp"

#include <memory>

#include "ir/block_graph.hpp"
#include "util/error.hpp"

namespace yirage::bench {
namespace {

constexpr GridMap kWhole = {-1, -1, -1};

std::shared_ptr<BlockGraph> blocks(int64_t grid, int64_t loop) {
  BlockGraphConfig c;
  c.grid = {grid, 1, 1};
  c.block_threads = 128;
  c.forloop_range = loop;
  return std::make_shared<BlockGraph>(c);
}

}  // namespace

KernelGraph build_online_softmax(int64_t rows, int64_t keys, bool fused, DType dt) {
  KernelGraph g;
  const TensorId q = g.new_input({rows, 8}, dt), k = g.new_input({8, keys}, dt), v = g.new_input({keys, 8}, dt);
  if (!fused) {
    g.mark_output(g.matmul(g.softmax(g.matmul(q, k), -1), v));
    return g;
  }
  auto bg = blocks(2, 4);
  const TensorId qt = bg->new_input({rows, 8}, dt, {0, -1, -1}, -1);
  const TensorId kt = bg->new_input({8, keys}, dt, kWhole, 1);
  const TensorId vt = bg->new_input({keys, 8}, dt, kWhole, 0);
  const TensorId s = bg->matmul(qt, kt);
  const TensorId m = bg->reduction(OpKind::kReductionMax, s, -1);
  const TensorId p = bg->unary(OpKind::kExp, bg->binary(OpKind::kSub, s, m));
  const TensorId o = bg->accumulate_rescale(bg->matmul(p, vt), m);
  const TensorId l = bg->accumulate_rescale(bg->reduction(OpKind::kReduction, p, -1), m);
  bg->new_output(bg->binary(OpKind::kDiv, o, l), {0, -1, -1}, -1);
  g.mark_output(g.customized({q, k, v}, bg)[0]);
  return g;
}

namespace {

KernelGraph norm_product(bool fused, DType dt) {
  KernelGraph g;
  const TensorId x = g.new_input({4, 61}, dt), w = g.new_input({61, 13}, dt);
  if (!fused) {
    g.mark_output(g.matmul(g.rms_norm(x, {61}, 0, std::nullopt), w));
    return g;
  }
  auto bg = blocks(2, 4);
  const TensorId xt = bg->new_input({4, 61}, dt, kWhole, 1);
  const TensorId wt = bg->new_input({61, 13}, dt, {1, -1, -1}, 0);
  const TensorId product = bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, wt));
  const TensorId rms = bg->accumulate(OpKind::kAccumReduceRms, xt);
  bg->new_output(bg->binary(OpKind::kDiv, product, rms), {1, -1, -1}, -1);
  g.mark_output(g.customized({x, w}, bg)[0]);
  return g;
}

KernelGraph row_statistics(bool fused, DType dt) {
  KernelGraph g;
  const TensorId x = g.new_input({7, 61}, dt);
  if (!fused) {
    const TensorId e = g.unary(OpKind::kExp, x);
    const TensorId max = g.reduction(OpKind::kReductionMax, g.unary(OpKind::kNeg, e), 1);
    const TensorId sum = g.reduction(OpKind::kReduction, e, 1);
    const TensorId mean = g.mul_scalar(g.reduction(OpKind::kReduction, x, 1), 1.0 / 61);
    const TensorId squares = g.reduction(OpKind::kReduction, g.unary(OpKind::kSquare, x), 1);
    const TensorId rms = g.unary(OpKind::kSqrt, g.mul_scalar(squares, 1.0 / 61));
    g.mark_output(g.concat(g.concat(max, sum, 1), g.concat(mean, rms, 1), 1));
    return g;
  }
  auto bg = blocks(2, 4);
  const TensorId xt = bg->new_input({7, 61}, dt, {0, -1, -1}, 1);
  const TensorId e = bg->unary(OpKind::kExp, xt);
  const TensorId max =
      bg->reduction(OpKind::kReductionMax, bg->accumulate(OpKind::kAccumMax, bg->unary(OpKind::kNeg, e)), 1);
  const TensorId sum = bg->accumulate(OpKind::kAccumReduceSum, e);
  const TensorId mean = bg->accumulate(OpKind::kAccumReduceMean, xt);
  const TensorId rms = bg->accumulate(OpKind::kAccumReduceRms, xt);
  bg->new_output(bg->concat(bg->concat(max, sum, 1), bg->concat(mean, rms, 1), 1), {0, -1, -1}, -1);
  g.mark_output(g.customized({x}, bg)[0]);
  return g;
}

KernelGraph tiled_exp(bool fused, DType dt) {
  KernelGraph g;
  const TensorId x = g.new_input({5, 30}, dt);
  if (!fused) {
    g.mark_output(g.unary(OpKind::kExp, x));
    return g;
  }
  auto bg = blocks(2, 4);
  const TensorId xt = bg->new_input({5, 30}, dt, {0, -1, -1}, 1);
  bg->new_output(bg->unary(OpKind::kExp, xt), {0, -1, -1}, 1);
  g.mark_output(g.customized({x}, bg)[0]);
  return g;
}

KernelGraph max_and_sum(bool fused, DType dt) {
  KernelGraph g;
  const TensorId x = g.new_input({7, 61}, dt);
  if (!fused) {
    g.mark_output(g.concat(g.reduction(OpKind::kReductionMax, x, 1), g.reduction(OpKind::kReduction, x, 1), 1));
    return g;
  }
  auto bg = blocks(2, 4);
  const TensorId xt = bg->new_input({7, 61}, dt, {0, -1, -1}, 1);
  const TensorId max = bg->reduction(OpKind::kReductionMax, bg->accumulate(OpKind::kAccumMax, xt), 1);
  const TensorId sum = bg->accumulate(OpKind::kAccumReduceSum, xt);
  bg->new_output(bg->concat(max, sum, 1), {0, -1, -1}, -1);
  g.mark_output(g.customized({x}, bg)[0]);
  return g;
}

KernelGraph exp_attention(bool fused, DType dt) {
  KernelGraph g;
  const TensorId q = g.new_input({16, 16}, dt), k = g.new_input({16, 1030}, dt), v = g.new_input({1030, 16}, dt);
  if (!fused) {
    const TensorId e = g.unary(OpKind::kExp, g.matmul(q, k));
    g.mark_output(g.matmul(g.binary(OpKind::kDiv, e, g.reduction(OpKind::kReduction, e, 1)), v));
    return g;
  }
  auto bg = blocks(1, 16);
  const TensorId qt = bg->new_input({16, 16}, dt, kWhole, -1);
  const TensorId kt = bg->new_input({16, 1030}, dt, kWhole, 1);
  const TensorId vt = bg->new_input({1030, 16}, dt, kWhole, 0);
  const TensorId e = bg->unary(OpKind::kExp, bg->matmul(qt, kt));
  const TensorId weighted = bg->accumulate(OpKind::kAccumSum, bg->matmul(e, vt));
  bg->new_output(bg->binary(OpKind::kDiv, weighted, bg->accumulate(OpKind::kAccumReduceSum, e)), kWhole, -1);
  g.mark_output(g.customized({q, k, v}, bg)[0]);
  return g;
}

}  // namespace

const std::vector<std::string> &ragged_names() {
  static const std::vector<std::string> names = {"attention", "norm_product",  "row_statistics",
                                                 "tiled_exp", "exp_attention", "max_and_sum"};
  return names;
}

KernelGraph build_ragged(const std::string &name, bool fused, DType dtype) {
  if (name == "attention") return build_online_softmax(15, 61, fused, dtype);
  if (name == "norm_product") return norm_product(fused, dtype);
  if (name == "row_statistics") return row_statistics(fused, dtype);
  if (name == "tiled_exp") return tiled_exp(fused, dtype);
  if (name == "exp_attention") return exp_attention(fused, dtype);
  if (name == "max_and_sum") return max_and_sum(fused, dtype);
  invalid_argument("build_ragged: no graph named '" + name + "'");
}

}  // namespace yirage::bench
