/* Device buffers and host runs through the C ABI, as a C program with no device runtime of its
 * own would use them: argv[1] is a backend plugin, argv[2] a kernel cache folder, argv[3] the
 * backend to run on (default "cpu"; "cuda" on a GPU machine). A kernel runs on buffers it was
 * given as DLPack tensors and on host tensors (yirage_kernel_run_host); both are compared with the
 * reference executor, outputs poisoned first. Every bad range, shape, dtype and handle is
 * refused. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "bench_graphs.h"
#include "check.h"

static yirage_graph *small_graph(void) {
  yirage_graph *g = NULL;
  yirage_tensor *x = NULL, *w = NULL, *n = NULL, *o = NULL;
  const int64_t xd[2] = {8, 64}, wd[2] = {64, 96}, norm[1] = {64};
  OK(yirage_graph_create(&g));
  OK(yirage_graph_new_input(g, 2, xd, YIRAGE_FLOAT16, &x));
  OK(yirage_graph_new_input(g, 2, wd, YIRAGE_FLOAT16, &w));
  OK(yirage_graph_rms_norm(g, x, 1, norm, 0.0, NULL, &n));
  OK(yirage_graph_matmul(g, n, w, &o));
  OK(yirage_graph_mark_output(g, o));
  return g;
}

/* The kernel on the DLPack views of its two inputs and its output, waited for. */
static void run_on_views(const yirage_kernel *kernel, DLManagedTensor *const *views) {
  const DLTensor *ins[2];
  DLTensor *outs[1];
  ins[0] = &views[0]->dl_tensor;
  ins[1] = &views[1]->dl_tensor;
  outs[0] = &views[2]->dl_tensor;
  OK(yirage_kernel_run(kernel, ins, 2, outs, 1, NULL));
  OK(yirage_kernel_synchronize(kernel, NULL));
}

static size_t tensor_bytes(const bench_tensor *t) {
  return (size_t)t->count * 2; /* float16 */
}

