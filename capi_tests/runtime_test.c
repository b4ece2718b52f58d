/* Contexts, devices, compile, run, measure and profiling through the C ABI, with the CPU plugin
 * given by path (argv[1]) and a cache folder (argv[2]): kernels run on the caller's DLPack
 * tensors (output poisoned first) and are compared with the reference executor; every bad
 * tensor, handle and option is refused with a message; a search with the device profiles its
 * candidates. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "bench_graphs.h"
#include "check.h"

/* Sanitized builds run this library several times slower: the bound scales with them. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLOWDOWN 3.0
#else
#define SLOWDOWN 1.0
#endif

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The budget bounds the whole call: a chain of 20,000 neg operators (once 33-35 s and OK on a
 * 2 s budget, 99% of it outside the budget's accounting) returns within 3 s (9 s in a sanitized
 * build), and its answer is checked and measured. */
static void test_budget_is_a_bound(const yirage_device *cpu) {
  const int64_t dims[2] = {4, 4};
  yirage_graph *g = NULL, *best = NULL;
  yirage_tensor *x = NULL;
  yirage_kernel *kernel = NULL;
  yirage_search_options so;
  yirage_search_result *result = NULL;
  yirage_search_candidate_info info;
  yirage_status status;
  double started, elapsed;
  int i;
  OK(yirage_graph_create(&g));
  OK(yirage_graph_new_input(g, 2, dims, YIRAGE_FLOAT32, &x));
  for (i = 0; i < 20000; ++i) OK(yirage_graph_neg(g, x, &x));
  OK(yirage_graph_mark_output(g, x));
  /* Its kernel compiled once before: a cold kernel cache's C++ compile of the input graph's
   * kernel (the one measurement made whatever the time) is not what this measures. */
  OK(yirage_compile(g, cpu, NULL, &kernel));
  yirage_kernel_release(kernel);
  yirage_search_options_init(&so);
  so.device = cpu;
  so.time_budget_seconds = 2;
  started = now_seconds();
  status = yirage_superoptimize(g, &so, &result);
  elapsed = now_seconds() - started;
  if (elapsed >= 3.0 * SLOWDOWN) fprintf(stderr, "the search took %.2f s\n", elapsed);
  CHECK(elapsed < 3.0 * SLOWDOWN);
  CHECK(status == YIRAGE_OK || status == YIRAGE_ERROR_TIMEOUT);
  info.struct_size = sizeof info;
  OK(yirage_search_result_candidate(result, 0, &best, &info));
  CHECK(info.measured_seconds > 0);
  yirage_graph_release(best);
  yirage_search_result_release(result);
  yirage_graph_release(g);
}

static yirage_graph *small_graph(void) {
  yirage_graph *g = NULL;
  yirage_tensor *x = NULL, *w = NULL, *n = NULL, *o = NULL;
  const int64_t xd[2] = {4, 128}, wd[2] = {128, 192}, norm[1] = {128};
  OK(yirage_graph_create(&g));
  OK(yirage_graph_new_input(g, 2, xd, YIRAGE_FLOAT16, &x));
  OK(yirage_graph_new_input(g, 2, wd, YIRAGE_FLOAT16, &w));
  OK(yirage_graph_rms_norm(g, x, 1, norm, 0.0, NULL, &n));
  OK(yirage_graph_matmul(g, n, w, &o));
  OK(yirage_graph_mark_output(g, o));
  return g;
}

