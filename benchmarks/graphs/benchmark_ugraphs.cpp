#include "benchmark_ugraphs.hpp"

#include <memory>

#include "ir/block_graph.hpp"
#include "ir/rebuild.hpp"
#include "util/error.hpp"

namespace yirage::bench {

namespace {

constexpr GridMap kX0 = {0, -1, -1};  // grid x splits dim 0
constexpr GridMap kX1 = {1, -1, -1};  // grid x splits dim 1
constexpr GridMap kX0Y1 = {0, 1, -1};

BlockGraphConfig config(int64_t gx, int64_t gy, int64_t forloop) {
  BlockGraphConfig c;
  c.grid = {gx, gy, 1};
  c.block_threads = 128;
  c.forloop_range = forloop;
  return c;
}

// Attention over [2b, 256, 64] queries and 4096 keys: O = (E / Σ E) · V with E = exp(Q·K).
KernelGraph unfused_attention(int64_t b, DType dtype, int64_t scale, bool normalize_q) {
  const int64_t heads = 2 * b, rows = 256 / scale, keys = 4096 / scale;
  KernelGraph g;
  TensorId q = g.new_input({heads, rows, 64}, dtype);
  const TensorId k = g.new_input({heads, 64, keys}, dtype);
  const TensorId v = g.new_input({heads, keys, 64}, dtype);
  if (normalize_q) q = g.rms_norm(q, {64}, 0.0, std::nullopt);
  const TensorId e = g.unary(OpKind::kExp, g.matmul(q, k));
  const TensorId p = g.binary(OpKind::kDiv, e, g.reduction(OpKind::kReduction, e, 2));
  g.mark_output(g.matmul(p, v));
  return g;
}

// Flash-attention style: blocks over (head, 16 groups of query rows), the loop over 16 key tiles;
// Σ E·V and Σ E accumulate, one division after the loop.
KernelGraph fused_attention(int64_t b, DType dtype, int64_t scale, bool normalize_q) {
  const int64_t heads = 2 * b, rows = 256 / scale, keys = 4096 / scale;
  KernelGraph g;
  const TensorId q = g.new_input({heads, rows, 64}, dtype);
  const TensorId k = g.new_input({heads, 64, keys}, dtype);
  const TensorId v = g.new_input({heads, keys, 64}, dtype);
  auto bg = std::make_shared<BlockGraph>(config(heads, 16, 16));
  TensorId qt = bg->new_input({heads, rows, 64}, dtype, kX0Y1, -1);
  const TensorId kt = bg->new_input({heads, 64, keys}, dtype, kX0, 2);
  const TensorId vt = bg->new_input({heads, keys, 64}, dtype, kX0, 1);
  if (normalize_q) qt = bg->rms_norm(qt, {64}, 0.0, std::nullopt);
  const TensorId e = bg->unary(OpKind::kExp, bg->matmul(qt, kt));
  const TensorId ev = bg->accumulate(OpKind::kAccumSum, bg->matmul(e, vt));
  const TensorId sum = bg->accumulate(OpKind::kAccumReduceSum, e);
  bg->new_output(bg->binary(OpKind::kDiv, ev, sum), kX0Y1, -1);
  g.mark_output(g.customized({q, k, v}, bg)[0]);
  return g;
}

KernelGraph unfused_rmsnorm_linear(int64_t b, DType dtype, int64_t scale) {
  const int64_t hidden = 4096 / scale, out = 6144 / scale;
  KernelGraph g;
  const TensorId x = g.new_input({2 * b, hidden}, dtype);
  const TensorId w = g.new_input({hidden, out}, dtype);
  g.mark_output(g.matmul(g.rms_norm(x, {hidden}, 0.0, std::nullopt), w));
  return g;
}

// The norm fused into the matmul: blocks over 64 output columns, the loop over 64-wide hidden
// tiles accumulating X·W and the RMS of X; one division after the loop.
KernelGraph fused_rmsnorm_linear(int64_t b, DType dtype, int64_t scale) {
  const int64_t hidden = 4096 / scale, out = 6144 / scale;
  KernelGraph g;
  const TensorId x = g.new_input({2 * b, hidden}, dtype);
  const TensorId w = g.new_input({hidden, out}, dtype);
  auto bg = std::make_shared<BlockGraph>(config(out / 64, 1, hidden / 64));
  const TensorId xt = bg->new_input({2 * b, hidden}, dtype, kReplicated, 1);
  const TensorId wt = bg->new_input({hidden, out}, dtype, kX1, 0);
  const TensorId xw = bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, wt));
  const TensorId rms = bg->accumulate(OpKind::kAccumReduceRms, xt);
  bg->new_output(bg->binary(OpKind::kDiv, xw, rms), kX1, -1);
  g.mark_output(g.customized({x, w}, bg)[0]);
  return g;
}

