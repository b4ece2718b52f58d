/* yirage_superoptimize through the C ABI: a small RMSNorm + linear graph is superoptimized for
 * the built-in h100 description, the best candidate is run by the reference executor on fresh
 * random inputs (outputs poisoned first) and compared with the original; then every error path,
 * the timeout and cancellation statuses, and the cache. */
#include <math.h>
#include <stdlib.h>

#include "bench_graphs.h"
#include "check.h"

static yirage_graph *small_rmsnorm_linear(void) {
  yirage_graph *g = NULL;
  yirage_tensor *x = NULL, *w = NULL, *n = NULL, *o = NULL;
  const int64_t xd[2] = {2, 256}, wd[2] = {256, 384}, norm[1] = {256};
  OK(yirage_graph_create(&g));
  OK(yirage_graph_new_input(g, 2, xd, YIRAGE_FLOAT32, &x));
  OK(yirage_graph_new_input(g, 2, wd, YIRAGE_FLOAT32, &w));
  OK(yirage_graph_rms_norm(g, x, 1, norm, 0.0, NULL, &n));
  OK(yirage_graph_matmul(g, n, w, &o));
  OK(yirage_graph_mark_output(g, o));
  return g;
}

/* Runs both graphs on the same random inputs; returns the relative error of b against a. */
static double compare_runs(const yirage_graph *a, const yirage_graph *b) {
  bench_tensor in[2], out[2];
  const DLTensor *ins[2];
  DLTensor *outs[1];
  uint64_t seed = 12345;
  double diff = 0, norm = 0;
  int64_t e;
  size_t i;
  yirage_tensor *t;
  for (i = 0; i < 2; ++i) {
    OK(yirage_graph_get_input(a, i, &t));
    CHECK(bench_tensor_alloc(t, &in[i]) == 0);
    bench_tensor_fill_uniform(&in[i], &seed, -1.0, 1.0);
    ins[i] = &in[i].dl;
  }
  for (i = 0; i < 2; ++i) {
    OK(yirage_graph_get_output(i == 0 ? a : b, 0, &t));
    CHECK(bench_tensor_alloc(t, &out[i]) == 0);
    bench_tensor_poison(&out[i]);
    outs[0] = &out[i].dl;
    OK(yirage_graph_run_reference(i == 0 ? a : b, ins, 2, outs, 1));
  }
  for (e = 0; e < out[0].count; ++e) {
    const double want = bench_tensor_get(&out[0], e), got = bench_tensor_get(&out[1], e);
    diff += (got - want) * (got - want);
    norm += want * want;
  }
  for (i = 0; i < 2; ++i) {
    bench_tensor_free(&in[i]);
    bench_tensor_free(&out[i]);
  }
  return sqrt(diff / norm);
}

static int64_t progress_calls = 0;
static void on_progress(const yirage_search_progress *p, void *user) {
  CHECK(p->struct_size >= sizeof(yirage_search_progress));
  CHECK(user == &progress_calls);
  ++progress_calls;
}

