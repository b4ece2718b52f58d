/* The main job: superoptimize the RMSNorm + linear benchmark graph (fp16, X [2, 4096],
 * W [4096, 6144]) for this machine's CPU, print what the search found, then run the best
 * candidate and the original on the same random inputs with the reference executor (outputs
 * poisoned first) and compare. Until the CPU backend plugin lands, the reference executor is
 * what runs graphs. Usage: superoptimize [graph name] (default rmsnorm_linear). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_graphs.h"

#define TRY(call)                                                               \
  do {                                                                          \
    if ((call) != YIRAGE_OK) {                                                  \
      fprintf(stderr, "%s failed: %s\n", #call, yirage_last_error_message());   \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

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

  TRY(bench_graph_build(name, 1, YIRAGE_FLOAT16, &graph));
  yirage_search_options_init(&options); /* target NULL: this machine's CPU */
  options.time_budget_seconds = 120;
  status = yirage_superoptimize(graph, &options, &result);
  if (status != YIRAGE_OK && status != YIRAGE_ERROR_TIMEOUT) TRY(status);
  TRY(yirage_search_result_num_candidates(result, &count));
  stats.struct_size = sizeof stats;
  TRY(yirage_search_result_stats(result, &stats));
  printf("%s: searched %lld states in %.1f s (first fused candidate after %.1f s), "
         "%lld candidates built, %zu verified\n",
         name, (long long)stats.states, stats.seconds, stats.first_fused_seconds,
         (long long)stats.candidates, count);
  if (count == 0) {
    fprintf(stderr, "no verified candidate\n");
    return 1;
  }
  info.struct_size = sizeof info;
  for (i = 0; i < count; ++i) {
    TRY(yirage_search_result_candidate(result, i, NULL, &info));
    printf("  %zu: %8.1f us estimated  %s\n", i, info.estimated_seconds * 1e6, info.description);
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
    outs[0] = &out[i].dl;
    TRY(yirage_graph_run_reference(i == 0 ? graph : best, ins, n_inputs, outs, 1));
  }
  for (e = 0; e < out[0].count; ++e) {
    const double want = bench_tensor_get(&out[0], e), got = bench_tensor_get(&out[1], e);
    diff += (got - want) * (got - want);
    norm += want * want;
  }
  printf("best candidate vs original on random inputs: relative error %.2e (fp16 output)\n",
         sqrt(diff / norm));
  for (i = 0; i < n_inputs; ++i) bench_tensor_free(&in[i]);
  bench_tensor_free(&out[0]);
  bench_tensor_free(&out[1]);
  yirage_graph_release(best);
  yirage_search_result_release(result);
  yirage_graph_release(graph);
  return sqrt(diff / norm) < 1e-3 ? 0 : 1;
}
