/* Thread-block graphs through yirage.h only: RMSNorm fused into a matmul, built by hand as one
 * customized operator, must compute what the unfused graph computes; and the µGraph error paths. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_graphs.h"
#include "check.h"

enum { ROWS = 4, HIDDEN = 256, COLS = 128, TILE = 64 };

/* O = rms_norm(X) · W as a kernel graph: unfused when `fused` is 0, else one customized op with
 * blocks over 64 output columns and a loop over 64-wide hidden tiles. */
static yirage_graph *build(int fused) {
  const int64_t x_dims[2] = {ROWS, HIDDEN}, w_dims[2] = {HIDDEN, COLS}, hidden = HIDDEN;
  const int32_t replicated[3] = {-1, -1, -1}, cols[3] = {1, -1, -1};
  yirage_graph *g = NULL;
  yirage_block_graph *bg = NULL;
  yirage_block_graph_options options;
  yirage_tensor *x, *w, *n, *o, *xt, *wt, *xw, *acc, *rms, *tile;
  size_t n_outputs = 0;
  int64_t bytes = 0;
  OK(yirage_graph_create(&g));
  OK(yirage_graph_new_input(g, 2, x_dims, YIRAGE_FLOAT32, &x));
  OK(yirage_graph_new_input(g, 2, w_dims, YIRAGE_FLOAT32, &w));
  if (!fused) {
    OK(yirage_graph_rms_norm(g, x, 1, &hidden, 0.0, NULL, &n));
    OK(yirage_graph_matmul(g, n, w, &o));
    OK(yirage_graph_mark_output(g, o));
    return g;
  }
  yirage_block_graph_options_init(&options);
  options.grid[0] = COLS / TILE;
  options.forloop_range = HIDDEN / TILE;
  OK(yirage_block_graph_create(&options, &bg));
  OK(yirage_block_graph_new_input(bg, x, replicated, 1, &xt));
  OK(yirage_block_graph_new_input(bg, w, cols, 0, &wt));
  OK(yirage_block_graph_matmul(bg, xt, wt, &xw));
  OK(yirage_block_graph_accumulate(bg, xw, YIRAGE_ACCUM_SUM, &acc));
  OK(yirage_block_graph_accumulate(bg, xt, YIRAGE_ACCUM_REDUCE_RMS, &rms));
  OK(yirage_block_graph_div(bg, acc, rms, &tile));
  OK(yirage_block_graph_new_output(bg, tile, cols, -1));
  OK(yirage_block_graph_num_outputs(bg, &n_outputs));
  CHECK(n_outputs == 1);
  OK(yirage_block_graph_shared_memory_bytes(bg, &bytes));
  /* x tile 4x64 + w tile 64x64 + xw 4x64 (float32) + acc 4x64 + rms 4x1 + out 4x64 (4 bytes) */
  CHECK(bytes == 4 * (256 + 4096 + 256 + 256 + 4 + 256));
  OK(yirage_graph_customized(g, bg, &o));
  yirage_block_graph_release(bg); /* the kernel graph keeps its own copy */
  OK(yirage_graph_mark_output(g, o));
  return g;
}

static void test_fused_matches_unfused(void) {
  yirage_graph *plain = build(0), *fused = build(1);
  bench_tensor in[2], out_plain, out_fused;
  const DLTensor *ins[2];
  DLTensor *outs[1];
  yirage_tensor *t;
  uint64_t seed = 42;
  size_t i;
  double diff = 0, norm = 0;
  int64_t e;
  for (i = 0; i < 2; ++i) {
    OK(yirage_graph_get_input(plain, i, &t));
    CHECK(bench_tensor_alloc(t, &in[i]) == 0);
    bench_tensor_fill_uniform(&in[i], &seed, -1, 1);
    ins[i] = &in[i].dl;
  }
  OK(yirage_graph_get_output(plain, 0, &t));
  CHECK(bench_tensor_alloc(t, &out_plain) == 0 && bench_tensor_alloc(t, &out_fused) == 0);
  bench_tensor_poison(&out_plain);
  bench_tensor_poison(&out_fused);
  outs[0] = &out_plain.dl;
  OK(yirage_graph_run_reference(plain, ins, 2, outs, 1));
  outs[0] = &out_fused.dl;
  OK(yirage_graph_run_reference(fused, ins, 2, outs, 1));
  for (e = 0; e < out_plain.count; ++e) {
    const double a = bench_tensor_get(&out_plain, e), b = bench_tensor_get(&out_fused, e);
    diff += (a - b) * (a - b);
    norm += a * a;
  }
  CHECK(norm > 0 && sqrt(diff / norm) < 1e-6);
  printf("fused rms_norm+matmul vs unfused: relative error %.3e\n", sqrt(diff / norm));
  for (i = 0; i < 2; ++i) bench_tensor_free(&in[i]);
  bench_tensor_free(&out_plain);
  bench_tensor_free(&out_fused);
  yirage_graph_release(plain);
  yirage_graph_release(fused);
}

