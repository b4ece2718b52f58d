/* Searches in shards through the C ABI (yirage_search_plan_*): a plan of the RMSNorm + linear
 * benchmark graph run in three shards by a second plan, their partial results added to a third
 * plan, merged, and compared with yirage_superoptimize's answer candidate by candidate (serialized
 * graphs, estimates, descriptions); then missing units, foreign and malformed partial results,
 * and the argument checks. */
#include <stdlib.h>

#include "bench_graphs.h"
#include "check.h"

/* The graph's bytes, as a blob the caller releases. */
static yirage_blob *bytes_of(const yirage_graph *g) {
  yirage_blob *blob = NULL;
  OK(yirage_graph_serialize(g, YIRAGE_GRAPH_FORMAT_BINARY, &blob));
  return blob;
}

/* Whether results a and b hold the same candidates in the same order. */
static int same_candidates(const yirage_search_result *a, const yirage_search_result *b) {
  size_t na = 0, nb = 0, i;
  OK(yirage_search_result_num_candidates(a, &na));
  OK(yirage_search_result_num_candidates(b, &nb));
  if (na != nb || na == 0) return 0;
  for (i = 0; i < na; ++i) {
    yirage_graph *ga = NULL, *gb = NULL;
    yirage_search_candidate_info ia, ib;
    yirage_blob *ba, *bb;
    int same;
    ia.struct_size = ib.struct_size = sizeof ia;
    OK(yirage_search_result_candidate(a, i, &ga, &ia));
    OK(yirage_search_result_candidate(b, i, &gb, &ib));
    ba = bytes_of(ga);
    bb = bytes_of(gb);
    same = yirage_blob_size(ba) == yirage_blob_size(bb) &&
           memcmp(yirage_blob_data(ba), yirage_blob_data(bb), yirage_blob_size(ba)) == 0 &&
           ia.estimated_seconds == ib.estimated_seconds && strcmp(ia.description, ib.description) == 0;
    yirage_blob_release(ba);
    yirage_blob_release(bb);
    yirage_graph_release(ga);
    yirage_graph_release(gb);
    if (!same) return 0;
  }
  return 1;
}

int main(void) {
  yirage_graph *g = NULL, *other = NULL;
  yirage_target_properties h100;
  yirage_search_options options;
  yirage_search_plan *planner = NULL, *runner = NULL, *gatherer = NULL, *foreign = NULL;
  yirage_search_result *whole = NULL, *merged = NULL, *untouched = (yirage_search_result *)&options;
  yirage_blob *partials[3] = {NULL, NULL, NULL};
  char id[33], other_id[33];
  size_t units = 0, added = 0, s, u;
  int32_t done = 0;
  uint32_t bad_unit;

  OK(bench_graph_build("rmsnorm_linear", 1, YIRAGE_FLOAT16, &g));
  OK(bench_graph_build("qknorm", 1, YIRAGE_FLOAT16, &other));
  h100.struct_size = sizeof h100;
  OK(yirage_target_builtin("h100", &h100));
  yirage_search_options_init(&options);
  options.target = &h100;
  options.threads = 2;
  options.time_budget_seconds = 300;
  OK(yirage_superoptimize(g, &options, &whole));

  OK(yirage_search_plan_create(g, &options, 12, &planner));
  OK(yirage_search_plan_create(g, &options, 12, &runner));
  OK(yirage_search_plan_create(g, &options, 12, &gatherer));
  OK(yirage_search_plan_num_units(planner, &units));
  CHECK(units >= 2);
  OK(yirage_search_plan_id(planner, id));
  CHECK(strlen(id) == 32);
  OK(yirage_search_plan_id(runner, other_id));
  CHECK(strcmp(id, other_id) == 0);

  /* Three shards, every third unit each. */
  for (s = 0; s < 3; ++s) {
    uint32_t mine[256];
    size_t n = 0;
    for (u = s; u < units && n < 256; u += 3) mine[n++] = (uint32_t)u;
    OK(yirage_search_plan_run_units(runner, mine, n, &partials[s]));
  }
  /* Before every unit is in, the merge is incomplete: TIMEOUT with a result. */
  OK(yirage_search_plan_add_partial(gatherer, yirage_blob_data(partials[0]), yirage_blob_size(partials[0]), &added));
  CHECK(added >= 1);
  OK(yirage_search_plan_unit_done(gatherer, 0, &done));
  CHECK(done == 1);
  OK(yirage_search_plan_unit_done(gatherer, 1, &done));
  CHECK(done == 0);
  CHECK(yirage_search_plan_merge(gatherer, &options, &merged) == YIRAGE_ERROR_TIMEOUT && merged != NULL);
  yirage_search_result_release(merged);
  merged = NULL;
  for (s = 0; s < 3; ++s) {
    OK(yirage_search_plan_add_partial(gatherer, yirage_blob_data(partials[s]), yirage_blob_size(partials[s]), &added));
    CHECK(s == 0 ? added == 0 : added >= 1); /* a unit added twice counts once */
  }
  OK(yirage_search_plan_merge(gatherer, &options, &merged));
  CHECK(same_candidates(whole, merged));
  yirage_search_result_release(merged);

  /* A partial of another graph's plan, truncated bytes, bad arguments: refused, plan unchanged. */
  OK(yirage_search_plan_create(other, &options, 12, &foreign));
  EXPECT_INVALID(
      yirage_search_plan_add_partial(foreign, yirage_blob_data(partials[0]), yirage_blob_size(partials[0]), &added),
      "another plan");
  CHECK(yirage_search_plan_add_partial(gatherer, yirage_blob_data(partials[1]), yirage_blob_size(partials[1]) / 2,
                                       &added) == YIRAGE_ERROR_CORRUPT_DATA);
  CHECK(yirage_search_plan_add_partial(gatherer, "YRSC", 4, NULL) == YIRAGE_ERROR_CORRUPT_DATA);
  EXPECT_INVALID(yirage_search_plan_add_partial(gatherer, NULL, 10, NULL), "data is NULL");
  bad_unit = (uint32_t)units;
  EXPECT_INVALID(yirage_search_plan_run_units(runner, &bad_unit, 1, &partials[0]), "of a plan of");
  EXPECT_INVALID(yirage_search_plan_unit_done(gatherer, units, &done), "of a plan of");
  EXPECT_INVALID(yirage_search_plan_create(g, &options, 0, &foreign), "min_units");
  EXPECT_INVALID(yirage_search_plan_num_units(NULL, &units), "plan is NULL");
  EXPECT_INVALID(yirage_search_plan_merge((yirage_search_plan *)g, &options, &untouched), "not a live");
  CHECK(untouched == (yirage_search_result *)&options);
  options.max_block_ops = 9; /* other units */
  EXPECT_INVALID(yirage_search_plan_merge(gatherer, &options, &untouched), "other units");
  memset(&options, 0, sizeof options); /* struct_size 0 */
  CHECK(yirage_search_plan_merge(gatherer, &options, &untouched) == YIRAGE_ERROR_INVALID_ARGUMENT);

  for (s = 0; s < 3; ++s) yirage_blob_release(partials[s]);
  yirage_search_plan_release(planner);
  yirage_search_plan_release(runner);
  yirage_search_plan_release(gatherer);
  yirage_search_plan_release(foreign);
  yirage_search_plan_release(NULL);
  yirage_search_result_release(whole);
  yirage_graph_release(g);
  yirage_graph_release(other);
  return finish("search shards");
}