KernelGraph unfused_lora(DType dtype, int64_t scale) {
  const int64_t k = 256 / scale, n = 4096 / scale;
  KernelGraph g;
  const TensorId x = g.new_input({16, k}, dtype);
  const TensorId w = g.new_input({k, n}, dtype);
  const TensorId a = g.new_input({k, 16}, dtype);
  const TensorId bm = g.new_input({16, n}, dtype);
  // One builder call per statement: C++ leaves the order of argument evaluation open, and the
  // order operators are recorded in is part of the graph (and of its files).
  const TensorId xw = g.matmul(x, w);
  const TensorId xa = g.matmul(x, a);
  g.mark_output(g.binary(OpKind::kAdd, xw, g.matmul(xa, bm)));
  return g;
}

// Blocks over 64 output columns; the loop over k accumulates X·W and X·A; after the loop
// (X·A)·B is added, B's tile being the same in every iteration.
KernelGraph fused_lora(DType dtype, int64_t scale) {
  const int64_t k = 256 / scale, n = 4096 / scale;
  const int64_t forloop = k >= 64 ? k / 64 : 1;
  KernelGraph g;
  const TensorId x = g.new_input({16, k}, dtype);
  const TensorId w = g.new_input({k, n}, dtype);
  const TensorId a = g.new_input({k, 16}, dtype);
  const TensorId bm = g.new_input({16, n}, dtype);
  auto bg = std::make_shared<BlockGraph>(config(n / 64, 1, forloop));
  const TensorId xt = bg->new_input({16, k}, dtype, kReplicated, 1);
  const TensorId wt = bg->new_input({k, n}, dtype, kX1, 0);
  const TensorId at = bg->new_input({k, 16}, dtype, kReplicated, 0);
  const TensorId bt = bg->new_input({16, n}, dtype, kX1, -1);
  const TensorId xw = bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, wt));
  const TensorId xa = bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, at));
  bg->new_output(bg->binary(OpKind::kAdd, xw, bg->matmul(xa, bt)), kX1, -1);
  g.mark_output(g.customized({x, w, a, bm}, bg)[0]);
  return g;
}

KernelGraph unfused_gated_mlp(DType dtype, int64_t scale) {
  const int64_t hidden = 4096 / scale;
  KernelGraph g;
  const TensorId x = g.new_input({8, hidden}, dtype);
  const TensorId w1 = g.new_input({hidden, hidden}, dtype);
  const TensorId w2 = g.new_input({hidden, hidden}, dtype);
  const TensorId h1 = g.matmul(x, w1);
  const TensorId h2 = g.matmul(x, w2);
  g.mark_output(g.binary(OpKind::kMul, g.unary(OpKind::kSilu, h1), h2));
  return g;
}

// Blocks over 64 output columns; the loop accumulates both products; silu and the gate after.
KernelGraph fused_gated_mlp(DType dtype, int64_t scale) {
  const int64_t hidden = 4096 / scale;
  KernelGraph g;
  const TensorId x = g.new_input({8, hidden}, dtype);
  const TensorId w1 = g.new_input({hidden, hidden}, dtype);
  const TensorId w2 = g.new_input({hidden, hidden}, dtype);
  auto bg = std::make_shared<BlockGraph>(config(hidden / 64, 1, hidden / 64));
  const TensorId xt = bg->new_input({8, hidden}, dtype, kReplicated, 1);
  const TensorId w1t = bg->new_input({hidden, hidden}, dtype, kX1, 0);
  const TensorId w2t = bg->new_input({hidden, hidden}, dtype, kX1, 0);
  const TensorId h1 = bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, w1t));
  const TensorId h2 = bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, w2t));
  bg->new_output(bg->binary(OpKind::kMul, bg->unary(OpKind::kSilu, h1), h2), kX1, -1);
  g.mark_output(g.customized({x, w1, w2}, bg)[0]);
  return g;
}

