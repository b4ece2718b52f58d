/* Eight threads on one context (the CPU plugin given by path, argv[1]; its kernel cache under
 * argv[2]), through the C ABI only. Each thread builds a graph of its own (rms_norm, matmul,
 * silu), checks the reference executor against float64 code written here, compiles the graph
 * on the shared device and runs the kernel on its own tensors (outputs poisoned first); then all
 * eight run one shared kernel at once, many times, on their own tensors; then all eight
 * superoptimize with profiling on the device, four threads to each of two requests, sharing one
 * search cache folder (argv[3], emptied first), each checking the best candidate on the device,
 * twice; afterwards the cache they raced on answers a repeated request. Phases start together (a
 * barrier) so that the calls overlap. scripts/test.sh also runs it in a ThreadSanitizer build
 * (build-tsan). */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_graphs.h"

#define THREADS 8
#define SHARED_RUNS 25
#define SHARED_ROWS 16 /* the threads' own graphs have 4 or 8 */
#define K 64
#define N 96

/* check.h's counter is not safe to update from several threads: these count under a lock. */
static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;
static int failures = 0;

static void fail(const char *file, int line, const char *what) {
  pthread_mutex_lock(&failure_lock);
  fprintf(stderr, "FAIL %s:%d: %s (last error: %s)\n", file, line, what, yirage_last_error_message());
  ++failures;
  pthread_mutex_unlock(&failure_lock);
}

