/* The main job until the superoptimizer lands: builds the six benchmark graphs (float16, b = 1)
 * through yirage.h, runs each on the reference executor with seeded random inputs, and prints
 * the output shape, a checksum and the time taken. Exit status 0 only if every run succeeded
 * and produced finite outputs. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "bench_graphs.h"

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run_one(const char *name) {
  yirage_graph *graph = NULL;
  bench_tensor inputs[4], output;
  const DLTensor *input_ptrs[4];
  DLTensor *output_ptr = &output.dl;
  size_t n_inputs = 0, i;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  yirage_tensor *t;
  double sum = 0, sum_abs = 0, started;
  int64_t e;
  int finite = 1;
  yirage_status status = bench_graph_build(name, 1, YIRAGE_FLOAT16, &graph);
  if (status != YIRAGE_OK) {
    fprintf(stderr, "%s: build failed: %s: %s\n", name, yirage_status_name(status), yirage_last_error_message());
    return 1;
  }
  if (yirage_graph_num_inputs(graph, &n_inputs) != YIRAGE_OK || n_inputs > 4) return 1;
  for (i = 0; i < n_inputs; ++i) {
    if (yirage_graph_get_input(graph, i, &t) != YIRAGE_OK || bench_tensor_alloc(t, &inputs[i])) {
      return 1;
    }
    bench_tensor_fill_uniform(&inputs[i], &seed, -1.0, 1.0);
    input_ptrs[i] = &inputs[i].dl;
  }
  if (yirage_graph_get_output(graph, 0, &t) != YIRAGE_OK || bench_tensor_alloc(t, &output)) {
    return 1;
  }
  bench_tensor_poison(&output);
  started = seconds_now();
  status = yirage_graph_run_reference(graph, input_ptrs, n_inputs, &output_ptr, 1);
  if (status != YIRAGE_OK) {
    fprintf(stderr, "%s: reference run failed: %s: %s\n", name, yirage_status_name(status),
            yirage_last_error_message());
    return 1;
  }
  for (e = 0; e < output.count; ++e) {
    const double v = bench_tensor_get(&output, e);
    finite = finite && isfinite(v);
    sum += v;
    sum_abs += fabs(v);
  }
  printf("%-15s output [", name);
  for (i = 0; i < (size_t)output.dl.ndim; ++i) {
    printf("%s%lld", i ? "," : "", (long long)output.shape[i]);
  }
  printf("] float16  sum %+.6e  sum|x| %.6e  reference %.2f s%s\n", sum, sum_abs, seconds_now() - started,
         finite ? "" : "  NON-FINITE OUTPUT");
  for (i = 0; i < n_inputs; ++i) bench_tensor_free(&inputs[i]);
  bench_tensor_free(&output);
  yirage_graph_release(graph);
  return finite ? 0 : 1;
}

int main(void) {
  size_t i;
  int failures = 0;
  printf("yirage %s: the six benchmark graphs on the reference executor (float64)\n", yirage_version());
  for (i = 0; i < BENCH_GRAPH_COUNT; ++i) failures += run_one(bench_graph_name(i));
  return failures == 0 ? 0 : 1;
}