// O = rms_norm(X + α ⊙ (rms_norm(H) − X)), row-wise over the hidden dim.
template <class Graph>
TensorId ntrans_body(Graph &g, TensorId h, TensorId x, TensorId alpha, int64_t hidden) {
  const TensorId hn = g.rms_norm(h, {hidden}, 0.0, std::nullopt);
  const TensorId scaled = g.binary(OpKind::kMul, alpha, g.binary(OpKind::kSub, hn, x));
  return g.rms_norm(g.binary(OpKind::kAdd, x, scaled), {hidden}, 0.0, std::nullopt);
}

KernelGraph unfused_ntrans(int64_t b, DType dtype, int64_t scale) {
  const int64_t rows = 8 * b, hidden = 4096 / scale;
  KernelGraph g;
  const TensorId h = g.new_input({rows, hidden}, dtype);
  const TensorId x = g.new_input({rows, hidden}, dtype);
  const TensorId alpha = g.new_input({rows, hidden}, dtype);
  g.mark_output(ntrans_body(g, h, x, alpha, hidden));
  return g;
}

// One block per row holds the whole row: both norms and the update in one pass.
KernelGraph fused_ntrans(int64_t b, DType dtype, int64_t scale) {
  const int64_t rows = 8 * b, hidden = 4096 / scale;
  KernelGraph g;
  const TensorId h = g.new_input({rows, hidden}, dtype);
  const TensorId x = g.new_input({rows, hidden}, dtype);
  const TensorId alpha = g.new_input({rows, hidden}, dtype);
  auto bg = std::make_shared<BlockGraph>(config(rows, 1, 1));
  const TensorId ht = bg->new_input({rows, hidden}, dtype, kX0, -1);
  const TensorId xt = bg->new_input({rows, hidden}, dtype, kX0, -1);
  const TensorId at = bg->new_input({rows, hidden}, dtype, kX0, -1);
  bg->new_output(ntrans_body(*bg, ht, xt, at, hidden), kX0, -1);
  g.mark_output(g.customized({h, x, alpha}, bg)[0]);
  return g;
}

void check_request(const std::string &name, int64_t b, int64_t scale) {
  if (scale < 1 || scale > 16 || (scale & (scale - 1)) != 0 || b < 1) {
    invalid_argument("benchmark " + name + ": scale must be a power of two in 1..16 and b >= 1");
  }
}

}  // namespace

KernelGraph build_block_reductions(bool fused, DType dtype) {
  const Dims dims = {6, 5, 37};
  auto body = [](auto &g, TensorId x, TensorId w) {
    const TensorId normed = g.rms_norm(x, {37}, 1e-5, w);
    const TensorId row_max = g.reduction(OpKind::kReductionMax, x, 2);
    // (x − max)²: an elementwise chain with a broadcast operand, which CUDA µGraph code
    // computes in one pass (the difference never stored).
    const TensorId spread = g.unary(OpKind::kSquare, g.binary(OpKind::kSub, x, row_max));
    return std::vector<TensorId>{g.reduction(OpKind::kReduction, normed, 1), row_max, spread};
  };
  KernelGraph g;
  const TensorId x = g.new_input(dims, dtype), w = g.new_input({37}, dtype);
  if (!fused) {
    for (TensorId out : body(g, x, w)) g.mark_output(out);
    return g;
  }
  auto bg = std::make_shared<BlockGraph>(config(3, 1, 1));
  const TensorId xt = bg->new_input(dims, dtype, kX0, -1);
  const TensorId wt = bg->new_input({37}, dtype, {-1, -1, -1}, -1);
  for (TensorId out : body(*bg, xt, wt)) bg->new_output(out, kX0, -1);
  for (TensorId out : g.customized({x, w}, bg)) g.mark_output(out);
  return g;
}

