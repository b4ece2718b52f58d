/* The six benchmark graphs, built through yirage.h only and run on the reference executor,
 * checked against naive float64 computations written here, independently of yirage. Outputs
 * are poisoned before each run; the check is a relative-norm error per dtype. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_graphs.h"

static int failures = 0;

#define EXPECT(cond, ...)                                  \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      ++failures;                                          \
    }                                                      \
  } while (0)

/* Input i of a graph as float64, row-major. */
static double *as_doubles(const bench_tensor *t) {
  double *values = malloc((size_t)t->count * sizeof *values);
  int64_t i;
  for (i = 0; i < t->count; ++i) values[i] = bench_tensor_get(t, i);
  return values;
}

/* c[batch][m][n] = a[batch][m][k] · b[batch][k][n]; b_batch_stride 0 shares b. */
static double *naive_matmul(const double *a, const double *b, int64_t batch, int64_t m, int64_t k, int64_t n,
                            int64_t b_batch_stride) {
  double *c = calloc((size_t)(batch * m * n), sizeof *c);
  int64_t z, i, j, p;
  for (z = 0; z < batch; ++z) {
    for (i = 0; i < m; ++i) {
      for (j = 0; j < n; ++j) {
        double acc = 0;
        for (p = 0; p < k; ++p) acc += a[(z * m + i) * k + p] * b[z * b_batch_stride + p * n + j];
        c[(z * m + i) * n + j] = acc;
      }
    }
  }
  return c;
}

/* Row-wise x / sqrt(mean(x²)), eps = 0, in place. */
static void naive_rms_norm(double *x, int64_t rows, int64_t cols) {
  int64_t r, c;
  for (r = 0; r < rows; ++r) {
    double ss = 0;
    for (c = 0; c < cols; ++c) ss += x[r * cols + c] * x[r * cols + c];
    for (c = 0; c < cols; ++c) x[r * cols + c] /= sqrt(ss / (double)cols);
  }
}

static double *naive_attention(double *q, const double *k, const double *v, int64_t b, int normalize_q) {
  const int64_t heads = 2 * b, m = 256, d = 64, n = 4096;
  double *scores, *out;
  int64_t z, i, j;
  if (normalize_q) naive_rms_norm(q, heads * m, d);
  scores = naive_matmul(q, k, heads, m, d, n, d * n);
  for (z = 0; z < heads * m; ++z) {
    double total = 0;
    for (j = 0; j < n; ++j) total += (scores[z * n + j] = exp(scores[z * n + j]));
    for (j = 0; j < n; ++j) scores[z * n + j] /= total;
  }
  out = naive_matmul(scores, v, heads, m, n, d, n * d);
  free(scores);
  (void)i;
  return out;
}

/* Computes the expected output of benchmark `name` from its inputs (as doubles). */
static double *expected_output(const char *name, double **in, int64_t b) {
  int64_t i;
  if (strcmp(name, "gqa") == 0) return naive_attention(in[0], in[1], in[2], b, 0);
  if (strcmp(name, "qknorm") == 0) return naive_attention(in[0], in[1], in[2], b, 1);
  if (strcmp(name, "rmsnorm_linear") == 0) {
    naive_rms_norm(in[0], 2 * b, 4096);
    return naive_matmul(in[0], in[1], 1, 2 * b, 4096, 6144, 0);
  }
  if (strcmp(name, "lora") == 0) {
    double *xw = naive_matmul(in[0], in[1], 1, 16, 256, 4096, 0);
    double *xa = naive_matmul(in[0], in[2], 1, 16, 256, 16, 0);
    double *xab = naive_matmul(xa, in[3], 1, 16, 16, 4096, 0);
    for (i = 0; i < 16 * 4096; ++i) xw[i] += xab[i];
    free(xa);
    free(xab);
    return xw;
  }
  if (strcmp(name, "gated_mlp") == 0) {
    double *h1 = naive_matmul(in[0], in[1], 1, 8, 4096, 4096, 0);
    double *h2 = naive_matmul(in[0], in[2], 1, 8, 4096, 4096, 0);
    for (i = 0; i < 8 * 4096; ++i) h1[i] = h1[i] / (1 + exp(-h1[i])) * h2[i];
    free(h2);
    return h1;
  }
  if (strcmp(name, "ntrans") == 0) {
    const int64_t rows = 8 * b, count = rows * 4096;
    double *out = malloc((size_t)count * sizeof *out);
    naive_rms_norm(in[0], rows, 4096); /* in[0] = H, in[1] = X, in[2] = alpha */
    for (i = 0; i < count; ++i) out[i] = in[1][i] + in[2][i] * (in[0][i] - in[1][i]);
    naive_rms_norm(out, rows, 4096);
    return out;
  }
  return NULL;
}