#define CHECK(cond)                               \
  do {                                            \
    if (!(cond)) fail(__FILE__, __LINE__, #cond); \
  } while (0)
#define OK(call) CHECK((call) == YIRAGE_OK)

/* What every thread shares. */
static yirage_context *context = NULL;
static const yirage_device *shared_device = NULL;
static yirage_graph *shared_graph = NULL;
static yirage_kernel *shared_kernel = NULL;
static const char *search_cache = NULL;
static pthread_barrier_t phase;
/* Whether the cache answered each thread's first search (each thread writes its own). */
static int first_from_cache[THREADS];

/* x [rows, K] → rms_norm over K → matmul with w [K, N] → silu (when `silu`). */
static yirage_graph *build_graph(int64_t rows, int silu) {
  yirage_graph *g = NULL;
  yirage_tensor *x = NULL, *w = NULL, *t = NULL;
  const int64_t xd[2] = {rows, K}, wd[2] = {K, N}, norm[1] = {K};
  OK(yirage_graph_create(&g));
  OK(yirage_graph_new_input(g, 2, xd, YIRAGE_FLOAT32, &x));
  OK(yirage_graph_new_input(g, 2, wd, YIRAGE_FLOAT32, &w));
  OK(yirage_graph_rms_norm(g, x, 1, norm, 0.0, NULL, &t));
  OK(yirage_graph_matmul(g, t, w, &t));
  if (silu) OK(yirage_graph_silu(g, t, &t));
  OK(yirage_graph_mark_output(g, t));
  return g;
}

/* The graph's two inputs, uniform in [-1, 1) from `seed`, and its output twice (unfilled). */
typedef struct tensors {
  bench_tensor in[2], out, want;
  const DLTensor *ins[2];
  DLTensor *outs[1];
} tensors;

static void tensors_alloc(const yirage_graph *g, uint64_t seed, tensors *t) {
  yirage_tensor *handle = NULL;
  size_t i;
  for (i = 0; i < 2; ++i) {
    OK(yirage_graph_get_input(g, i, &handle));
    CHECK(bench_tensor_alloc(handle, &t->in[i]) == 0);
    bench_tensor_fill_uniform(&t->in[i], &seed, -1.0, 1.0);
    t->ins[i] = &t->in[i].dl;
  }
  OK(yirage_graph_get_output(g, 0, &handle));
  CHECK(bench_tensor_alloc(handle, &t->out) == 0 && bench_tensor_alloc(handle, &t->want) == 0);
}

static void tensors_free(tensors *t) {
  bench_tensor_free(&t->in[0]);
  bench_tensor_free(&t->in[1]);
  bench_tensor_free(&t->out);
  bench_tensor_free(&t->want);
}

/* The reference executor's answer into t->want, checked against the same computation here. */
static void reference(const yirage_graph *g, tensors *t, int64_t rows, int silu) {
  double *naive = malloc((size_t)(rows * N) * sizeof *naive);
  double diff = 0, norm = 0;
  int64_t r, c, k;
  bench_tensor_poison(&t->want);
  t->outs[0] = &t->want.dl;
  OK(yirage_graph_run_reference(g, t->ins, 2, t->outs, 1));
  CHECK(naive != NULL);
  if (naive == NULL) return;
  for (r = 0; r < rows; ++r) {
    double squares = 0;
    for (k = 0; k < K; ++k) squares += bench_tensor_get(&t->in[0], r * K + k) * bench_tensor_get(&t->in[0], r * K + k);
    for (c = 0; c < N; ++c) {
      double v = 0;
      for (k = 0; k < K; ++k) v += bench_tensor_get(&t->in[0], r * K + k) * bench_tensor_get(&t->in[1], k * N + c);
      v /= sqrt(squares / K);
      naive[r * N + c] = silu ? v / (1 + exp(-v)) : v;
    }
  }
  for (r = 0; r < rows * N; ++r) {
    const double got = bench_tensor_get(&t->want, r);
    diff += (got - naive[r]) * (got - naive[r]);
    norm += naive[r] * naive[r];
  }
  CHECK(sqrt(diff / norm) < 1e-6); /* float32 rounding of the output only */
  free(naive);
}

/* Runs the kernel on t's inputs into t->out (poisoned first) and compares it with t->want. */
static void run_and_compare(const yirage_kernel *kernel, tensors *t) {
  bench_tensor_poison(&t->out);
  t->outs[0] = &t->out.dl;
  OK(yirage_kernel_run(kernel, t->ins, 2, t->outs, 1, NULL));
  CHECK(bench_tensor_relative_error(&t->out, &t->want) < 1e-4);
}

/* A profiled search of rms_norm + matmul with `rows` rows in the shared cache; the best
 * candidate runs correctly on the device. Returns whether the cache answered. */
static int search(const yirage_device *cpu, int64_t rows, uint64_t seed) {
  yirage_graph *g = build_graph(rows, 0), *best = NULL;
  yirage_search_options so;
  yirage_search_result *result = NULL;
  yirage_search_stats stats;
  yirage_kernel *kernel = NULL;
  yirage_status status;
  tensors t;
  int from_cache = 0;
  yirage_search_options_init(&so);
  so.device = cpu;
  so.threads = 2;              /* the search's own threads share its Z3 pool and its candidates */
  so.z3_rlimit = 1000;         /* a tenth of the default: under TSan, 4 s for these searches, not 12 */
  so.time_budget_seconds = 30; /* a bound: a second each in the plain build, 5 under TSan */
  so.profile_top_k = 1;
  so.profile_repeats = 1;
  so.cache_dir = search_cache;
  status = yirage_superoptimize(g, &so, &result);
  /* Eight searches of two threads on a loaded machine may run out of budget: what they verified is
   * still checked. */
  CHECK(status == YIRAGE_OK || status == YIRAGE_ERROR_TIMEOUT);
  if (result != NULL) {
    stats.struct_size = sizeof stats;
    OK(yirage_search_result_stats(result, &stats));
    from_cache = stats.from_cache;
    OK(yirage_search_result_candidate(result, 0, &best, NULL));
    OK(yirage_compile(best, cpu, NULL, &kernel));
    tensors_alloc(g, seed, &t);
    reference(g, &t, rows, 0);
    if (kernel != NULL) run_and_compare(kernel, &t);
    tensors_free(&t);
    yirage_kernel_release(kernel);
    yirage_graph_release(best);
    yirage_search_result_release(result);
  }
  yirage_graph_release(g);
  return from_cache;
}

static void *worker(void *arg) {
  const int index = (int)(size_t)arg;
  /* Two shapes, so that four threads at a time compile the same kernels (missing from the
   * cache on a first run) and search the same request. */
  const int64_t rows = index % 2 == 0 ? 4 : 8;
  const yirage_device *cpu = NULL;
  yirage_graph *g = NULL;
  yirage_kernel *kernel = NULL;
  tensors own, shared;
  int i;

  pthread_barrier_wait(&phase);
  OK(yirage_context_get_device(context, "cpu", 0, &cpu));
  CHECK(cpu == shared_device);
  g = build_graph(rows, 1);
  tensors_alloc(g, 100 + (uint64_t)index, &own);
  reference(g, &own, rows, 1);
  tensors_alloc(shared_graph, 200 + (uint64_t)index, &shared);
  reference(shared_graph, &shared, SHARED_ROWS, 1);

  pthread_barrier_wait(&phase);
  OK(yirage_compile(g, cpu, NULL, &kernel));
  if (kernel != NULL) run_and_compare(kernel, &own);

  pthread_barrier_wait(&phase);
  for (i = 0; i < SHARED_RUNS; ++i) run_and_compare(shared_kernel, &shared);

  pthread_barrier_wait(&phase);
  first_from_cache[index] = search(cpu, rows, 300 + (uint64_t)index);
  /* Asked again while the others may still write the entry: the cache may answer or not (a
   * reader between a writer's two renames sees a mismatch, a miss), the answer is right. */
  search(cpu, rows, 400 + (uint64_t)index);

  yirage_kernel_release(kernel);
  yirage_graph_release(g);
  tensors_free(&own);
  tensors_free(&shared);
  return NULL;
}

/* Removes the files of a previous run from the search cache folder (flat: entries, checksums). */
static void empty_folder(const char *path) {
  DIR *dir = opendir(path);
  struct dirent *entry;
  char file[4096];
  if (dir == NULL) return; /* missing: the first search creates it */
  while ((entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    snprintf(file, sizeof file, "%s/%s", path, entry->d_name);
    CHECK(unlink(file) == 0);
  }
  closedir(dir);
}

int main(int argc, char **argv) {
  pthread_t threads[THREADS];
  size_t i;

  if (argc < 4) {
    fprintf(stderr, "usage: %s CPU_PLUGIN KERNEL_CACHE SEARCH_CACHE\n", argv[0]);
    return 2;
  }
  search_cache = argv[3];
  empty_folder(search_cache);
  OK(bench_context_with_plugin(argv[1], argv[2], &context));
  OK(yirage_context_get_device(context, "cpu", 0, &shared_device));
  shared_graph = build_graph(SHARED_ROWS, 1);
  OK(yirage_compile(shared_graph, shared_device, NULL, &shared_kernel));
  if (failures) return 1;

  CHECK(pthread_barrier_init(&phase, NULL, THREADS) == 0);
  for (i = 0; i < THREADS; ++i) CHECK(pthread_create(&threads[i], NULL, worker, (void *)i) == 0);
  for (i = 0; i < THREADS; ++i) CHECK(pthread_join(threads[i], NULL) == 0);
  pthread_barrier_destroy(&phase);
  /* Of the four threads asking one question, the first to look found the cache empty. */
  CHECK(!(first_from_cache[0] && first_from_cache[2] && first_from_cache[4] && first_from_cache[6]));
  CHECK(!(first_from_cache[1] && first_from_cache[3] && first_from_cache[5] && first_from_cache[7]));
  /* What the racing writers left is usable: alone now, a search stores an entry the next uses. */
  for (i = 0; i < 2; ++i) {
    search(shared_device, i == 0 ? 4 : 8, 500);
    CHECK(search(shared_device, i == 0 ? 4 : 8, 600) == 1);
  }

  yirage_kernel_release(shared_kernel);
  yirage_graph_release(shared_graph);
  yirage_context_release(context);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all threads checks passed\n");
  return 0;
}
