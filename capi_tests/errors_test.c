/* Every error path of the graph-building and reference-run ABI, through yirage.h only: the
 * status, the message, out-parameters left untouched and the graph left unchanged. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "yirage.h"

static int failures = 0;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

/* The call must fail with `want` and a message containing `fragment`. */
#define EXPECT_FAIL(call, want, fragment) expect_fail((call), (want), (fragment), __LINE__)

static void expect_fail(yirage_status got, yirage_status want, const char *fragment, int line) {
  const char *message = yirage_last_error_message();
  if (got != want || strstr(message, fragment) == NULL) {
    fprintf(stderr, "FAIL line %d: got %s \"%s\", want %s containing \"%s\"\n", line, yirage_status_name(got), message,
            yirage_status_name(want), fragment);
    ++failures;
  }
}

#define OK(call) CHECK((call) == YIRAGE_OK)

static yirage_tensor *input2(yirage_graph *g, int64_t d0, int64_t d1, yirage_dtype dtype) {
  const int64_t dims[2] = {d0, d1};
  yirage_tensor *t = NULL;
  OK(yirage_graph_new_input(g, 2, dims, dtype, &t));
  return t;
}

static size_t operator_count(const yirage_graph *g) {
  size_t n = 0;
  OK(yirage_graph_num_operators(g, &n));
  return n;
}

static yirage_tensor *const kSentinel = (yirage_tensor *)(void *)&failures;

static void test_versions_and_names(void) {
  CHECK(yirage_abi_version() == YIRAGE_ABI_VERSION);
  CHECK((yirage_abi_version() >> 16) == YIRAGE_ABI_VERSION_MAJOR);
  CHECK(strlen(yirage_version()) > 0);
  CHECK(strcmp(yirage_status_name(YIRAGE_OK), "OK") == 0);
  CHECK(strcmp(yirage_status_name(YIRAGE_ERROR_CORRUPT_DATA), "CORRUPT_DATA") == 0);
  CHECK(strcmp(yirage_status_name(YIRAGE_ERROR_INTERNAL), "INTERNAL") == 0);
  CHECK(strcmp(yirage_status_name((yirage_status)1234), "UNKNOWN_STATUS") == 0);
  CHECK(strcmp(yirage_dtype_name(YIRAGE_BFLOAT16), "bfloat16") == 0);
  CHECK(strcmp(yirage_dtype_name((yirage_dtype)0), "unknown") == 0);
  CHECK(yirage_dtype_size(YIRAGE_FLOAT16) == 2 && yirage_dtype_size(YIRAGE_FLOAT32) == 4);
  CHECK(yirage_dtype_size((yirage_dtype)77) == 0);
}

