/* C helpers for the functions whose shapes do not map directly to Python. Each returns
 * [status, result] like the plain wrappers; on failure result is None. */
%ignore yirage_graph_to_dot; /* yirage_py_graph_to_dot */
%{
#include <stdlib.h>
#include <string.h>

static PyObject *yirage_py_result(yirage_status status, PyObject *value) {
  PyObject *list = PyList_New(2);
  PyList_SET_ITEM(list, 0, PyLong_FromLong((long)status));
  if (value == NULL) {
    Py_INCREF(Py_None);
    value = Py_None;
  }
  PyList_SET_ITEM(list, 1, value);
  return list;
}

static PyObject *yirage_py_tensor_list(yirage_tensor **tensors, size_t n) {
  PyObject *list = PyList_New((Py_ssize_t)n);
  size_t i;
  for (i = 0; i < n; ++i) {
    PyList_SET_ITEM(list, (Py_ssize_t)i,
                    SWIG_NewPointerObj(tensors[i], SWIGTYPE_p_yirage_tensor_s, 0));
  }
  return list;
}

/* The DLTensor inside a DLPack capsule (named "dltensor"; not consumed, so its owner keeps
 * the memory and frees it). */
static DLTensor *yirage_py_dltensor(PyObject *capsule) {
  DLManagedTensor *managed = (DLManagedTensor *)PyCapsule_GetPointer(capsule, "dltensor");
  return managed ? &managed->dl_tensor : NULL;
}

/* Fills `out` (n entries) with the DLTensors of a sequence of DLPack capsules. */
static int yirage_py_dltensors(PyObject *capsules, DLTensor **out, Py_ssize_t n) {
  Py_ssize_t i;
  for (i = 0; i < n; ++i) {
    PyObject *capsule = PySequence_GetItem(capsules, i);
    DLTensor *t = capsule ? yirage_py_dltensor(capsule) : NULL;
    Py_XDECREF(capsule); /* the caller's sequence keeps it alive */
    if (t == NULL) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "expected a DLPack capsule");
      return -1;
    }
    out[i] = t;
  }
  return 0;
}
%}