int main(int argc, char **argv) {
  yirage_context *context = NULL;
  const yirage_device *cpu = NULL, *again = NULL;
  yirage_device_info info;
  yirage_backend_info backend;
  yirage_graph *g = small_graph(), *best = NULL;
  yirage_kernel *kernel = NULL;
  yirage_measurement m;
  yirage_search_options so;
  yirage_search_result *result = NULL;
  yirage_search_profile_record record;
  yirage_search_stats stats;
  yirage_search_candidate_info candidate;
  yirage_blob *text = NULL;
  bench_tensor in[2], out, want;
  const DLTensor *ins[2];
  DLTensor *outs[1];
  uint64_t seed = 3;
  size_t i, n = 0;
  yirage_tensor *t;
  double diff = 0, norm = 0;
  int64_t e;
  const char *errors = NULL;
  int64_t saved;

  if (argc < 3) return 2;
  OK(bench_context_with_plugin(argv[1], argv[2], &context));
  OK(yirage_context_num_backends(context, &n));
  CHECK(n == 1);
  backend.struct_size = sizeof backend;
  OK(yirage_context_backend_info(context, 0, &backend));
  CHECK(strcmp(backend.name, "cpu") == 0 && backend.num_devices == 1);
  CHECK(yirage_context_backend_info(context, 1, &backend) == YIRAGE_ERROR_NOT_FOUND);
  OK(yirage_context_load_errors(context, &errors));
  CHECK(errors != NULL && errors[0] == '\0');
  OK(yirage_context_get_device(context, "cpu", 0, &cpu));
  OK(yirage_context_get_device(context, "cpu", 0, &again));
  CHECK(cpu == again);
  CHECK(yirage_context_get_device(context, "cpu", 1, &again) == YIRAGE_ERROR_NOT_FOUND);
  CHECK(yirage_context_get_device(context, "cuda", 0, &again) == YIRAGE_ERROR_NOT_FOUND &&
        strstr(yirage_last_error_message(), "loaded: cpu") != NULL);
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  OK(yirage_device_get_info(cpu, &info));
  CHECK(info.dlpack_device_type == kDLCPU && info.target.compute_units > 0);
  CHECK(info.dtypes & (1u << YIRAGE_FLOAT16));
  {
    yirage_context *bad = NULL;
    CHECK(bench_context_with_plugin("/nonexistent/libyirage-backend-x.so", argv[2], &bad) == YIRAGE_ERROR_NOT_FOUND &&
          bad == NULL);
  }

  /* Compile and run on our own tensors; compare with the reference executor. */
  OK(yirage_compile(g, cpu, NULL, &kernel));
  for (i = 0; i < 2; ++i) {
    OK(yirage_graph_get_input(g, i, &t));
    CHECK(bench_tensor_alloc(t, &in[i]) == 0);
    bench_tensor_fill_uniform(&in[i], &seed, -1.0, 1.0);
    ins[i] = &in[i].dl;
  }
  OK(yirage_graph_get_output(g, 0, &t));
  CHECK(bench_tensor_alloc(t, &out) == 0 && bench_tensor_alloc(t, &want) == 0);
  bench_tensor_poison(&out);
  outs[0] = &want.dl;
  OK(yirage_graph_run_reference(g, ins, 2, outs, 1));
  outs[0] = &out.dl;
  OK(yirage_kernel_run(kernel, ins, 2, outs, 1, NULL));
  for (e = 0; e < out.count; ++e) {
    const double a = bench_tensor_get(&want, e), b = bench_tensor_get(&out, e);
    diff += (a - b) * (a - b);
    norm += a * a;
  }
  CHECK(sqrt(diff / norm) < 5e-3);

  /* Bad runs are refused before anything runs. */
  EXPECT_INVALID(yirage_kernel_run(kernel, ins, 1, outs, 1, NULL), "takes 2 inputs");
  EXPECT_INVALID(yirage_kernel_run(NULL, ins, 2, outs, 1, NULL), "kernel is NULL");
  EXPECT_INVALID(yirage_kernel_run(kernel, ins, 2, outs, 1, (void *)1), "no streams");
  saved = in[0].dl.shape[1];
  in[0].dl.shape[1] = 127;
  EXPECT_INVALID(yirage_kernel_run(kernel, ins, 2, outs, 1, NULL), "input 0 has shape [4,127]");
  in[0].dl.shape[1] = saved;
  in[1].dl.dtype.code = kDLFloat;
  in[1].dl.dtype.bits = 32;
  EXPECT_INVALID(yirage_kernel_run(kernel, ins, 2, outs, 1, NULL),
                 "input 1 has DLPack dtype {code 2, bits 32, lanes 1} (float32); the graph expects float16");
  in[1].dl.dtype.bits = 16;
  out.dl.device.device_type = kDLCUDA;
  EXPECT_INVALID(yirage_kernel_run(kernel, ins, 2, outs, 1, NULL), "output 0 is on DLPack device");
  out.dl.device.device_type = kDLCPU;
  {
    const void *data = in[0].dl.data;
    in[0].dl.data = NULL;
    EXPECT_INVALID(yirage_kernel_run(kernel, ins, 2, outs, 1, NULL), "data is NULL");
    in[0].dl.data = (void *)data;
    /* In place: the output over input 1's memory, from its start and from its second element
     * (in bounds either way: a regression writes inside input 1, not past it). */
    CHECK(out.count < in[1].count);
    data = out.dl.data;
    out.dl.data = in[1].dl.data;
    EXPECT_INVALID(yirage_kernel_run(kernel, ins, 2, outs, 1, NULL), "output 0 overlaps input 1 in memory");
    out.dl.data = (char *)in[1].dl.data + 2;
    EXPECT_INVALID(yirage_kernel_run(kernel, ins, 2, outs, 1, NULL), "output 0 overlaps input 1");
    out.dl.data = (void *)data;
  }

  /* Measurement: correct against its own graph, timed. */
  m.struct_size = sizeof m;
  OK(yirage_kernel_measure(kernel, NULL, NULL, &m));
  CHECK(m.correct == 1 && m.median_seconds > 0 && m.error[0] == '\0');
  {
    /* ABI 1.3: a cache flush before each timed run; an older caller's options end before it. */
    yirage_measure_options mo;
    yirage_measure_options_init(&mo);
    CHECK(mo.flush_bytes == 0 && mo.repeats == 10);
    mo.flush_bytes = 1u << 20;
    OK(yirage_kernel_measure(kernel, NULL, &mo, &m));
    CHECK(m.correct == 1 && m.median_seconds > 0);
    mo.flush_bytes = (uint64_t)1 << 41;
    EXPECT_INVALID(yirage_kernel_measure(kernel, NULL, &mo, &m), "flush_bytes");
    mo.struct_size = offsetof(yirage_measure_options, flush_bytes);
    OK(yirage_kernel_measure(kernel, NULL, &mo, &m)); /* not read */
    CHECK(m.correct == 1);
    mo.struct_size = offsetof(yirage_measure_options, repeats);
    EXPECT_INVALID(yirage_kernel_measure(kernel, NULL, &mo, &m), "struct_size");
  }
  /* ABI 1.11: how a run launches. */
  OK(yirage_kernel_describe(kernel, &text));
  CHECK(strstr((const char *)yirage_blob_data(text), " a run on cpu device 0:\n  launch 1: operator ") != NULL);
  yirage_blob_release(text);
  EXPECT_INVALID(yirage_kernel_describe(kernel, NULL), "out_text");
  yirage_kernel_release(kernel);
  yirage_kernel_release(kernel); /* dead handles are ignored */
  EXPECT_INVALID(yirage_kernel_measure(kernel, NULL, NULL, &m), "not a live yirage_kernel");
  EXPECT_INVALID(yirage_kernel_describe(kernel, &text), "not a live yirage_kernel");

  OK(yirage_graph_describe(g, &text));
  CHECK(strstr((const char *)yirage_blob_data(text), "rms_norm(t0)") != NULL);
  yirage_blob_release(text);

  /* A search on the device profiles its candidates; the best is correct and measured. */
  yirage_search_options_init(&so);
  so.device = cpu;
  so.time_budget_seconds = 60;
  so.profile_top_k = 2;
  so.profile_repeats = 2;
  OK(yirage_superoptimize(g, &so, &result));
  OK(yirage_search_result_num_profiled(result, &n));
  test_budget_is_a_bound(cpu);
  CHECK(n >= 2 && n <= 3); /* up to 2 candidates, then the input graph */
  record.struct_size = sizeof record;
  for (i = 0; i < n; ++i) {
    OK(yirage_search_result_profiled(result, i, &record));
    CHECK(record.kept == 1 && record.measured_seconds > 0 && record.relative_error >= 0);
    /* ABI 1.7: the spread of its timed runs */
    CHECK(record.samples == 2 && record.min_seconds <= record.measured_seconds &&
          record.measured_seconds <= record.max_seconds);
  }
  record.struct_size = offsetof(yirage_search_profile_record, min_seconds); /* an ABI 1.6 caller's */
  record.samples = 12345;
  OK(yirage_search_result_profiled(result, 0, &record));
  CHECK(record.samples == 12345 && record.measured_seconds > 0);
  EXPECT_INVALID(yirage_search_result_profiled(result, n, &record), "out of range");
  stats.struct_size = sizeof stats;
  stats.unbuildable = -1;
  OK(yirage_search_result_stats(result, &stats));
  CHECK(stats.unbuildable == 0);                                  /* the CPU backend builds every candidate */
  stats.struct_size = offsetof(yirage_search_stats, unbuildable); /* an ABI 1.3 caller's */
  stats.unbuildable = -1;
  OK(yirage_search_result_stats(result, &stats));
  CHECK(stats.unbuildable == -1);
  candidate.struct_size = sizeof candidate;
  OK(yirage_search_result_candidate(result, 0, &best, &candidate));
  CHECK(candidate.measured_seconds > 0);
  CHECK(candidate.measured_samples == 2 && candidate.measured_min_seconds <= candidate.measured_seconds &&
        candidate.measured_seconds <= candidate.measured_max_seconds);
  CHECK(candidate.not_measured[0] == '\0');
  {
    /* A candidate without a measurement says why, never a time of -1 alone. */
    size_t count = 0, c;
    OK(yirage_search_result_num_candidates(result, &count));
    for (c = 0; c < count; ++c) {
      yirage_search_candidate_info other;
      other.struct_size = sizeof other;
      OK(yirage_search_result_candidate(result, c, NULL, &other));
      CHECK((other.measured_seconds < 0) == (other.not_measured[0] != '\0'));
    }
  }
  OK(yirage_compile(best, cpu, NULL, &kernel));
  OK(yirage_kernel_measure(kernel, g, NULL, &m));
  CHECK(m.correct == 1);
  yirage_kernel_release(kernel);
  so.profile_top_k = 0;
  EXPECT_INVALID(yirage_superoptimize(g, &so, &result), "profile_top_k");

  /* A kernel outlives its context; the context's devices do not. */
  OK(yirage_compile(best, cpu, NULL, &kernel));
  yirage_context_release(context);
  EXPECT_INVALID(yirage_device_get_info(cpu, &info), "not a live yirage_device");
  outs[0] = &out.dl;
  OK(yirage_kernel_run(kernel, ins, 2, outs, 1, NULL));
  yirage_kernel_release(kernel);

  yirage_graph_release(best);
  yirage_search_result_release(result);
  for (i = 0; i < 2; ++i) bench_tensor_free(&in[i]);
  bench_tensor_free(&out);
  bench_tensor_free(&want);
  yirage_graph_release(g);
  return finish("runtime");
}
