/* The six benchmark graphs of the Mirage paper (see benchmarks/README.md), built through the
 * public C ABI only, and host-tensor helpers for programs that run them. Used by the examples,
 * capi_tests and the benchmark harnesses. */
#ifndef YIRAGE_BENCH_GRAPHS_H_
#define YIRAGE_BENCH_GRAPHS_H_

#include <stddef.h>
#include <stdint.h>

#include "yirage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Names in a fixed order: gqa, qknorm, rmsnorm_linear, lora, gated_mlp, ntrans. */
#define BENCH_GRAPH_COUNT 6
const char *bench_graph_name(size_t index);

/* Builds benchmark graph `name` with batch parameter b (>= 1; ignored by lora and gated_mlp)
 * and element type dtype. The caller owns *out_graph. Returns YIRAGE_ERROR_NOT_FOUND for an
 * unknown name and whatever a builder returned otherwise (the message is then in
 * yirage_last_error_message()). */
yirage_status bench_graph_build(const char *name, int64_t b, yirage_dtype dtype, yirage_graph **out_graph);

/* A context with the one plugin at `plugin_path` (no default search paths), its kernel cache in
 * `cache_dir`. */
yirage_status bench_context_with_plugin(const char *plugin_path, const char *cache_dir, yirage_context **out_context);

/* A host tensor shaped like one graph tensor: compact row-major, owning its buffer. */
typedef struct bench_tensor {
  DLTensor dl;
  int64_t shape[YIRAGE_MAX_RANK];
  yirage_dtype dtype;
  int64_t count;
} bench_tensor;

/* Allocates a host tensor shaped like `tensor`. Returns 0 on success, -1 on failure. */
int bench_tensor_alloc(const yirage_tensor *tensor, bench_tensor *out);
void bench_tensor_free(bench_tensor *t);

/* Fills with values uniform in [lo, hi), rounded to the dtype; `state` is a xorshift64 state. */
void bench_tensor_fill_uniform(bench_tensor *t, uint64_t *state, double lo, double hi);
/* Fills every byte with 0xFF (NaN in every supported dtype): poison before a run. */
void bench_tensor_poison(bench_tensor *t);
/* Element i as a double. */
double bench_tensor_get(const bench_tensor *t, int64_t i);
/* ‖got − want‖₂ / ‖want‖₂ over two tensors of one element count. */
double bench_tensor_relative_error(const bench_tensor *got, const bench_tensor *want);

/* Conversions between float and the 16-bit formats (round to nearest even). */
double bench_half_to_double(uint16_t bits);
uint16_t bench_float_to_half(float value);
double bench_bfloat16_to_double(uint16_t bits);
uint16_t bench_float_to_bfloat16(float value);

#ifdef __cplusplus
}
#endif

#endif /* YIRAGE_BENCH_GRAPHS_H_ */