static void test_errors(void) {
  const int64_t dims[2] = {12, 64};
  const int32_t split_x[3] = {0, -1, -1}, replicated[3] = {-1, -1, -1}, bad_y[3] = {-1, 0, -1};
  yirage_graph *g = NULL, *other = NULL;
  yirage_block_graph *bg = NULL, *sentinel = (yirage_block_graph *)(void *)&failures;
  yirage_block_graph_options options;
  yirage_tensor *x, *y, *xt, *acc, *out = NULL;
  size_t n_ops = 0;
  OK(yirage_graph_create(&g));
  OK(yirage_graph_create(&other));
  OK(yirage_graph_new_input(g, 2, dims, YIRAGE_FLOAT16, &x));
  OK(yirage_graph_new_input(other, 2, dims, YIRAGE_FLOAT16, &y));

  yirage_block_graph_options_init(&options);
  options.struct_size = 8;
  EXPECT_INVALID(yirage_block_graph_create(&options, &sentinel), "options->struct_size 8 is smaller");
  CHECK(sentinel == (yirage_block_graph *)(void *)&failures);
  EXPECT_INVALID(yirage_block_graph_create(NULL, &bg), "options is NULL");
  /* Each function names its own NULL argument. */
  EXPECT_INVALID(yirage_graph_customized(g, NULL, &xt), "yirage_graph_customized: block_graph is NULL");
  EXPECT_INVALID(yirage_block_graph_new_input(NULL, x, split_x, -1, &xt),
                 "yirage_block_graph_new_input: block_graph is NULL");
  EXPECT_INVALID(yirage_block_graph_exp(NULL, x, &out), "yirage_block_graph_exp: block_graph is NULL");
  yirage_block_graph_options_init(&options);
  options.grid[0] = 5;
  options.forloop_range = 4;
  OK(yirage_block_graph_create(&options, &bg));
  EXPECT_INVALID(yirage_block_graph_new_input(bg, x, split_x, -1, &xt),
                 "dim 0 of [12,64] (12) cannot be split into 5 parts (grid.x = 5): parts of 3 would leave the last "
                 "ones empty");
  EXPECT_INVALID(yirage_block_graph_new_input(bg, x, bad_y, -1, &xt), "imap.y = 0 but grid.y has one block");
  EXPECT_INVALID(yirage_block_graph_new_input(bg, x, NULL, -1, &xt), "imap is NULL");
  OK(yirage_block_graph_new_input(bg, x, replicated, 1, &xt));
  EXPECT_INVALID(yirage_block_graph_new_input(bg, y, replicated, 1, &out), "belongs to another kernel graph");
  EXPECT_INVALID(yirage_graph_exp(g, xt, &out), "belongs to another graph");
  EXPECT_INVALID(yirage_block_graph_accumulate(bg, xt, (yirage_accumulator)9, &acc),
                 "kind 9 is not a yirage_accumulator");
  OK(yirage_block_graph_accumulate(bg, xt, YIRAGE_ACCUM_SUM, &acc));
  EXPECT_INVALID(yirage_block_graph_add(bg, xt, acc, &out),
                 "cannot combine a per-iteration tensor with an after-loop tensor");
  EXPECT_INVALID(yirage_block_graph_new_output(bg, acc, replicated, -1),
                 "grid.x has 5 blocks but omap.x is -1: the blocks would write overlapping tiles");
  EXPECT_INVALID(yirage_graph_customized(g, bg, &out), "the block graph has no outputs");
  OK(yirage_block_graph_new_output(bg, acc, split_x, -1));
  EXPECT_INVALID(yirage_graph_customized(other, bg, &out), "belongs to another graph");
  OK(yirage_graph_num_operators(g, &n_ops));
  CHECK(n_ops == 1); /* failed customized calls added nothing */
  OK(yirage_graph_customized(g, bg, &out));
  {
    int64_t got[2];
    OK(yirage_tensor_get_dims(out, 2, got));
    CHECK(got[0] == 60 && got[1] == 16); /* [12,16] per block, 5 blocks along dim 0 */
  }
  EXPECT_INVALID(yirage_block_graph_exp((yirage_block_graph *)g, xt, &out), "not a live yirage_block_graph");
  yirage_block_graph_release(bg);
  yirage_block_graph_release(bg);
  yirage_graph_release(g);
  yirage_graph_release(other);
}