KernelGraph build_row_chain(bool fused, DType dtype) {
  const Dims dims = {6, 3, 256};
  auto body = [](auto &g, TensorId x, TensorId y) {
    const TensorId normed = g.rms_norm(x, {256}, 1e-5, std::nullopt);
    const TensorId row_max = g.reduction(OpKind::kReductionMax, y, 2);
    const TensorId row_sum = g.reduction(OpKind::kReduction, x, 2);
    const TensorId weights = g.unary(OpKind::kExp, g.binary(OpKind::kSub, y, row_max));
    const TensorId shift = g.mul_scalar(g.binary(OpKind::kAdd, row_sum, row_max), 0.01);
    const TensorId mixed = g.binary(OpKind::kAdd, g.binary(OpKind::kMul, normed, weights), shift);
    return std::vector<TensorId>{g.rms_norm(mixed, {256}, 0, std::nullopt), weights};
  };
  KernelGraph g;
  const TensorId x = g.new_input(dims, dtype), y = g.new_input(dims, dtype);
  if (!fused) {
    for (TensorId out : body(g, x, y)) g.mark_output(out);
    return g;
  }
  auto bg = std::make_shared<BlockGraph>(config(3, 1, 1));
  const TensorId xt = bg->new_input(dims, dtype, kX0, -1);
  const TensorId yt = bg->new_input(dims, dtype, kX0, -1);
  for (TensorId out : body(*bg, xt, yt)) bg->new_output(out, kX0, -1);
  for (TensorId out : g.customized({x, y}, bg)) g.mark_output(out);
  return g;
}

KernelGraph build_weighted_norm_product(bool fused, DType dtype, int64_t rows) {
  constexpr double kEps = 1e-5;
  KernelGraph g;
  const TensorId x = g.new_input({rows, 256}, dtype), w = g.new_input({256}, dtype);
  const TensorId wp = g.new_input({256, 96}, dtype);
  if (!fused) {
    g.mark_output(g.matmul(g.rms_norm(x, {256}, kEps, w), wp));
    return g;
  }
  auto bg = std::make_shared<BlockGraph>(config(3, 1, 8));
  const TensorId xt = bg->new_input({rows, 256}, dtype, kReplicated, 1);
  const TensorId wt = bg->new_input({1, 256}, dtype, kReplicated, 1);
  const TensorId pt = bg->new_input({256, 96}, dtype, kX1, 0);
  const TensorId product = bg->accumulate(OpKind::kAccumSum, bg->matmul(bg->binary(OpKind::kMul, xt, wt), pt));
  const TensorId rms = bg->accumulate(OpKind::kAccumReduceRms, xt, kEps);
  bg->new_output(bg->binary(OpKind::kDiv, product, rms), kX1, -1);
  g.mark_output(g.customized({x, g.reshape(w, {1, 256}), wp}, bg)[0]);
  return g;
}

KernelGraph build_sum_to_dimx(bool fused, DType dtype) {
  KernelGraph g;
  const TensorId a = g.new_input({6, 5, 160}, dtype), b = g.new_input({6, 5, 4}, dtype);
  if (!fused) {
    const std::vector<TensorId> slices = g.split(a, 2, {40, 40, 40, 40});
    TensorId sum = slices[0];
    for (size_t k = 1; k < slices.size(); ++k) sum = g.binary(OpKind::kAdd, sum, slices[k]);
    g.mark_output(g.binary(OpKind::kAdd, sum, g.reduction(OpKind::kReduction, b, 2)));
    return g;
  }
  auto bg = std::make_shared<BlockGraph>(config(3, 1, 2));
  const TensorId at = bg->new_input({6, 5, 160}, dtype, kX0, 2);
  const TensorId bt = bg->new_input({6, 5, 4}, dtype, kX0, 2);
  const TensorId sum = bg->accumulate_to_dimx(at, 40);
  bg->new_output(bg->binary(OpKind::kAdd, sum, bg->accumulate(OpKind::kAccumReduceSum, bt)), kX0, -1);
  g.mark_output(g.customized({a, b}, bg)[0]);
  return g;
}