/* The output shape each benchmark must have at b = 1, written down independently of yirage. */
static int expected_shape(const char *name, int64_t shape[3]) {
  if (strcmp(name, "gqa") == 0 || strcmp(name, "qknorm") == 0) {
    shape[0] = 2, shape[1] = 256, shape[2] = 64;
    return 3;
  }
  shape[0] = strcmp(name, "rmsnorm_linear") == 0 ? 2 : strcmp(name, "lora") == 0 ? 16 : 8;
  shape[1] = strcmp(name, "rmsnorm_linear") == 0 ? 6144 : 4096;
  return 2;
}

/* ‖got − want‖₂ / ‖want‖₂ */
static double relative_error(const bench_tensor *got, const double *want) {
  double diff = 0, norm = 0;
  int64_t i;
  for (i = 0; i < got->count; ++i) {
    const double d = bench_tensor_get(got, i) - want[i];
    diff += d * d;
    norm += want[i] * want[i];
  }
  return sqrt(diff) / sqrt(norm);
}

static void check_graph(const char *name, yirage_dtype dtype, double tolerance) {
  yirage_graph *graph = NULL;
  bench_tensor inputs[4], output;
  const DLTensor *input_ptrs[4];
  DLTensor *output_ptr = &output.dl;
  double *values[4] = {NULL, NULL, NULL, NULL};
  double *want, error;
  size_t n_inputs = 0, n_outputs = 0, i;
  uint64_t seed = 0x2545f4914f6cdd1dull;
  yirage_tensor *t;
  yirage_status status = bench_graph_build(name, 1, dtype, &graph);
  EXPECT(status == YIRAGE_OK, "%s: build: %s", name, yirage_last_error_message());
  if (status != YIRAGE_OK) return;
  EXPECT(yirage_graph_num_inputs(graph, &n_inputs) == YIRAGE_OK && n_inputs <= 4, "%s", name);
  EXPECT(yirage_graph_num_outputs(graph, &n_outputs) == YIRAGE_OK && n_outputs == 1, "%s", name);
  for (i = 0; i < n_inputs; ++i) {
    EXPECT(yirage_graph_get_input(graph, i, &t) == YIRAGE_OK, "%s", name);
    EXPECT(bench_tensor_alloc(t, &inputs[i]) == 0, "%s", name);
    bench_tensor_fill_uniform(&inputs[i], &seed, -1.0, 1.0);
    input_ptrs[i] = &inputs[i].dl;
    values[i] = as_doubles(&inputs[i]);
  }
  EXPECT(yirage_graph_get_output(graph, 0, &t) == YIRAGE_OK, "%s", name);
  EXPECT(bench_tensor_alloc(t, &output) == 0, "%s", name);
  {
    int64_t shape[3];
    const int rank = expected_shape(name, shape);
    EXPECT(output.dl.ndim == rank, "%s: output rank %d, expected %d", name, output.dl.ndim, rank);
    for (i = 0; i < (size_t)rank && (int)i < output.dl.ndim; ++i) {
      EXPECT(output.shape[i] == shape[i], "%s: output dim %d is %lld, expected %lld", name, (int)i,
             (long long)output.shape[i], (long long)shape[i]);
    }
  }
  bench_tensor_poison(&output);
  status = yirage_graph_run_reference(graph, input_ptrs, n_inputs, &output_ptr, 1);
  EXPECT(status == YIRAGE_OK, "%s: run: %s", name, yirage_last_error_message());
  want = expected_output(name, values, 1);
  error = relative_error(&output, want);
  EXPECT(error <= tolerance, "%s %s: relative error %.3e exceeds %.1e", name, yirage_dtype_name(dtype), error,
         tolerance);
  printf("%-15s %-8s relative error %.3e (tolerance %.1e)\n", name, yirage_dtype_name(dtype), error, tolerance);
  free(want);
  for (i = 0; i < n_inputs; ++i) {
    free(values[i]);
    bench_tensor_free(&inputs[i]);
  }
  bench_tensor_free(&output);
  yirage_graph_release(graph);
}

int main(void) {
  size_t i;
  /* One rounding of the output: 2^-11 (float16), 2^-8 (bfloat16), 2^-24 (float32) relative per
   * element, so the norm-wise error stays below these. */
  for (i = 0; i < BENCH_GRAPH_COUNT; ++i) check_graph(bench_graph_name(i), YIRAGE_FLOAT16, 1e-3);
  check_graph("rmsnorm_linear", YIRAGE_FLOAT32, 1e-6);
  check_graph("lora", YIRAGE_FLOAT32, 1e-6);
  check_graph("ntrans", YIRAGE_FLOAT32, 1e-6);
  check_graph("lora", YIRAGE_BFLOAT16, 8e-3);
  check_graph("ntrans", YIRAGE_BFLOAT16, 8e-3);
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
