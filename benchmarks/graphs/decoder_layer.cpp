#include "decoder_layer.hpp"

#include <cmath>
#include <vector>

namespace yirage::bench {

KernelGraph build_decoder_layer(DType dtype, const DecoderLayerShape &s) {
  // One builder call per statement: the order they are recorded in is the graph's.
  KernelGraph g;
  const int64_t group = s.query_heads / s.kv_heads, d = s.head_dim;
  const int64_t q_width = s.query_heads * d, kv_width = s.kv_heads * d;
  const TensorId x = g.new_input({1, s.hidden}, dtype);
  const TensorId w_in = g.new_input({s.hidden}, dtype);
  const TensorId wqkv = g.new_input({s.hidden, q_width + 2 * kv_width}, dtype);
  const TensorId w_q = g.new_input({d}, dtype);
  const TensorId w_k = g.new_input({d}, dtype);
  const TensorId m = g.new_input({d, d}, dtype);
  const TensorId k_cache = g.new_input({s.kv_heads, d, s.cached}, dtype);
  const TensorId v_cache = g.new_input({s.kv_heads, s.cached, d}, dtype);
  const TensorId wo = g.new_input({q_width, s.hidden}, dtype);
  const TensorId w_post = g.new_input({s.hidden}, dtype);
  const TensorId wg = g.new_input({s.hidden, s.intermediate}, dtype);
  const TensorId wu = g.new_input({s.hidden, s.intermediate}, dtype);
  const TensorId wd = g.new_input({s.intermediate, s.hidden}, dtype);

  // The input norm and the QKV projection.
  const TensorId n = g.rms_norm(x, {s.hidden}, s.eps, w_in);
  const TensorId qkv = g.matmul(n, wqkv);
  const std::vector<TensorId> parts = g.split(qkv, 1, {q_width, kv_width, kv_width});

  // Per-head norms, RoPE, the query's softmax scale.
  const TensorId q_heads = g.reshape(parts[0], {s.query_heads, d});
  const TensorId q_normed = g.rms_norm(q_heads, {d}, s.eps, w_q);
  const TensorId q_rope = g.matmul(q_normed, m);
  const TensorId q_scaled = g.mul_scalar(q_rope, 1.0 / std::sqrt(static_cast<double>(d)));
  const TensorId q = g.reshape(q_scaled, {s.kv_heads, group, d});
  const TensorId k_heads = g.reshape(parts[1], {s.kv_heads, d});
  const TensorId k_normed = g.rms_norm(k_heads, {d}, s.eps, w_k);
  const TensorId k_rope = g.matmul(k_normed, m);
  const TensorId k_new = g.reshape(k_rope, {s.kv_heads, 1, d});
  const TensorId k_column = g.reshape(k_rope, {s.kv_heads, d, 1});
  const TensorId v_new = g.reshape(parts[2], {s.kv_heads, 1, d});

  // Attention over the cache: Σ exp(q · K) · V and Σ exp(q · K).
  const TensorId scores = g.matmul(q, k_cache);
  const TensorId e_cache = g.unary(OpKind::kExp, scores);
  const TensorId weighted_cache = g.matmul(e_cache, v_cache);
  const TensorId total_cache = g.reduction(OpKind::kReduction, e_cache, 2);
  // The token's own key and value, and the softmax over all T + 1 (no max shift).
  const TensorId score_new = g.matmul(q, k_column);
  const TensorId e_new = g.unary(OpKind::kExp, score_new);
  const TensorId weighted_new = g.binary(OpKind::kMul, e_new, v_new);
  const TensorId weighted = g.binary(OpKind::kAdd, weighted_cache, weighted_new);
  const TensorId total = g.binary(OpKind::kAdd, total_cache, e_new);
  const TensorId heads = g.binary(OpKind::kDiv, weighted, total);

  // The output projection and the residual.
  const TensorId attention = g.reshape(heads, {1, q_width});
  const TensorId projected = g.matmul(attention, wo);
  const TensorId h = g.binary(OpKind::kAdd, x, projected);

  // The MLP and the residual.
  const TensorId post = g.rms_norm(h, {s.hidden}, s.eps, w_post);
  const TensorId gate_in = g.matmul(post, wg);
  const TensorId gate = g.unary(OpKind::kSilu, gate_in);
  const TensorId up = g.matmul(post, wu);
  const TensorId gated = g.binary(OpKind::kMul, gate, up);
  const TensorId down = g.matmul(gated, wd);
  const TensorId out = g.binary(OpKind::kAdd, h, down);
  g.mark_output(out);
  g.mark_output(k_new);
  g.mark_output(v_new);
  return g;
}

}  // namespace yirage::bench