int main(int argc, char **argv) {
  const char *backend = argc > 3 ? argv[3] : "cpu";
  yirage_context *context = NULL;
  const yirage_device *device = NULL;
  yirage_device_info info;
  yirage_graph *g = small_graph();
  yirage_kernel *kernel = NULL;
  yirage_buffer *buffers[3] = {NULL, NULL, NULL};
  DLManagedTensor *views[3] = {NULL, NULL, NULL};
  bench_tensor in[2], out, want;
  const DLTensor *ins[2];
  DLTensor *outs[1];
  uint64_t seed = 11;
  size_t i, size = 0;
  yirage_tensor *t;
  int64_t shape[2];

  if (argc < 3) return 2;
  OK(bench_context_with_plugin(argv[1], argv[2], &context));
  if (yirage_context_get_device(context, backend, 0, &device) != YIRAGE_OK) {
    /* Only the GPU run may find no device, and it says so: never a silent pass. */
    fprintf(stderr, "SKIP: no %s device: %s\n", backend, yirage_last_error_message());
    yirage_context_release(context);
    yirage_graph_release(g);
    return strcmp(backend, "cpu") == 0 ? 1 : 77;
  }
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  OK(yirage_device_get_info(device, &info));
  OK(yirage_compile(g, device, NULL, &kernel));

  for (i = 0; i < 2; ++i) {
    OK(yirage_graph_get_input(g, i, &t));
    CHECK(bench_tensor_alloc(t, &in[i]) == 0);
    bench_tensor_fill_uniform(&in[i], &seed, -1.0, 1.0);
    ins[i] = &in[i].dl;
  }
  OK(yirage_graph_get_output(g, 0, &t));
  CHECK(bench_tensor_alloc(t, &out) == 0 && bench_tensor_alloc(t, &want) == 0);
  outs[0] = &want.dl;
  OK(yirage_graph_run_reference(g, ins, 2, outs, 1));

  /* Buffers on the device: inputs copied in, the output poisoned, all passed as DLPack views. */
  for (i = 0; i < 3; ++i) {
    const bench_tensor *host = i < 2 ? &in[i] : &out;
    OK(yirage_buffer_alloc(device, tensor_bytes(host), &buffers[i]));
    OK(yirage_buffer_size(buffers[i], &size));
    CHECK(size == tensor_bytes(host));
    OK(yirage_buffer_to_dlpack(buffers[i], host->shape, host->dl.ndim, YIRAGE_FLOAT16, &views[i]));
    CHECK((int32_t)views[i]->dl_tensor.device.device_type == info.dlpack_device_type &&
          views[i]->dl_tensor.device.device_id == info.dlpack_device_id);
    CHECK(views[i]->dl_tensor.data != NULL && views[i]->dl_tensor.strides == NULL);
  }
  OK(yirage_buffer_write(buffers[0], 0, in[0].dl.data, tensor_bytes(&in[0])));
  OK(yirage_buffer_write(buffers[1], 0, in[1].dl.data, tensor_bytes(&in[1])));
  bench_tensor_poison(&out);
  OK(yirage_buffer_write(buffers[2], 0, out.dl.data, tensor_bytes(&out)));
  run_on_views(kernel, views);
  OK(yirage_buffer_read(buffers[2], 0, out.dl.data, tensor_bytes(&out)));
  CHECK(bench_tensor_relative_error(&out, &want) < 5e-3);

  /* The same kernel on host tensors wherever its device is. */
  bench_tensor_poison(&out);
  outs[0] = &out.dl;
  OK(yirage_kernel_run_host(kernel, ins, 2, outs, 1));
  CHECK(bench_tensor_relative_error(&out, &want) < 5e-3);
  EXPECT_INVALID(yirage_kernel_run_host(kernel, ins, 1, outs, 1), "yirage_kernel_run_host: the kernel takes 2");
  EXPECT_INVALID(yirage_kernel_run_host(kernel, ins, (size_t)-1, outs, 1), "and 1 were given");
  EXPECT_INVALID(yirage_kernel_run_host(NULL, ins, 2, outs, 1), "kernel is NULL");
  out.dl.device.device_type = kDLCUDAHost;
  EXPECT_INVALID(yirage_kernel_run_host(kernel, ins, 2, outs, 1), "output 0 is on DLPack device (3, 0)");
  out.dl.device.device_type = kDLCPU;
  {
    void *data = out.dl.data;
    out.dl.data = in[1].dl.data;
    EXPECT_INVALID(yirage_kernel_run_host(kernel, ins, 2, outs, 1), "output 0 overlaps input 1");
    out.dl.data = data;
  }

  /* Bad ranges, views and handles are refused and change nothing. */
  EXPECT_INVALID(yirage_buffer_write(buffers[0], 1, in[0].dl.data, tensor_bytes(&in[0])), "outside the buffer's");
  EXPECT_INVALID(yirage_buffer_read(buffers[0], (size_t)-1, out.dl.data, 2), "outside the buffer's");
  EXPECT_INVALID(yirage_buffer_write(buffers[0], 0, NULL, 2), "source is NULL");
  EXPECT_INVALID(yirage_buffer_read(buffers[0], 0, NULL, 2), "destination is NULL");
  OK(yirage_buffer_write(buffers[0], 0, NULL, 0));
  shape[0] = in[0].shape[0] + 1;
  shape[1] = in[0].shape[1];
  {
    DLManagedTensor *unchanged = views[0];
    EXPECT_INVALID(yirage_buffer_to_dlpack(buffers[0], shape, 2, YIRAGE_FLOAT16, &views[0]), "the tensor needs");
    shape[0] = -1;
    EXPECT_INVALID(yirage_buffer_to_dlpack(buffers[0], shape, 2, YIRAGE_FLOAT16, &views[0]), "shape[0] is -1");
    shape[0] = (int64_t)1 << 62;
    shape[1] = 1 << 8;
    EXPECT_INVALID(yirage_buffer_to_dlpack(buffers[0], shape, 2, YIRAGE_FLOAT16, &views[0]), "more than 2^64");
    EXPECT_INVALID(yirage_buffer_to_dlpack(buffers[0], shape, 7, YIRAGE_FLOAT16, &views[0]), "ndim 7");
    EXPECT_INVALID(yirage_buffer_to_dlpack(buffers[0], shape, 1, (yirage_dtype)9, &views[0]), "dtype 9");
    EXPECT_INVALID(yirage_buffer_to_dlpack(buffers[0], NULL, 1, YIRAGE_FLOAT16, &views[0]), "shape is NULL");
    CHECK(views[0] == unchanged);
  }
  EXPECT_INVALID(yirage_buffer_alloc(NULL, 8, &buffers[0]), "device is NULL");
  EXPECT_INVALID(yirage_buffer_alloc(device, 8, NULL), "out_buffer is NULL");
  {
    yirage_buffer *huge = NULL;
    CHECK(yirage_buffer_alloc(device, (size_t)1 << 62, &huge) == YIRAGE_ERROR_OUT_OF_MEMORY && huge == NULL);
    CHECK(strstr(yirage_last_error_message(), "yirage_buffer_alloc: ") != NULL);
  }
  {
    /* A zero-byte buffer is valid; a zero-element view of it too. */
    yirage_buffer *empty = NULL;
    DLManagedTensor *view = NULL;
    shape[0] = 0;
    OK(yirage_buffer_alloc(device, 0, &empty));
    OK(yirage_buffer_to_dlpack(empty, shape, 1, YIRAGE_FLOAT32, &view));
    CHECK(view->dl_tensor.ndim == 1 && view->dl_tensor.shape[0] == 0 && view->dl_tensor.dtype.bits == 32);
    yirage_buffer_release(empty);
    view->deleter(view);
  }

  /* A view outlives its buffer's handle and its context: the memory is the view's until its
   * deleter runs, so the kernel still runs on it. */
  for (i = 0; i < 3; ++i) yirage_buffer_release(buffers[i]);
  yirage_buffer_release(buffers[0]); /* dead handles are ignored */
  EXPECT_INVALID(yirage_buffer_size(buffers[0], &size), "not a live yirage_buffer");
  yirage_context_release(context);
  run_on_views(kernel, views);
  for (i = 0; i < 3; ++i) views[i]->deleter(views[i]);

  yirage_kernel_release(kernel);
  for (i = 0; i < 2; ++i) bench_tensor_free(&in[i]);
  bench_tensor_free(&out);
  bench_tensor_free(&want);
  yirage_graph_release(g);
  return finish("buffers");
}