static void test_equivalence(void) {
  yirage_graph *plain = build(0), *fused = build(1), *nested = NULL, *other = NULL;
  yirage_equivalence_options options;
  yirage_equivalence_result result;
  yirage_tensor *x, *e, *ee;
  const int64_t dims[2] = {ROWS, HIDDEN}, hidden = HIDDEN;
  memset(&result, 0x5a, sizeof result);
  result.struct_size = sizeof result;
  OK(yirage_graph_equivalent(plain, fused, NULL, &result));
  CHECK(result.equivalent == 1 && result.trials == 3 && result.reason[0] == '\0');
  printf("fused vs unfused: equivalent in %u trials, %.3f s\n", result.trials, result.seconds);

  /* rms_norm(X)·W against X·W: not equivalent. */
  OK(yirage_graph_create(&other));
  {
    const int64_t w_dims[2] = {HIDDEN, COLS};
    yirage_tensor *w, *o;
    OK(yirage_graph_new_input(other, 2, dims, YIRAGE_FLOAT32, &x));
    OK(yirage_graph_new_input(other, 2, w_dims, YIRAGE_FLOAT32, &w));
    OK(yirage_graph_matmul(other, x, w, &o));
    OK(yirage_graph_mark_output(other, o));
  }
  yirage_equivalence_options_init(&options);
  options.trials = 2;
  options.seed = 99;
  OK(yirage_graph_equivalent(fused, other, &options, &result));
  CHECK(result.equivalent == 0 && result.trials == 1);
  CHECK(strstr(result.reason, "output 0 differs at element") != NULL);

  /* Errors: inputs that differ, struct sizes, exp of exp. */
  OK(yirage_graph_create(&nested));
  OK(yirage_graph_new_input(nested, 2, dims, YIRAGE_FLOAT32, &x));
  OK(yirage_graph_exp(nested, x, &e));
  OK(yirage_graph_exp(nested, e, &ee));
  OK(yirage_graph_mark_output(nested, ee));
  EXPECT_INVALID(yirage_graph_equivalent(plain, nested, NULL, &result), "the graphs have 2 and 1 inputs");
  CHECK(yirage_graph_equivalent(nested, nested, NULL, &result) == YIRAGE_ERROR_UNSUPPORTED &&
        strstr(yirage_last_error_message(), "exp of a value that itself depends on exp"));
  options.struct_size = 4;
  EXPECT_INVALID(yirage_graph_equivalent(plain, fused, &options, &result), "options->struct_size 4 is smaller");
  result.struct_size = 16;
  EXPECT_INVALID(yirage_graph_equivalent(plain, fused, NULL, &result), "out_result->struct_size 16 is smaller");
  options.struct_size = sizeof options;
  options.trials = 0;
  result.struct_size = sizeof result;
  EXPECT_INVALID(yirage_graph_equivalent(plain, fused, &options, &result), "trials must be at least 1");
  EXPECT_INVALID(yirage_graph_equivalent(plain, NULL, NULL, &result), "graph is NULL");
  (void)hidden;
  yirage_graph_release(plain);
  yirage_graph_release(fused);
  yirage_graph_release(nested);
  yirage_graph_release(other);
}

