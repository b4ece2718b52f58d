// A transformer decoder layer at decode (one token, batch 1), Qwen3-0.6B-shaped by default:
// hidden 1024, 16 query heads and 8 key/value heads of 128, intermediate 3072, T = 4096 cached
// keys and values. Written with kernel-level operators only:
//
//   n = rms_norm(x) ⊙ w_in                                  (the input norm, with weights)
//   [q, k, v] = n · Wqkv                                     (one projection, split in three)
//   q = rope(rms_norm(q per head) ⊙ w_q) / √128,  k = rope(rms_norm(k per head) ⊙ w_k)
//                                                            (Qwen3's per-head q/k norms)
//   rope(y) = y · M                                          (M = diag(cos) + R · diag(sin) for the
//                                                             token's position: rope_graphs.hpp)
//   attention of each query head over its key/value head's T cached keys and this token's own:
//     E = exp(q · K),  e = exp(q · k),  a = (E · V + e ⊙ v) / (Σ E + e)
//   h = x + a · Wo;   out = h + (silu(m · Wg) ⊙ (m · Wu)) · Wd   with m = rms_norm(h) ⊙ w_post
//
// The softmax is over the T + 1 keys without a max shift, as the gqa benchmark writes it; the
// token's own key and value enter as a separate term, so the cache is read where it is (no
// concatenation). Outputs: out [1, hidden], and this token's k and v ([kv_heads, 1, head_dim],
// after RoPE) for the caller to append to its cache.
#pragma once

#include "ir/kernel_graph.hpp"

namespace yirage::bench {

struct DecoderLayerShape {
  int64_t hidden = 1024, query_heads = 16, kv_heads = 8, head_dim = 128, intermediate = 3072, cached = 4096;
  double eps = 1e-6;
};

// Inputs, in order: x [1, hidden], w_in [hidden], Wqkv [hidden, (query_heads + 2 · kv_heads) ·
// head_dim] (the query heads' columns, then the keys', then the values'), w_q [head_dim],
// w_k [head_dim], M [head_dim, head_dim], K [kv_heads, head_dim, cached],
// V [kv_heads, cached, head_dim], Wo [query_heads · head_dim, hidden], w_post [hidden],
// Wg [hidden, intermediate], Wu [hidden, intermediate], Wd [intermediate, hidden].
KernelGraph build_decoder_layer(DType dtype, const DecoderLayerShape &shape = {});

// The same operators at small sizes, quick to fingerprint (tests).
inline DecoderLayerShape small_decoder_layer_shape() {
  DecoderLayerShape shape;
  shape.hidden = 64;
  shape.query_heads = 4;
  shape.kv_heads = 2;
  shape.head_dim = 16;
  shape.intermediate = 128;
  shape.cached = 64;
  return shape;
}

}  // namespace yirage::bench