%inline %{
PyObject *yirage_py_split(yirage_graph *graph, yirage_tensor *x, int32_t dim, size_t n_parts,
                          const int64_t *sizes) {
  yirage_tensor **parts = (yirage_tensor **)calloc(n_parts ? n_parts : 1, sizeof *parts);
  yirage_status status = yirage_graph_split(graph, x, dim, n_parts, sizes, parts);
  PyObject *r = yirage_py_result(status, status == YIRAGE_OK ? yirage_py_tensor_list(parts, n_parts) : NULL);
  free(parts);
  return r;
}

PyObject *yirage_py_chunk(yirage_graph *graph, yirage_tensor *x, size_t n_chunks, int32_t dim) {
  yirage_tensor **parts;
  yirage_status status;
  PyObject *r;
  if (n_chunks > (1u << 24)) { /* no tensor dim is that large: refuse before allocating */
    PyErr_SetString(PyExc_ValueError, "chunk: more chunks than any tensor dim can hold");
    return NULL;
  }
  parts = (yirage_tensor **)calloc(n_chunks ? n_chunks : 1, sizeof *parts);
  status = yirage_graph_chunk(graph, x, n_chunks, dim, parts);
  r = yirage_py_result(status, status == YIRAGE_OK ? yirage_py_tensor_list(parts, n_chunks) : NULL);
  free(parts);
  return r;
}

PyObject *yirage_py_customized(yirage_graph *graph, const yirage_block_graph *block_graph) {
  size_t n = 0;
  yirage_status status = yirage_block_graph_num_outputs(block_graph, &n);
  yirage_tensor **outs;
  PyObject *r;
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  outs = (yirage_tensor **)calloc(n ? n : 1, sizeof *outs);
  status = yirage_graph_customized(graph, block_graph, outs);
  r = yirage_py_result(status, status == YIRAGE_OK ? yirage_py_tensor_list(outs, n) : NULL);
  free(outs);
  return r;
}

PyObject *yirage_py_tensor_dims(const yirage_tensor *tensor) {
  int64_t dims[YIRAGE_MAX_RANK];
  size_t ndim = 0, i;
  PyObject *tuple;
  yirage_status status = yirage_tensor_get_ndim(tensor, &ndim);
  if (status == YIRAGE_OK) status = yirage_tensor_get_dims(tensor, YIRAGE_MAX_RANK, dims);
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  tuple = PyTuple_New((Py_ssize_t)ndim);
  for (i = 0; i < ndim; ++i) PyTuple_SET_ITEM(tuple, (Py_ssize_t)i, PyLong_FromLongLong(dims[i]));
  return yirage_py_result(YIRAGE_OK, tuple);
}

/* inputs, outputs: sequences of DLPack capsules of host tensors. */
PyObject *yirage_py_run_reference(const yirage_graph *graph, PyObject *inputs, PyObject *outputs) {
  Py_ssize_t n_in, n_out;
  const DLTensor **ins;
  DLTensor **outs;
  yirage_status status;
  if (!PySequence_Check(inputs) || !PySequence_Check(outputs)) {
    PyErr_SetString(PyExc_TypeError, "inputs and outputs must be sequences of DLPack capsules");
    return NULL;
  }
  n_in = PySequence_Size(inputs);
  n_out = PySequence_Size(outputs);
  ins = (const DLTensor **)calloc((size_t)(n_in > 0 ? n_in : 1), sizeof *ins);
  outs = (DLTensor **)calloc((size_t)(n_out > 0 ? n_out : 1), sizeof *outs);
  if (yirage_py_dltensors(inputs, (DLTensor **)ins, n_in) != 0 ||
      yirage_py_dltensors(outputs, outs, n_out) != 0) {
    free(ins);
    free(outs);
    return NULL;
  }
  status = yirage_graph_run_reference(graph, ins, (size_t)n_in, outs, (size_t)n_out);
  free(ins);
  free(outs);
  return yirage_py_result(status, NULL);
}

/* [status, (equivalent, trials, seconds, reason)] */
PyObject *yirage_py_equivalent(const yirage_graph *a, const yirage_graph *b, uint32_t trials,
                               uint64_t seed, uint32_t threads) {
  yirage_equivalence_options options;
  yirage_equivalence_result result;
  yirage_status status;
  yirage_equivalence_options_init(&options);
  options.trials = trials;
  options.seed = seed;
  options.threads = threads;
  memset(&result, 0, sizeof result);
  result.struct_size = sizeof result;
  status = yirage_graph_equivalent(a, b, &options, &result);
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  return yirage_py_result(status, Py_BuildValue("(OIds)", result.equivalent ? Py_True : Py_False,
                                                result.trials, result.seconds, result.reason));
}

PyObject *yirage_py_serialize(const yirage_graph *graph, int format) {
  yirage_blob *blob = NULL;
  PyObject *bytes;
  yirage_status status = yirage_graph_serialize(graph, (yirage_graph_format)format, &blob);
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  bytes = PyBytes_FromStringAndSize((const char *)yirage_blob_data(blob),
                                    (Py_ssize_t)yirage_blob_size(blob));
  yirage_blob_release(blob);
  return yirage_py_result(status, bytes);
}

/* [status, str]: the Graphviz (DOT) picture of the graph and its µGraphs. */
PyObject *yirage_py_graph_to_dot(const yirage_graph *graph) {
  yirage_blob *blob = NULL;
  PyObject *text;
  yirage_status status = yirage_graph_to_dot(graph, &blob);
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  text = PyUnicode_FromStringAndSize((const char *)yirage_blob_data(blob),
                                     (Py_ssize_t)yirage_blob_size(blob) - 1); /* less the NUL */
  yirage_blob_release(blob);
  return text ? yirage_py_result(status, text) : NULL;
}

PyObject *yirage_py_deserialize(PyObject *data) {
  char *buffer;
  Py_ssize_t size;
  yirage_graph *graph = NULL;
  yirage_status status;
  if (PyBytes_AsStringAndSize(data, &buffer, &size) != 0) return NULL;
  status = yirage_graph_deserialize(buffer, (size_t)size, &graph);
  return yirage_py_result(status, status == YIRAGE_OK
      ? SWIG_NewPointerObj(graph, SWIGTYPE_p_yirage_graph_s, 0) : NULL);
}

%}
%{
/* A target's properties as a dict. */
static PyObject *yirage_py_target_dict(const yirage_target_properties *t) {
  return Py_BuildValue(
      "{s:s,s:s,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:d,s:L,s:d,s:d,s:d,s:d,s:d,s:(LLL),s:d,s:d}",
      "name", t->name, "kind", t->kind == YIRAGE_TARGET_CPU ? "cpu" : "gpu",
      "compute_units", (long long)t->compute_units,
      "max_threads_per_block", (long long)t->max_threads_per_block,
      "max_blocks_per_compute_unit", (long long)t->max_blocks_per_compute_unit,
      "threads_per_compute_unit", (long long)t->threads_per_compute_unit,
      "shared_memory_per_block", (long long)t->shared_memory_per_block,
      "shared_memory_per_compute_unit", (long long)t->shared_memory_per_compute_unit,
      "warp_width", (long long)t->warp_width, "memory_bytes", (long long)t->memory_bytes,
      "memory_bandwidth", t->memory_bandwidth, "l2_bytes", (long long)t->l2_bytes,
      "l2_bandwidth", t->l2_bandwidth, "peak_flops_float16", t->peak_flops_float16,
      "peak_flops_bfloat16", t->peak_flops_bfloat16, "peak_flops_float32", t->peak_flops_float32,
      "vector_flops_float32", t->vector_flops_float32, "matrix_unit",
      (long long)t->matrix_unit[0], (long long)t->matrix_unit[1], (long long)t->matrix_unit[2],
      "launch_overhead_seconds", t->launch_overhead_seconds, "loop_iteration_seconds",
      t->loop_iteration_seconds);
}
%}
%inline %{
/* [status, dict of properties] */
PyObject *yirage_py_target(const char *name) {
  yirage_target_properties t;
  yirage_status status;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  status = yirage_target_builtin(name, &t);
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  return yirage_py_result(status, yirage_py_target_dict(&t));
}

/* [status, seconds] for a built-in target */
PyObject *yirage_py_estimate_cost(const yirage_graph *graph, const char *target_name) {
  yirage_target_properties t;
  double seconds = 0;
  yirage_status status;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  status = yirage_target_builtin(target_name, &t);
  if (status == YIRAGE_OK) status = yirage_graph_estimate_cost(graph, &t, &seconds);
  return yirage_py_result(status, status == YIRAGE_OK ? PyFloat_FromDouble(seconds) : NULL);
}

PyObject *yirage_py_block_graph_create(int64_t gx, int64_t gy, int64_t gz, int64_t block_threads,
                                       int64_t forloop_range, int64_t shared_memory_limit) {
  yirage_block_graph_options options;
  yirage_block_graph *bg = NULL;
  yirage_status status;
  yirage_block_graph_options_init(&options);
  options.grid[0] = gx;
  options.grid[1] = gy;
  options.grid[2] = gz;
  options.block_threads = block_threads;
  options.forloop_range = forloop_range;
  options.shared_memory_limit = shared_memory_limit;
  status = yirage_block_graph_create(&options, &bg);
  return yirage_py_result(status, status == YIRAGE_OK
      ? SWIG_NewPointerObj(bg, SWIGTYPE_p_yirage_block_graph_s, 0) : NULL);
}
%}