/* A saver may write another dtype than its tile's: the customized operator's outputs take it,
 * one dtype for all of them. */
static void test_output_dtypes(void) {
  const int64_t dims[2] = {4, 64};
  const int32_t replicated[3] = {-1, -1, -1};
  yirage_graph *g = NULL;
  yirage_block_graph *bg = NULL;
  yirage_block_graph_options options;
  yirage_tensor *x, *xt, *sum, *rows, *out[2] = {NULL, NULL};
  yirage_dtype dtype = YIRAGE_FLOAT16;
  size_t n_outputs = 0;
  OK(yirage_graph_create(&g));
  OK(yirage_graph_new_input(g, 2, dims, YIRAGE_FLOAT16, &x));
  yirage_block_graph_options_init(&options);
  options.forloop_range = 4;
  OK(yirage_block_graph_create(&options, &bg));
  OK(yirage_block_graph_new_input(bg, x, replicated, 1, &xt));
  OK(yirage_block_graph_accumulate(bg, xt, YIRAGE_ACCUM_SUM, &sum));
  OK(yirage_block_graph_accumulate(bg, xt, YIRAGE_ACCUM_REDUCE_SUM, &rows));
  EXPECT_INVALID(yirage_block_graph_new_output_as(bg, sum, replicated, -1, (yirage_dtype)7),
                 "dtype 7 is not a yirage_dtype");
  EXPECT_INVALID(yirage_block_graph_new_output_as(bg, sum, NULL, -1, YIRAGE_FLOAT32), "omap is NULL");
  OK(yirage_block_graph_num_outputs(bg, &n_outputs));
  CHECK(n_outputs == 0);
  OK(yirage_block_graph_new_output_as(bg, sum, replicated, -1, YIRAGE_FLOAT32));
  OK(yirage_graph_customized(g, bg, out));
  OK(yirage_tensor_get_dtype(out[0], &dtype));
  CHECK(dtype == YIRAGE_FLOAT32);
  OK(yirage_block_graph_new_output(bg, rows, replicated, -1)); /* float16, its tile's */
  EXPECT_INVALID(yirage_graph_customized(g, bg, out), "outputs are written in different dtypes");
  yirage_block_graph_release(bg);
  yirage_graph_release(g);
}

/* Mirage's sum_todimx (ABI 1.8): the last dim folded to dimx, which must divide it. */
static void test_accumulate_to_dimx(void) {
  const int64_t dims[2] = {4, 64};
  const int32_t replicated[3] = {-1, -1, -1};
  yirage_graph *g = NULL;
  yirage_block_graph *bg = NULL;
  yirage_block_graph_options options;
  yirage_tensor *x, *xt, *folded = NULL, *out[1] = {NULL};
  int64_t out_dims[2] = {0, 0};
  CHECK(yirage_abi_version() >= ((1u << 16) | 8u));
  OK(yirage_graph_create(&g));
  OK(yirage_graph_new_input(g, 2, dims, YIRAGE_FLOAT16, &x));
  yirage_block_graph_options_init(&options);
  options.forloop_range = 2;
  OK(yirage_block_graph_create(&options, &bg));
  OK(yirage_block_graph_new_input(bg, x, replicated, 1, &xt)); /* [4, 32] per iteration */
  EXPECT_INVALID(yirage_block_graph_accumulate_to_dimx(bg, xt, 12, &folded), "dimx 12 must be >= 1 and divide");
  CHECK(folded == NULL);
  OK(yirage_block_graph_accumulate_to_dimx(bg, xt, 8, &folded));
  OK(yirage_block_graph_new_output(bg, folded, replicated, -1));
  OK(yirage_graph_customized(g, bg, out));
  OK(yirage_tensor_get_dims(out[0], 2, out_dims));
  CHECK(out_dims[0] == 4 && out_dims[1] == 8);
  yirage_block_graph_release(bg);
  yirage_graph_release(g);
}

int main(void) {
  test_accumulate_to_dimx();
  test_output_dtypes();
  test_fused_matches_unfused();
  test_equivalence();
  test_errors();
  return finish("µGraph C API");
}