int main(int argc, char **argv) {
  yirage_graph *g = small_rmsnorm_linear(), *best = NULL;
  yirage_target_properties h100;
  yirage_search_options options;
  yirage_search_result *result = NULL, *untouched = (yirage_search_result *)&options;
  yirage_search_candidate_info info;
  yirage_search_stats stats;
  size_t count = 0, operators = 0;
  int32_t cancel = 1;
  const int64_t bad_grid[2] = {4, 1};
  const char *cache = argc > 1 ? argv[1] : NULL;

  h100.struct_size = sizeof h100;
  OK(yirage_target_builtin("h100", &h100));
  yirage_search_options_init(&options);
  CHECK(options.struct_size == sizeof options && options.max_candidates == 4);
  options.target = &h100;
  options.threads = 2;
  options.progress = on_progress;
  options.progress_user_data = &progress_calls;

  OK(yirage_superoptimize(g, &options, &result));
  OK(yirage_search_result_num_candidates(result, &count));
  CHECK(count >= 1 && count <= 4);
  info.struct_size = sizeof info;
  OK(yirage_search_result_candidate(result, 0, &best, &info));
  CHECK(info.verified_trials == 2 && info.estimated_seconds > 0);
  CHECK(strstr(info.description, "customized") != NULL);
  OK(yirage_graph_num_operators(best, &operators));
  CHECK(operators == 3); /* two inputs and one customized operator */
  CHECK(compare_runs(g, best) < 1e-6);
  stats.struct_size = sizeof stats;
  OK(yirage_search_result_stats(result, &stats));
  CHECK(stats.states > 0 && stats.pruned_abstract > 0 && stats.structures > 0);
  CHECK(stats.fingerprint_checks >= (int64_t)count && stats.first_fused_seconds >= 0);
  CHECK(stats.from_cache == 0 && progress_calls == stats.plans);
  yirage_graph_release(best);

  /* Errors leave the out-parameters alone and name the problem. */
  EXPECT_INVALID(yirage_search_result_candidate(result, count, &best, &info), "out of range");
  info.struct_size = 8;
  EXPECT_INVALID(yirage_search_result_candidate(result, 0, NULL, &info), "struct_size");
  stats.struct_size = 8;
  EXPECT_INVALID(yirage_search_result_stats(result, &stats), "struct_size");
  EXPECT_INVALID(yirage_search_result_num_candidates(NULL, &count), "result is NULL");
  EXPECT_INVALID(yirage_search_result_num_candidates((yirage_search_result *)g, &count), "not a live");
  yirage_search_result_release(result);
  EXPECT_INVALID(yirage_search_result_num_candidates(result, &count), "not a live");
  yirage_search_result_release(result); /* a dead handle is ignored */
  yirage_search_result_release(NULL);

  result = untouched;
  EXPECT_INVALID(yirage_superoptimize(g, NULL, &result), "options is NULL");
  EXPECT_INVALID(yirage_superoptimize(NULL, &options, &result), "graph is NULL");
  options.struct_size = 16;
  EXPECT_INVALID(yirage_superoptimize(g, &options, &result), "struct_size");
  options.struct_size = sizeof options;
  options.max_block_ops = 0;
  EXPECT_INVALID(yirage_superoptimize(g, &options, &result), "max_block_ops");
  options.max_block_ops = 8;
  options.time_budget_seconds = -1;
  EXPECT_INVALID(yirage_superoptimize(g, &options, &result), "time_budget_seconds");
  options.time_budget_seconds = 60;
  options.grid_candidates = bad_grid;
  options.num_grid_candidates = 2;
  EXPECT_INVALID(yirage_superoptimize(g, &options, &result), "grid_candidates");
  options.grid_candidates = NULL;
  EXPECT_INVALID(yirage_superoptimize(g, &options, &result), "grid_candidates is NULL");
  options.num_grid_candidates = 0;
  h100.compute_units = 0;
  EXPECT_INVALID(yirage_superoptimize(g, &options, &result), "compute_units");
  OK(yirage_target_builtin("h100", &h100));
  CHECK(result == untouched);

  /* Cancelled before it starts: the status says so, and the (empty) result is still given. */
  options.cancel = &cancel;
  result = NULL;
  CHECK(yirage_superoptimize(g, &options, &result) == YIRAGE_ERROR_CANCELLED);
  CHECK(result != NULL);
  OK(yirage_search_result_num_candidates(result, &count));
  CHECK(count == 0);
  yirage_search_result_release(result);
  options.cancel = NULL;

  /* A budget too small to finish: TIMEOUT, with whatever was verified. */
  options.time_budget_seconds = 1e-6;
  result = NULL;
  CHECK(yirage_superoptimize(g, &options, &result) == YIRAGE_ERROR_TIMEOUT);
  CHECK(result != NULL && strstr(yirage_last_error_message(), "budget") != NULL);
  yirage_search_result_release(result);
  options.time_budget_seconds = 60;

  /* The cache answers the same request a second time. */
  if (cache) {
    options.cache_dir = cache;
    OK(yirage_superoptimize(g, &options, &result));
    yirage_search_result_release(result);
    OK(yirage_superoptimize(g, &options, &result));
    stats.struct_size = sizeof stats;
    OK(yirage_search_result_stats(result, &stats));
    CHECK(stats.from_cache == 1);
    OK(yirage_search_result_candidate(result, 0, &best, NULL));
    CHECK(compare_runs(g, best) < 1e-6);
    yirage_graph_release(best);
    yirage_search_result_release(result);
  }
  yirage_graph_release(g);
  return finish("search");
}
