/* The main job: superoptimize the RMSNorm + linear benchmark graph (fp16, X [2, 4096],
 * W [4096, 6144]) for this machine's CPU through the CPU backend plugin: the search profiles its
 * cheapest verified candidates on the device and keeps the fastest correct one. Then compile
 * the best graph, run it on our own host tensors (output poisoned first), compare it with the
 * reference executor running the original graph, and time it against the unfused graph on the
 * same backend. Usage: superoptimize [graph name] (default rmsnorm_linear). The CPU plugin is
 * found through YIRAGE_BACKEND_PATH or the install's plugin folder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_graphs.h"

#define TRY(call)                                                             \
  do {                                                                        \
    if ((call) != YIRAGE_OK) {                                                \
      fprintf(stderr, "%s failed: %s\n", #call, yirage_last_error_message()); \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

/* Median time of `graph` compiled for `device`, checked against `reference`. */
static double timed(const yirage_graph *graph, const yirage_graph *reference, const yirage_device *device,
                    const char *what) {
  yirage_kernel *kernel = NULL;
  yirage_measurement m;
  TRY(yirage_compile(graph, device, NULL, &kernel));
  m.struct_size = sizeof m;
  TRY(yirage_kernel_measure(kernel, reference, NULL, &m));
  yirage_kernel_release(kernel);
  if (!m.correct) {
    fprintf(stderr, "%s is wrong: %s\n", what, m.error);
    exit(1);
  }
  return m.median_seconds;
}

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "rmsnorm_linear";
  yirage_graph *graph = NULL, *best = NULL;
  yirage_search_options options;
  yirage_search_result *result = NULL;
  yirage_search_candidate_info info;
  yirage_search_stats stats;
  bench_tensor in[4], out[2];
  const DLTensor *ins[4];
  DLTensor *outs[1];
  size_t n_inputs = 0, count = 0, i;
  uint64_t seed = 7;
  double diff = 0, norm = 0;
  int64_t e;
  yirage_tensor *t;
  yirage_status status;
  yirage_context *context = NULL;
  const yirage_device *cpu = NULL;
  yirage_kernel *kernel = NULL;
  double original_seconds, best_seconds;

  TRY(bench_graph_build(name, 1, YIRAGE_FLOAT16, &graph));
  TRY(yirage_context_create(NULL, &context));
  TRY(yirage_context_get_device(context, "cpu", 0, &cpu));
  yirage_search_options_init(&options);
  options.device = cpu; /* the search targets it and profiles its best candidates there */
  options.time_budget_seconds = 120;
  status = yirage_superoptimize(graph, &options, &result);
  if (status != YIRAGE_OK && status != YIRAGE_ERROR_TIMEOUT) TRY(status);
  TRY(yirage_search_result_num_candidates(result, &count));
  stats.struct_size = sizeof stats;
  TRY(yirage_search_result_stats(result, &stats));
  printf(
      "%s: searched %lld states in %.1f s (first fused candidate after %.1f s), "
      "%lld candidates built, %zu verified\n",
      name, (long long)stats.states, stats.seconds, stats.first_fused_seconds, (long long)stats.candidates, count);
  if (count == 0) {
    fprintf(stderr, "no verified candidate\n");
    return 1;
  }
  info.struct_size = sizeof info;
  for (i = 0; i < count; ++i) {
    TRY(yirage_search_result_candidate(result, i, NULL, &info));
    printf("  %zu: ", i);
    if (info.estimated_seconds >= 0)
      printf("%8.1f us estimated, ", info.estimated_seconds * 1e6);
    else
      printf("not estimated, ");
    if (info.measured_seconds < 0)
      printf("not measured (%s)", info.not_measured);
    else if (info.measured_samples > 1)
      printf("%8.1f us measured (%.1f to %.1f us over %u runs)", info.measured_seconds * 1e6,
             info.measured_min_seconds * 1e6, info.measured_max_seconds * 1e6, info.measured_samples);
    else
      printf("%8.1f us measured", info.measured_seconds * 1e6);
    printf("  %s\n", info.description);
  }
  TRY(yirage_search_result_candidate(result, 0, &best, NULL));

  TRY(yirage_graph_num_inputs(graph, &n_inputs));
  for (i = 0; i < n_inputs; ++i) {
    TRY(yirage_graph_get_input(graph, i, &t));
    if (bench_tensor_alloc(t, &in[i]) != 0) return 1;
    bench_tensor_fill_uniform(&in[i], &seed, -1.0, 1.0);
    ins[i] = &in[i].dl;
  }
  for (i = 0; i < 2; ++i) {
    TRY(yirage_graph_get_output(i == 0 ? graph : best, 0, &t));
    if (bench_tensor_alloc(t, &out[i]) != 0) return 1;
    bench_tensor_poison(&out[i]);
  }
  outs[0] = &out[0].dl; /* the original, by the reference executor (float64) */
  TRY(yirage_graph_run_reference(graph, ins, n_inputs, outs, 1));
  outs[0] = &out[1].dl; /* the best candidate, compiled by the CPU backend */
  TRY(yirage_compile(best, cpu, NULL, &kernel));
  TRY(yirage_kernel_run(kernel, ins, n_inputs, outs, 1, NULL));
  yirage_kernel_release(kernel);
  for (e = 0; e < out[0].count; ++e) {
    const double want = bench_tensor_get(&out[0], e), got = bench_tensor_get(&out[1], e);
    diff += (got - want) * (got - want);
    norm += want * want;
  }
  printf(
      "best candidate on the cpu backend vs the reference executor on the original: "
      "relative error %.2e (fp16 output)\n",
      sqrt(diff / norm));
  original_seconds = timed(graph, graph, cpu, "the unfused graph");
  best_seconds = timed(best, graph, cpu, "the best candidate");
  printf("cpu backend: unfused %.3f ms, superoptimized %.3f ms: %.2fx\n", original_seconds * 1e3, best_seconds * 1e3,
         original_seconds / best_seconds);
  for (i = 0; i < n_inputs; ++i) bench_tensor_free(&in[i]);
  bench_tensor_free(&out[0]);
  bench_tensor_free(&out[1]);
  yirage_graph_release(best);
  yirage_search_result_release(result);
  yirage_graph_release(graph);
  yirage_context_release(context);
  return sqrt(diff / norm) < 1e-3 ? 0 : 1;
}