KernelGraph build_ugraph_chain(bool fused, DType dtype, bool gate) {
  KernelGraph g;
  const TensorId x = g.new_input({8, 256}, dtype), w1 = g.new_input({256, 256}, dtype);
  const TensorId w2 = g.new_input({256, 128}, dtype), b = g.new_input({8, 128}, dtype);
  if (!fused) {
    const TensorId y = g.matmul(g.rms_norm(x, {256}, 0.0, std::nullopt), w1);
    const TensorId z = g.matmul(y, w2);
    if (gate) g.mark_output(g.binary(OpKind::kMul, g.unary(OpKind::kSilu, z), b));
    g.mark_output(z);
    return g;
  }
  auto norm = std::make_shared<BlockGraph>(config(8, 1, 4));
  const TensorId xt = norm->new_input({8, 256}, dtype, kReplicated, 1);
  const TensorId w1t = norm->new_input({256, 256}, dtype, kX1, 0);
  const TensorId xw = norm->accumulate(OpKind::kAccumSum, norm->matmul(xt, w1t));
  norm->new_output(norm->binary(OpKind::kDiv, xw, norm->accumulate(OpKind::kAccumReduceRms, xt)), kX1, -1);
  const TensorId y = g.customized({x, w1}, norm)[0];
  auto product = std::make_shared<BlockGraph>(config(4, 1, 4));
  const TensorId yt = product->new_input({8, 256}, dtype, kReplicated, 1);
  const TensorId w2t = product->new_input({256, 128}, dtype, kX1, 0);
  product->new_output(product->accumulate(OpKind::kAccumSum, product->matmul(yt, w2t)), kX1, -1);
  const TensorId z = g.customized({y, w2}, product)[0];
  if (gate) {
    auto gating = std::make_shared<BlockGraph>(config(2, 2, 1));
    const TensorId zt = gating->new_input({8, 128}, dtype, kX0Y1, -1);
    const TensorId bt = gating->new_input({8, 128}, dtype, kX0Y1, -1);
    gating->new_output(gating->binary(OpKind::kMul, gating->unary(OpKind::kSilu, zt), bt), kX0Y1, -1);
    g.mark_output(g.customized({z, b}, gating)[0]);
  }
  g.mark_output(z);
  return g;
}

const std::vector<std::string> &benchmark_names() {
  static const std::vector<std::string> names = {"gqa", "qknorm", "rmsnorm_linear", "lora", "gated_mlp", "ntrans"};
  return names;
}

bool takes_batch(const std::string &name) {
  return name != "lora" && name != "gated_mlp";
}

KernelGraph build_unfused(const std::string &name, int64_t b, DType dtype, int64_t scale) {
  check_request(name, b, scale);
  if (name == "gqa") return unfused_attention(b, dtype, scale, false);
  if (name == "qknorm") return unfused_attention(b, dtype, scale, true);
  if (name == "rmsnorm_linear") return unfused_rmsnorm_linear(b, dtype, scale);
  if (name == "lora") return unfused_lora(dtype, scale);
  if (name == "gated_mlp") return unfused_gated_mlp(dtype, scale);
  if (name == "ntrans") return unfused_ntrans(b, dtype, scale);
  throw Error(ErrorCode::kNotFound, "no benchmark named " + name);
}

KernelGraph build_fused(const std::string &name, int64_t b, DType dtype, int64_t scale) {
  check_request(name, b, scale);
  if (name == "gqa") return fused_attention(b, dtype, scale, false);
  if (name == "qknorm") return fused_attention(b, dtype, scale, true);
  if (name == "rmsnorm_linear") return fused_rmsnorm_linear(b, dtype, scale);
  if (name == "lora") return fused_lora(dtype, scale);
  if (name == "gated_mlp") return fused_gated_mlp(dtype, scale);
  if (name == "ntrans") return fused_ntrans(b, dtype, scale);
  throw Error(ErrorCode::kNotFound, "no benchmark named " + name);
}

KernelGraph with_config(const KernelGraph &fused, const BlockGraphConfig &config) {
  const Operator &op = fused.operators().back();
  KernelGraph g;
  std::vector<TensorId> inputs;
  for (TensorId t : fused.inputs()) inputs.push_back(g.new_input(fused.tensor(t).dims, fused.tensor(t).dtype));
  g.mark_output(g.customized(inputs, std::make_shared<BlockGraph>(rebuild(*op.block_graph, config)))[0]);
  return g;
}

}  // namespace yirage::bench
