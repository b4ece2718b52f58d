#include "bench_graphs.h"

#include <string.h>

static const char *const kNames[BENCH_GRAPH_COUNT] = {"gqa", "qknorm", "rmsnorm_linear", "lora", "gated_mlp", "ntrans"};

const char *bench_graph_name(size_t index) {
  return index < BENCH_GRAPH_COUNT ? kNames[index] : NULL;
}

/* Every builder call below goes through TRY, which jumps to cleanup on failure. */
#define TRY(call)                       \
  do {                                  \
    status = (call);                    \
    if (status != YIRAGE_OK) goto done; \
  } while (0)

static yirage_status input(yirage_graph *g, int64_t d0, int64_t d1, int64_t d2, size_t ndim, yirage_dtype dtype,
                           yirage_tensor **out) {
  const int64_t dims[3] = {d0, d1, d2};
  return yirage_graph_new_input(g, ndim, dims, dtype, out);
}

/* O = (exp(Q·K) / reduction(exp(Q·K), 2)) · V, with Q optionally RMS-normalized. */
static yirage_status attention(yirage_graph *g, int64_t b, yirage_dtype dtype, int normalize_q) {
  yirage_status status;
  yirage_tensor *q, *k, *v, *a, *e, *s, *p, *o;
  const int64_t head_dim = 64;
  TRY(input(g, 2 * b, 256, 64, 3, dtype, &q));
  TRY(input(g, 2 * b, 64, 4096, 3, dtype, &k));
  TRY(input(g, 2 * b, 4096, 64, 3, dtype, &v));
  if (normalize_q) TRY(yirage_graph_rms_norm(g, q, 1, &head_dim, 0.0, NULL, &q));
  TRY(yirage_graph_matmul(g, q, k, &a));
  TRY(yirage_graph_exp(g, a, &e));
  TRY(yirage_graph_reduction(g, e, 2, &s));
  TRY(yirage_graph_div(g, e, s, &p));
  TRY(yirage_graph_matmul(g, p, v, &o));
  TRY(yirage_graph_mark_output(g, o));
done:
  return status;
}

static yirage_status rmsnorm_linear(yirage_graph *g, int64_t b, yirage_dtype dtype) {
  yirage_status status;
  yirage_tensor *x, *w, *n, *o;
  const int64_t hidden = 4096;
  TRY(input(g, 2 * b, 4096, 0, 2, dtype, &x));
  TRY(input(g, 4096, 6144, 0, 2, dtype, &w));
  TRY(yirage_graph_rms_norm(g, x, 1, &hidden, 0.0, NULL, &n));
  TRY(yirage_graph_matmul(g, n, w, &o));
  TRY(yirage_graph_mark_output(g, o));
done:
  return status;
}

static yirage_status lora(yirage_graph *g, yirage_dtype dtype) {
  yirage_status status;
  yirage_tensor *x, *w, *a, *bm, *xw, *xa, *xab, *o;
  TRY(input(g, 16, 256, 0, 2, dtype, &x));
  TRY(input(g, 256, 4096, 0, 2, dtype, &w));
  TRY(input(g, 256, 16, 0, 2, dtype, &a));
  TRY(input(g, 16, 4096, 0, 2, dtype, &bm));
  TRY(yirage_graph_matmul(g, x, w, &xw));
  TRY(yirage_graph_matmul(g, x, a, &xa));
  TRY(yirage_graph_matmul(g, xa, bm, &xab));
  TRY(yirage_graph_add(g, xw, xab, &o));
  TRY(yirage_graph_mark_output(g, o));
done:
  return status;
}

static yirage_status gated_mlp(yirage_graph *g, yirage_dtype dtype) {
  yirage_status status;
  yirage_tensor *x, *w1, *w2, *h1, *h2, *act, *o;
  TRY(input(g, 8, 4096, 0, 2, dtype, &x));
  TRY(input(g, 4096, 4096, 0, 2, dtype, &w1));
  TRY(input(g, 4096, 4096, 0, 2, dtype, &w2));
  TRY(yirage_graph_matmul(g, x, w1, &h1));
  TRY(yirage_graph_matmul(g, x, w2, &h2));
  TRY(yirage_graph_silu(g, h1, &act));
  TRY(yirage_graph_mul(g, act, h2, &o));
  TRY(yirage_graph_mark_output(g, o));
done:
  return status;
}

/* O = rms_norm(X + α ⊙ (rms_norm(H) − X)) */
static yirage_status ntrans(yirage_graph *g, int64_t b, yirage_dtype dtype) {
  yirage_status status;
  yirage_tensor *h, *x, *alpha, *hn, *diff, *scaled, *sum, *o;
  const int64_t hidden = 4096;
  TRY(input(g, 8 * b, 4096, 0, 2, dtype, &h));
  TRY(input(g, 8 * b, 4096, 0, 2, dtype, &x));
  TRY(input(g, 8 * b, 4096, 0, 2, dtype, &alpha));
  TRY(yirage_graph_rms_norm(g, h, 1, &hidden, 0.0, NULL, &hn));
  TRY(yirage_graph_sub(g, hn, x, &diff));
  TRY(yirage_graph_mul(g, alpha, diff, &scaled));
  TRY(yirage_graph_add(g, x, scaled, &sum));
  TRY(yirage_graph_rms_norm(g, sum, 1, &hidden, 0.0, NULL, &o));
  TRY(yirage_graph_mark_output(g, o));
done:
  return status;
}

yirage_status bench_graph_build(const char *name, int64_t b, yirage_dtype dtype, yirage_graph **out_graph) {
  yirage_graph *g = NULL;
  yirage_status status;
  if (name == NULL) return YIRAGE_ERROR_INVALID_ARGUMENT;
  status = yirage_graph_create(&g);
  if (status != YIRAGE_OK) return status;
  if (strcmp(name, "gqa") == 0) {
    status = attention(g, b, dtype, 0);
  } else if (strcmp(name, "qknorm") == 0) {
    status = attention(g, b, dtype, 1);
  } else if (strcmp(name, "rmsnorm_linear") == 0) {
    status = rmsnorm_linear(g, b, dtype);
  } else if (strcmp(name, "lora") == 0) {
    status = lora(g, dtype);
  } else if (strcmp(name, "gated_mlp") == 0) {
    status = gated_mlp(g, dtype);
  } else if (strcmp(name, "ntrans") == 0) {
    status = ntrans(g, b, dtype);
  } else {
    status = YIRAGE_ERROR_NOT_FOUND;
  }
  if (status != YIRAGE_OK) {
    yirage_graph_release(g);
    return status;
  }
  *out_graph = g;
  return YIRAGE_OK;
}

yirage_status bench_context_with_plugin(const char *plugin_path, const char *cache_dir, yirage_context **out_context) {
  const char *paths[1];
  yirage_context_options co;
  paths[0] = plugin_path;
  yirage_context_options_init(&co);
  co.plugin_paths = paths;
  co.num_plugin_paths = 1;
  co.search_default_paths = 0;
  co.cache_dir = cache_dir;
  return yirage_context_create(&co, out_context);
}
