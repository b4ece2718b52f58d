/* Graph files through yirage.h only: save/load in both formats, byte buffers, the checked-in
 * examples/graphs files, and the error paths. Usage: files_test EXAMPLES_GRAPHS_DIR TMP_DIR */
#include <stdio.h>
#include <string.h>

#include "bench_graphs.h"
#include "check.h"

static int same_bytes(const yirage_graph *a, const yirage_graph *b) {
  yirage_blob *x = NULL, *y = NULL;
  int same;
  OK(yirage_graph_serialize(a, YIRAGE_GRAPH_FORMAT_BINARY, &x));
  OK(yirage_graph_serialize(b, YIRAGE_GRAPH_FORMAT_BINARY, &y));
  same = yirage_blob_size(x) == yirage_blob_size(y) &&
         memcmp(yirage_blob_data(x), yirage_blob_data(y), yirage_blob_size(x)) == 0;
  yirage_blob_release(x);
  yirage_blob_release(y);
  return same;
}

static void test_round_trips(const char *tmp) {
  yirage_graph *g = NULL, *loaded = NULL;
  yirage_blob *blob = NULL;
  char path[1024];
  const char *const suffixes[2] = {".yrg", ".json"};
  size_t i;
  OK(bench_graph_build("qknorm", 1, YIRAGE_BFLOAT16, &g));
  for (i = 0; i < 2; ++i) {
    snprintf(path, sizeof path, "%s/qknorm%s", tmp, suffixes[i]);
    OK(yirage_graph_save(g, path));
    OK(yirage_graph_load(path, &loaded));
    CHECK(same_bytes(g, loaded));
    yirage_graph_release(loaded);
    loaded = NULL;
  }
  OK(yirage_graph_serialize(g, YIRAGE_GRAPH_FORMAT_JSON, &blob));
  CHECK(((const char *)yirage_blob_data(blob))[0] == '{');
  OK(yirage_graph_deserialize(yirage_blob_data(blob), yirage_blob_size(blob), &loaded));
  CHECK(same_bytes(g, loaded));
  {
    size_t n_inputs = 0;
    yirage_tensor *t;
    yirage_dtype dtype = YIRAGE_FLOAT32;
    OK(yirage_graph_num_inputs(loaded, &n_inputs));
    CHECK(n_inputs == 3);
    OK(yirage_graph_get_output(loaded, 0, &t));
    OK(yirage_tensor_get_dtype(t, &dtype));
    CHECK(dtype == YIRAGE_BFLOAT16);
  }
  yirage_blob_release(blob);
  CHECK(yirage_blob_data(blob) == NULL && yirage_blob_size(blob) == 0); /* dead handle */
  yirage_blob_release(blob);
  yirage_graph_release(loaded);
  yirage_graph_release(g);
}

/* The checked-in files describe the graphs the C builders make, and the fused files compute
 * the same function (checked by fingerprint for the cheap ones). */
static void test_example_files(const char *examples) {
  size_t i;
  char path[1024];
  for (i = 0; i < BENCH_GRAPH_COUNT; ++i) {
    const char *name = bench_graph_name(i);
    yirage_graph *built = NULL, *file = NULL, *fused = NULL;
    OK(bench_graph_build(name, 1, YIRAGE_FLOAT16, &built));
    snprintf(path, sizeof path, "%s/%s.json", examples, name);
    OK(yirage_graph_load(path, &file));
    CHECK(same_bytes(built, file));
    snprintf(path, sizeof path, "%s/%s_fused.json", examples, name);
    OK(yirage_graph_load(path, &fused));
    if (strcmp(name, "ntrans") == 0 || strcmp(name, "lora") == 0) {
      yirage_equivalence_result result;
      yirage_equivalence_options options;
      yirage_equivalence_options_init(&options);
      options.trials = 1;
      result.struct_size = sizeof result;
      OK(yirage_graph_equivalent(file, fused, &options, &result));
      CHECK(result.equivalent == 1);
    }
    yirage_graph_release(built);
    yirage_graph_release(file);
    yirage_graph_release(fused);
  }
}

static void test_errors(const char *tmp) {
  yirage_graph *g = NULL, *sentinel = (yirage_graph *)(void *)&failures;
  yirage_blob *blob = NULL;
  char path[1024];
  FILE *f;
  OK(bench_graph_build("ntrans", 1, YIRAGE_FLOAT16, &g));
  CHECK(yirage_graph_load("/nonexistent/graph.yrg", &sentinel) == YIRAGE_ERROR_NOT_FOUND);
  CHECK(strstr(yirage_last_error_message(), "cannot open '/nonexistent/graph.yrg'") != NULL);
  CHECK(yirage_graph_save(g, "/nonexistent/dir/graph.yrg") == YIRAGE_ERROR_NOT_FOUND);
  snprintf(path, sizeof path, "%s/garbage.yrg", tmp);
  f = fopen(path, "wb");
  fputs("YRGF is not enough", f);
  fclose(f);
  CHECK(yirage_graph_load(path, &sentinel) == YIRAGE_ERROR_CORRUPT_DATA);
  CHECK(strstr(yirage_last_error_message(), "graph file:") != NULL);
  /* A folder is named as one; a 2 GiB file (sparse: no disk used) is refused by its size,
   * before a byte of it is read. */
  CHECK(yirage_graph_load(tmp, &sentinel) == YIRAGE_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(yirage_last_error_message(), "is a directory, not a graph file") != NULL);
  snprintf(path, sizeof path, "%s/huge.yrg", tmp);
  f = fopen(path, "wb");
  CHECK(f != NULL && fseek(f, (2L << 30) - 1, SEEK_SET) == 0 && fputc(0, f) == 0);
  fclose(f);
  CHECK(yirage_graph_load(path, &sentinel) == YIRAGE_ERROR_CORRUPT_DATA);
  CHECK(strstr(yirage_last_error_message(), "has 2147483648 bytes; graph files are at most 1 GiB") != NULL);
  remove(path);
  CHECK(yirage_graph_deserialize("{\"schema_version\": 9}", 21, &sentinel) == YIRAGE_ERROR_VERSION_MISMATCH);
  CHECK(yirage_graph_deserialize(NULL, 4, &sentinel) == YIRAGE_ERROR_INVALID_ARGUMENT);
  CHECK(yirage_graph_serialize(g, (yirage_graph_format)7, &blob) == YIRAGE_ERROR_INVALID_ARGUMENT);
  CHECK(yirage_graph_save(g, NULL) == YIRAGE_ERROR_INVALID_ARGUMENT);
  CHECK(sentinel == (yirage_graph *)(void *)&failures && blob == NULL);
  yirage_graph_release(g);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s EXAMPLES_GRAPHS_DIR TMP_DIR\n", argv[0]);
    return 2;
  }
  test_round_trips(argv[2]);
  test_example_files(argv[1]);
  test_errors(argv[2]);
  return finish("graph-file");
}
