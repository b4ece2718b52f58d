/* yirage_graph_to_dot through yirage.h only: the Graphviz picture of a fused benchmark graph shows
 * its customized operator's µGraph, the text is the same on every call, and bad handles are
 * refused. Usage: pictures_test EXAMPLES_GRAPHS_DIR */
#include <stdio.h>
#include <string.h>

#include "bench_graphs.h"
#include "check.h"

#define CONTAINS(text, fragment) CHECK(strstr((text), (fragment)) != NULL)

/* The DOT text of `g` (a new blob the caller releases). */
static yirage_blob *dot_of(const yirage_graph *g) {
  yirage_blob *blob = NULL;
  OK(yirage_graph_to_dot(g, &blob));
  return blob;
}

static void test_fused_graph(const char *dir) {
  char path[1024];
  yirage_graph *g = NULL;
  yirage_blob *dot, *again;
  const char *text;
  snprintf(path, sizeof path, "%s/rmsnorm_linear_fused.json", dir);
  OK(yirage_graph_load(path, &g));
  dot = dot_of(g);
  text = (const char *)yirage_blob_data(dot);
  CHECK(yirage_blob_size(dot) == strlen(text) + 1);
  CHECK(strncmp(text, "digraph yirage {\n", 17) == 0);
  CHECK(strcmp(text + strlen(text) - 2, "}\n") == 0);
  /* Kernel tensors with shape and dtype, the customized operator as a cluster. */
  CONTAINS(text, "t0 [label=\"t0: input 0\\n[2,4096] float16\"");
  CONTAINS(text, "t2 [label=\"t2: output 0\\n[2,6144] float16\"");
  CONTAINS(text, "subgraph cluster_k2 {");
  CONTAINS(text, "grid 96x1x1, 128 threads per block\\lfor-loop 64, 9736 bytes of tiles\\l");
  /* Its µGraph: iterators (imap, fmap) in the for-loop, accumulators, the saver (omap). */
  CONTAINS(text, "subgraph cluster_k2_loop {");
  CONTAINS(text, "label=\"for-loop: 64 iterations\"");
  CONTAINS(text, "input_iterator\\nreads [2,4096] float16\\nimap={} fmap=1");
  CONTAINS(text, "input_iterator\\nreads [4096,6144] float16\\nimap={x->1} fmap=0");
  CONTAINS(text, "accum_reduce_rms\\nover 64 iterations");
  CONTAINS(text, "output_saver\\nwrites [2,6144] float16\\nomap={x->1}");
  /* Edges: kernel tensors into iterators, tiles with their shapes, the saver to its tensor. */
  CONTAINS(text, "t1 -> k2_op1;");
  CONTAINS(text, "k2_op2 -> k2_op3 [label=\"s2 [2,64]\"");
  CONTAINS(text, "k2_op6 -> t2;");
  again = dot_of(g);
  CHECK(yirage_blob_size(again) == yirage_blob_size(dot) &&
        memcmp(yirage_blob_data(again), yirage_blob_data(dot), yirage_blob_size(dot)) == 0);
  yirage_blob_release(again);
  yirage_blob_release(dot);
  yirage_graph_release(g);
}

/* An unfused graph is kernel operators between tensors, without clusters. */
static void test_unfused_graph(void) {
  yirage_graph *g = NULL;
  yirage_blob *dot;
  const char *text;
  OK(bench_graph_build("gated_mlp", 1, YIRAGE_FLOAT16, &g));
  dot = dot_of(g);
  text = (const char *)yirage_blob_data(dot);
  CONTAINS(text, "[label=\"matmul\"");
  CONTAINS(text, "[label=\"silu\"");
  CHECK(strstr(text, "subgraph") == NULL);
  yirage_blob_release(dot);
  yirage_graph_release(g);
}

static void test_errors(void) {
  yirage_graph *g = NULL, *released = NULL;
  yirage_blob *sentinel = (yirage_blob *)(void *)&failures, *out = sentinel;
  OK(yirage_graph_create(&g));
  OK(yirage_graph_create(&released));
  yirage_graph_release(released);
  EXPECT_INVALID(yirage_graph_to_dot(NULL, &out), "graph is NULL");
  EXPECT_INVALID(yirage_graph_to_dot(released, &out), "not a live yirage_graph");
  EXPECT_INVALID(yirage_graph_to_dot(g, NULL), "out_text is NULL");
  CHECK(out == sentinel); /* untouched on failure */
  yirage_graph_release(g);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: pictures_test EXAMPLES_GRAPHS_DIR\n");
    return 2;
  }
  test_fused_graph(argv[1]);
  test_unfused_graph();
  test_errors();
  return finish("graph picture");
}