static void test_bad_handles(void) {
  yirage_graph *g = NULL, *other = NULL, *released = NULL;
  yirage_tensor *x, *foreign, *stale, *out = kSentinel;
  int not_a_handle = 0;
  const int64_t dims[2] = {4, 4};

  EXPECT_FAIL(yirage_graph_create(NULL), YIRAGE_ERROR_INVALID_ARGUMENT, "out_graph is NULL");
  OK(yirage_graph_create(&g));
  OK(yirage_graph_create(&other));
  OK(yirage_graph_create(&released));
  x = input2(g, 4, 4, YIRAGE_FLOAT32);
  foreign = input2(other, 4, 4, YIRAGE_FLOAT32);
  stale = input2(released, 4, 4, YIRAGE_FLOAT32);
  yirage_graph_release(released);
  yirage_graph_release(released); /* a released handle is ignored */
  yirage_graph_release(NULL);

  EXPECT_FAIL(yirage_graph_exp(NULL, x, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "graph is NULL");
  EXPECT_FAIL(yirage_graph_exp(released, x, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "not a live yirage_graph");
  EXPECT_FAIL(yirage_graph_exp((yirage_graph *)(void *)&not_a_handle, x, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "not a live yirage_graph");
  EXPECT_FAIL(yirage_graph_exp(g, NULL, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "X is NULL");
  EXPECT_FAIL(yirage_graph_exp(g, foreign, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "belongs to another graph");
  EXPECT_FAIL(yirage_graph_exp(g, stale, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "not a live yirage_tensor");
  EXPECT_FAIL(yirage_graph_matmul(g, x, (yirage_tensor *)(void *)&not_a_handle, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "B is not a live yirage_tensor");
  EXPECT_FAIL(yirage_graph_exp(g, x, NULL), YIRAGE_ERROR_INVALID_ARGUMENT, "out_tensor is NULL");
  EXPECT_FAIL(yirage_graph_new_input(g, 2, NULL, YIRAGE_FLOAT32, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "dims is NULL");
  EXPECT_FAIL(yirage_graph_mark_output(g, foreign), YIRAGE_ERROR_INVALID_ARGUMENT, "belongs to another graph");
  EXPECT_FAIL(yirage_tensor_get_ndim(stale, NULL), YIRAGE_ERROR_INVALID_ARGUMENT, "not a live yirage_tensor");
  CHECK(out == kSentinel);
  CHECK(operator_count(g) == 1);
  (void)dims;
  yirage_graph_release(g);
  yirage_graph_release(other);
}

static void test_shape_errors_leave_graph_unchanged(void) {
  yirage_graph *g = NULL;
  yirage_tensor *a, *b, *h, *w, *v, *out = kSentinel, *parts[3] = {kSentinel, kSentinel, kSentinel};
  const int64_t rank7[7] = {1, 1, 1, 1, 1, 1, 1};
  const int64_t zero_dim[2] = {4, 0};
  const int64_t ok_dims[2] = {2, 3};
  const int64_t bad_norm[1] = {5};
  const int64_t norm4096[1] = {4096};
  const int64_t sizes_bad[2] = {1, 1};
  const int64_t reshape_bad[2] = {5, -1};
  const int64_t not_a_permutation[2] = {1, 1};
  size_t before, n_inputs = 0;

  OK(yirage_graph_create(&g));
  a = input2(g, 16, 4096, YIRAGE_FLOAT16);
  b = input2(g, 406, 4096, YIRAGE_FLOAT16);
  h = input2(g, 16, 4096, YIRAGE_FLOAT32);
  w = input2(g, 3, 4096, YIRAGE_FLOAT16);
  v = input2(g, 1, 4096, YIRAGE_FLOAT16);
  before = operator_count(g);

  EXPECT_FAIL(yirage_graph_matmul(g, a, b, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "matmul: A is [16,4096], B is [406,4096]: inner dimensions 4096 and 406 differ");
  EXPECT_FAIL(yirage_graph_new_input(g, 7, rank7, YIRAGE_FLOAT32, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "rank 7 is outside 1..6");
  EXPECT_FAIL(yirage_graph_new_input(g, 0, ok_dims, YIRAGE_FLOAT32, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "rank 0 is outside 1..6");
  EXPECT_FAIL(yirage_graph_new_input(g, 2, zero_dim, YIRAGE_FLOAT32, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "dim 1 is 0");
  EXPECT_FAIL(yirage_graph_new_input(g, 2, ok_dims, (yirage_dtype)9, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "dtype 9 is not a yirage_dtype");
  EXPECT_FAIL(yirage_graph_add(g, a, b, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "add: A is [16,4096], B is [406,4096]: dim 0 sizes 16 and 406 are neither equal nor 1");
  EXPECT_FAIL(yirage_graph_mul(g, a, h, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "mul: A is float16, B is float32: dtypes differ");
  EXPECT_FAIL(yirage_graph_reduction(g, a, 2, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "reduction: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FAIL(yirage_graph_reduction_max(g, a, -3, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "reduction_max: dim -3 is out of range");
  EXPECT_FAIL(yirage_graph_rms_norm(g, a, 1, bad_norm, 0.0, NULL, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "normalized_shape is [5]");
  EXPECT_FAIL(yirage_graph_rms_norm(g, a, 1, norm4096, -1.0, NULL, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "eps");
  EXPECT_FAIL(yirage_graph_rms_norm(g, a, 1, norm4096, 0.0, w, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "rms_norm: weight is [3,4096]");
  EXPECT_FAIL(yirage_graph_softmax(g, a, 5, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "softmax: dim 5 is out of range");
  EXPECT_FAIL(yirage_graph_concat(g, a, w, 1, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "concat: A is [16,4096], B is [3,4096]");
  EXPECT_FAIL(yirage_graph_concat(g, a, h, 0, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "concat: A is float16, B is float32");
  EXPECT_FAIL(yirage_graph_split(g, a, 0, 2, sizes_bad, parts), YIRAGE_ERROR_INVALID_ARGUMENT,
              "sizes must be >= 1 and sum to 16");
  EXPECT_FAIL(yirage_graph_split(g, a, 0, 0, sizes_bad, parts), YIRAGE_ERROR_INVALID_ARGUMENT,
              "n_parts 0 must be between 1 and 16");
  EXPECT_FAIL(yirage_graph_chunk(g, a, 3, 0, parts), YIRAGE_ERROR_INVALID_ARGUMENT,
              "cannot be split into 3 equal chunks");
  EXPECT_FAIL(yirage_graph_chunk(g, a, (size_t)-1, 1, parts), YIRAGE_ERROR_INVALID_ARGUMENT,
              "cannot be split into 18446744073709551615 equal chunks");
  EXPECT_FAIL(yirage_graph_reshape(g, a, 2, reshape_bad, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "reshape: X is [16,4096] (65536 elements), shape [5,-1]: no size of dim 1 makes 65536 elements");
  EXPECT_FAIL(yirage_graph_reshape(g, a, 7, rank7, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "yirage_graph_reshape: ndim 7 is outside 1..6");
  EXPECT_FAIL(yirage_graph_permute(g, a, 2, not_a_permutation, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "permute: X is [16,4096], dims [1,1]: dim 1 appears twice: not a permutation");
  EXPECT_FAIL(yirage_graph_permute(g, a, 2, NULL, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "dims is NULL");
  EXPECT_FAIL(yirage_graph_transpose(g, a, 0, 2, &out), YIRAGE_ERROR_INVALID_ARGUMENT,
              "transpose: dim 2 is out of range for a tensor of rank 2");
  EXPECT_FAIL(yirage_graph_clamp(g, a, 1.0, -1.0, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "clamp: bounds");
  EXPECT_FAIL(yirage_graph_clamp(g, a, NAN, 1.0, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "clamp: bounds");
  EXPECT_FAIL(yirage_graph_mul_scalar(g, a, INFINITY, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "mul_scalar: scalar");
  EXPECT_FAIL(yirage_graph_matmul(g, v, v, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "inner dimensions 4096 and 1 differ");
  EXPECT_FAIL(yirage_graph_mark_output(g, a), YIRAGE_ERROR_INVALID_ARGUMENT,
              "mark_output: the tensor is a graph input");

  CHECK(out == kSentinel);
  CHECK(parts[0] == kSentinel && parts[1] == kSentinel && parts[2] == kSentinel);
  CHECK(operator_count(g) == before);
  OK(yirage_graph_num_inputs(g, &n_inputs));
  CHECK(n_inputs == 5);

  /* Marking an output twice. */
  OK(yirage_graph_exp(g, a, &out));
  OK(yirage_graph_mark_output(g, out));
  EXPECT_FAIL(yirage_graph_mark_output(g, out), YIRAGE_ERROR_INVALID_ARGUMENT, "already an output");
  yirage_graph_release(g);
}

static void test_queries(void) {
  yirage_graph *g = NULL, *owner = NULL;
  yirage_tensor *x, *y, *parts[4], *out = kSentinel;
  int64_t dims[YIRAGE_MAX_RANK] = {-1, -1, -1, -1, -1, -1};
  size_t ndim = 0, count = 99;
  yirage_dtype dtype = YIRAGE_FLOAT32;

  OK(yirage_graph_create(&g));
  x = input2(g, 8, 6, YIRAGE_BFLOAT16);
  OK(yirage_graph_softmax(g, x, -1, &y));
  OK(yirage_graph_num_operators(g, &count));
  CHECK(count == 6); /* input + the five operators softmax records */
  OK(yirage_tensor_get_ndim(y, &ndim));
  CHECK(ndim == 2);
  EXPECT_FAIL(yirage_tensor_get_dims(y, 1, dims), YIRAGE_ERROR_INVALID_ARGUMENT,
              "capacity 1 is less than the tensor's rank 2");
  CHECK(dims[0] == -1);
  OK(yirage_tensor_get_dims(y, YIRAGE_MAX_RANK, dims));
  CHECK(dims[0] == 8 && dims[1] == 6 && dims[2] == -1);
  OK(yirage_tensor_get_dtype(y, &dtype));
  CHECK(dtype == YIRAGE_BFLOAT16);
  OK(yirage_tensor_get_graph(y, &owner));
  CHECK(owner == g);
  OK(yirage_graph_chunk(g, x, 3, 1, parts));
  OK(yirage_tensor_get_dims(parts[2], YIRAGE_MAX_RANK, dims));
  CHECK(dims[0] == 8 && dims[1] == 2);
  OK(yirage_graph_reduction(g, x, -2, &out));
  OK(yirage_tensor_get_dims(out, YIRAGE_MAX_RANK, dims));
  CHECK(dims[0] == 1 && dims[1] == 6);
  {
    const int64_t shape[3] = {2, -1, 3}, order[3] = {2, 0, 1};
    yirage_tensor *viewed = NULL, *permuted = NULL, *transposed = NULL;
    OK(yirage_graph_reshape(g, x, 3, shape, &viewed));
    OK(yirage_tensor_get_dims(viewed, YIRAGE_MAX_RANK, dims));
    CHECK(dims[0] == 2 && dims[1] == 8 && dims[2] == 3);
    OK(yirage_graph_permute(g, viewed, 3, order, &permuted));
    OK(yirage_tensor_get_dims(permuted, YIRAGE_MAX_RANK, dims));
    CHECK(dims[0] == 3 && dims[1] == 2 && dims[2] == 8);
    OK(yirage_graph_transpose(g, permuted, -1, 0, &transposed));
    OK(yirage_tensor_get_dims(transposed, YIRAGE_MAX_RANK, dims));
    CHECK(dims[0] == 8 && dims[1] == 2 && dims[2] == 3);
  }
  out = kSentinel;
  EXPECT_FAIL(yirage_graph_get_input(g, 1, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "index 1 is out of range");
  EXPECT_FAIL(yirage_graph_get_output(g, 0, &out), YIRAGE_ERROR_INVALID_ARGUMENT, "index 0 is out of range");
  CHECK(out == kSentinel);
  OK(yirage_graph_get_input(g, 0, &out));
  CHECK(out == x);
  EXPECT_FAIL(yirage_graph_num_inputs(g, NULL), YIRAGE_ERROR_INVALID_ARGUMENT, "out_count is NULL");
  yirage_graph_release(g);
}

/* Builds y = x + 1-row bias over float32 [2,3] and checks run_reference's argument checks. */
static void test_run_reference_errors(void) {
  yirage_graph *g = NULL, *empty = NULL;
  yirage_tensor *x, *bias, *y;
  float x_data[6] = {1, 2, 3, 4, 5, 6}, bias_data[3] = {10, 20, 30};
  float y_data[6] = {-7, -7, -7, -7, -7, -7};
  int64_t x_shape[2] = {2, 3}, bias_shape[2] = {1, 3}, wrong_shape[2] = {3, 2};
  int64_t overlapping[2] = {1, 1}, transposed[2] = {1, 2}, huge[2] = {(int64_t)1 << 62, 1};
  DLTensor xt, bt, yt;
  const DLTensor *ins[2];
  DLTensor *outs[1];
  int i;

  OK(yirage_graph_create(&g));
  x = input2(g, 2, 3, YIRAGE_FLOAT32);
  bias = input2(g, 1, 3, YIRAGE_FLOAT32);
  OK(yirage_graph_add(g, x, bias, &y));
  OK(yirage_graph_mark_output(g, y));

  memset(&xt, 0, sizeof xt);
  xt.data = x_data;
  xt.device.device_type = kDLCPU;
  xt.ndim = 2;
  xt.shape = x_shape;
  xt.dtype.code = kDLFloat;
  xt.dtype.bits = 32;
  xt.dtype.lanes = 1;
  bt = xt;
  bt.data = bias_data;
  bt.shape = bias_shape;
  yt = xt;
  yt.data = y_data;
  ins[0] = &xt;
  ins[1] = &bt;
  outs[0] = &yt;

  EXPECT_FAIL(yirage_graph_run_reference(g, ins, 1, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT,
              "the graph has 2 inputs and 1 outputs; 1 and 1 were given");
  EXPECT_FAIL(yirage_graph_run_reference(g, NULL, 2, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT, "inputs is NULL");
  EXPECT_FAIL(yirage_graph_run_reference(g, ins, 2, NULL, 1), YIRAGE_ERROR_INVALID_ARGUMENT, "outputs is NULL");
  bt.dtype.bits = 16;
  EXPECT_FAIL(yirage_graph_run_reference(g, ins, 2, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT,
              "input 1 has DLPack dtype {code 2, bits 16, lanes 1} (float16); the graph expects float32");
  bt.dtype.bits = 32;
  bt.shape = wrong_shape;
  EXPECT_FAIL(yirage_graph_run_reference(g, ins, 2, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT,
              "input 1 is [3,2]; the graph expects [1,3]");
  bt.shape = bias_shape;
  yt.device.device_type = kDLCUDA;
  EXPECT_FAIL(yirage_graph_run_reference(g, ins, 2, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT,
              "output 0 is on DLPack device type 2");
  yt.device.device_type = kDLCPU;
  xt.data = NULL;
  EXPECT_FAIL(yirage_graph_run_reference(g, ins, 2, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT,
              "input 0 has a NULL data pointer");
  xt.data = x_data;
  yt.strides = overlapping;
  EXPECT_FAIL(yirage_graph_run_reference(g, ins, 2, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT, "elements overlap");
  yt.strides = NULL;
  /* The rank is checked before shape is read (10^6 dims would read far past bias_shape). */
  bt.ndim = 1000000;
  EXPECT_FAIL(yirage_graph_run_reference(g, ins, 2, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT,
              "input 1 has 1000000 dims; the graph expects 2 ([1,3])");
  bt.ndim = 2;
  /* Strides whose element offsets overflow 64 bits are refused before any is computed. */
  xt.strides = huge;
  EXPECT_FAIL(yirage_graph_run_reference(g, ins, 2, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT,
              "input 0 has strides [4611686018427387904,1] that reach beyond any address");
  xt.strides = NULL;
  /* A device type outside DLDeviceType's values is read as the integer it is. */
  {
    int32_t bogus = 12345;
    memcpy(&yt.device.device_type, &bogus, sizeof bogus);
    EXPECT_FAIL(yirage_graph_run_reference(g, ins, 2, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT,
                "output 0 is on DLPack device type 12345");
    yt.device.device_type = kDLCPU;
  }
  ins[1] = NULL;
  EXPECT_FAIL(yirage_graph_run_reference(g, ins, 2, outs, 1), YIRAGE_ERROR_INVALID_ARGUMENT, "input 1 is NULL");
  ins[1] = &bt;
  for (i = 0; i < 6; ++i) CHECK(y_data[i] == -7); /* failed runs wrote nothing */

  /* A transposed (strided) view of a [3,2] buffer read as [2,3]. */
  {
    float xt_data[6] = {1, 4, 2, 5, 3, 6};
    xt.data = xt_data;
    xt.strides = transposed;
    OK(yirage_graph_run_reference(g, ins, 2, outs, 1));
    CHECK(y_data[0] == 11 && y_data[2] == 33 && y_data[3] == 14 && y_data[5] == 36);
  }

  OK(yirage_graph_create(&empty));
  EXPECT_FAIL(yirage_graph_run_reference(empty, NULL, 0, outs, 0), YIRAGE_ERROR_INVALID_ARGUMENT,
              "the graph has no outputs");
  yirage_graph_release(empty);
  yirage_graph_release(g);
}

/* The last error is per thread: a failure on another thread leaves this thread's alone. */
static yirage_status other_thread_status = YIRAGE_OK;

static void *fail_on_other_thread(void *unused) {
  (void)unused;
  other_thread_status = yirage_graph_create(NULL);
  return NULL;
}

static void test_last_error_is_thread_local(void) {
  pthread_t thread;
  EXPECT_FAIL(yirage_graph_exp(NULL, NULL, NULL), YIRAGE_ERROR_INVALID_ARGUMENT, "yirage_graph_exp: graph is NULL");
  CHECK(pthread_create(&thread, NULL, fail_on_other_thread, NULL) == 0);
  CHECK(pthread_join(thread, NULL) == 0);
  CHECK(other_thread_status == YIRAGE_ERROR_INVALID_ARGUMENT);
  CHECK(strcmp(yirage_last_error_message(), "yirage_graph_exp: graph is NULL") == 0);
}

int main(void) {
  test_versions_and_names();
  test_bad_handles();
  test_shape_errors_leave_graph_unchanged();
  test_queries();
  test_run_reference_errors();
  test_last_error_is_thread_local();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all error-path checks passed\n");
  return 0;
}
