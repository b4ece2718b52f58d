/* Targets and cost estimates through yirage.h only. Usage: targets_test EXAMPLES_GRAPHS_DIR */
#include <stdio.h>
#include <string.h>

#include "bench_graphs.h"
#include "check.h"

static yirage_graph *load(const char *dir, const char *name) {
  char path[1024];
  yirage_graph *g = NULL;
  snprintf(path, sizeof path, "%s/%s.json", dir, name);
  OK(yirage_graph_load(path, &g));
  return g;
}

int main(int argc, char **argv) {
  yirage_target_properties h100, cpu, mi300x, bad;
  yirage_graph *plain, *fused, *attention;
  double plain_s = 0, fused_s = 0, untouched = -1;
  if (argc != 2) {
    fprintf(stderr, "usage: %s EXAMPLES_GRAPHS_DIR\n", argv[0]);
    return 2;
  }
  memset(&h100, 0, sizeof h100);
  h100.struct_size = sizeof h100;
  cpu = mi300x = h100;
  OK(yirage_target_builtin("h100", &h100));
  CHECK(strcmp(h100.name, "h100") == 0 && h100.kind == YIRAGE_TARGET_GPU);
  CHECK(h100.compute_units == 132 && h100.shared_memory_per_block == 232448);
  CHECK(h100.matrix_unit[0] == 16 && h100.matrix_unit[1] == 8 && h100.matrix_unit[2] == 16);
  OK(yirage_target_builtin("cpu", &cpu));
  CHECK(cpu.kind == YIRAGE_TARGET_CPU && cpu.compute_units >= 1 && cpu.memory_bandwidth > 1e8);
  OK(yirage_target_builtin("mi300x", &mi300x));

  bad = h100;
  CHECK(yirage_target_builtin("tpu", &bad) == YIRAGE_ERROR_NOT_FOUND);
  CHECK(strstr(yirage_last_error_message(), "(have: cpu, h100, h200, a100, mi300x)") != NULL);
  CHECK(bad.compute_units == 132); /* untouched */
  bad.struct_size = 16;
  EXPECT_INVALID(yirage_target_builtin("h100", &bad), "out_properties->struct_size 16");

  /* The hand-fused RMSNorm+linear is estimated faster than the unfused graph on an H100. */
  plain = load(argv[1], "rmsnorm_linear");
  fused = load(argv[1], "rmsnorm_linear_fused");
  OK(yirage_graph_estimate_cost(plain, &h100, &plain_s));
  OK(yirage_graph_estimate_cost(fused, &h100, &fused_s));
  CHECK(fused_s > 0 && fused_s < plain_s);
  printf("rmsnorm_linear on h100: unfused %.1f us, fused %.1f us (estimates)\n", plain_s * 1e6, fused_s * 1e6);

  /* The NVIDIA-shaped fused attention does not fit an MI300X work-group. */
  attention = load(argv[1], "gqa_fused");
  CHECK(yirage_graph_estimate_cost(attention, &mi300x, &untouched) == YIRAGE_ERROR_UNSUPPORTED);
  CHECK(strstr(yirage_last_error_message(), "bytes of shared memory per block; mi300x has 65536"));
  CHECK(untouched == -1);

  bad = h100;
  bad.compute_units = 0;
  EXPECT_INVALID(yirage_graph_estimate_cost(plain, &bad, &untouched),
                 "target 'h100': compute_units must be positive (is 0)");
  EXPECT_INVALID(yirage_graph_estimate_cost(plain, NULL, &untouched), "target is NULL");

  yirage_graph_release(plain);
  yirage_graph_release(fused);
  yirage_graph_release(attention);
  return finish("target");
}
