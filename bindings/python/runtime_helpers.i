/* C helpers for contexts, devices, the superoptimizer and compiled kernels. Like
 * python_helpers.i, each returns [status, result]. The search and kernel runs release the GIL;
 * the search's progress callback takes it back to call the Python callable. */
%{
static PyObject *yirage_py_handle(void *pointer, swig_type_info *type) {
  return SWIG_NewPointerObj(pointer, type, 0);
}

/* Calls the Python callable `user_data` with (states, candidates, seconds); an exception in it
 * is printed and otherwise ignored (the search cannot stop for it). */
static void yirage_py_progress(const yirage_search_progress *progress, void *user_data) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *r = PyObject_CallFunction((PyObject *)user_data, "LLd", (long long)progress->states,
                                      (long long)progress->candidates, progress->seconds);
  if (r == NULL) PyErr_Print(); else Py_DECREF(r);
  PyGILState_Release(gil);
}

%}

%inline %{
/* [status, context]; plugin_paths: a sequence of str. */
PyObject *yirage_py_context_create(PyObject *plugin_paths, int search_default_paths,
                                   const char *cache_dir) {
  yirage_context_options options;
  yirage_context *context = NULL;
  yirage_status status;
  Py_ssize_t n, i;
  const char **paths;
  if (!PySequence_Check(plugin_paths)) {
    PyErr_SetString(PyExc_TypeError, "plugins must be a sequence of paths");
    return NULL;
  }
  n = PySequence_Size(plugin_paths);
  paths = (const char **)calloc((size_t)(n > 0 ? n : 1), sizeof *paths);
  for (i = 0; i < n; ++i) {
    PyObject *item = PySequence_GetItem(plugin_paths, i);
    paths[i] = item ? PyUnicode_AsUTF8(item) : NULL; /* the sequence keeps the str alive */
    Py_XDECREF(item);
    if (paths[i] == NULL) {
      free(paths);
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "plugin paths must be str");
      return NULL;
    }
  }
  yirage_context_options_init(&options);
  options.plugin_paths = paths;
  options.num_plugin_paths = (size_t)n;
  options.search_default_paths = search_default_paths;
  options.cache_dir = cache_dir;
  status = yirage_context_create(&options, &context);
  free(paths);
  return yirage_py_result(status, status == YIRAGE_OK
      ? yirage_py_handle(context, SWIGTYPE_p_yirage_context_s) : NULL);
}

/* [status, (list of backend dicts, load errors)] */
PyObject *yirage_py_backends(const yirage_context *context) {
  size_t n = 0, i;
  const char *errors = NULL;
  PyObject *list;
  yirage_status status = yirage_context_num_backends(context, &n);
  if (status == YIRAGE_OK) status = yirage_context_load_errors(context, &errors);
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  list = PyList_New((Py_ssize_t)n);
  for (i = 0; i < n; ++i) {
    yirage_backend_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    status = yirage_context_backend_info(context, i, &info);
    if (status != YIRAGE_OK) {
      Py_DECREF(list);
      return yirage_py_result(status, NULL);
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, Py_BuildValue(
        "{s:s,s:s,s:s,s:i,s:s}", "name", info.name, "version", info.version, "path", info.path,
        "num_devices", (int)info.num_devices, "unavailable_reason", info.unavailable_reason));
  }
  return yirage_py_result(YIRAGE_OK, Py_BuildValue("(Ns)", list, errors));
}

/* [status, device] */
PyObject *yirage_py_device(const yirage_context *context, const char *backend, int32_t index) {
  const yirage_device *device = NULL;
  yirage_status status = yirage_context_get_device(context, backend, index, &device);
  return yirage_py_result(status, status == YIRAGE_OK
      ? yirage_py_handle((void *)device, SWIGTYPE_p_yirage_device_s) : NULL);
}

/* [status, dict] */
PyObject *yirage_py_device_info(const yirage_device *device) {
  yirage_device_info info;
  yirage_status status;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  info.target.struct_size = sizeof info.target;
  status = yirage_device_get_info(device, &info);
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  return yirage_py_result(status, Py_BuildValue(
      "{s:s,s:i,s:s,s:N,s:I,s:i,s:i}", "backend", info.backend, "index", (int)info.index,
      "name", info.name, "target", yirage_py_target_dict(&info.target), "dtypes", (unsigned)info.dtypes,
      "dlpack_device_type", (int)info.dlpack_device_type, "dlpack_device_id",
      (int)info.dlpack_device_id));
}

/* Up to `capacity` ints of a Python sequence (None: none) into `out`; their count, or -1 with an
 * error. Tuples (a torch.Size among them) are read without the sequence protocol. */
static Py_ssize_t yirage_py_int64s(PyObject *seq, int64_t *out, Py_ssize_t capacity, const char *what) {
  PyObject *fast;
  Py_ssize_t n, i;
  if (seq == Py_None) return 0;
  fast = PyTuple_Check(seq) ? (Py_INCREF(seq), seq) : PySequence_Fast(seq, "expected a sequence of ints");
  if (fast == NULL) return -1;
  n = PySequence_Fast_GET_SIZE(fast);
  if (n > capacity) {
    PyErr_Format(PyExc_ValueError, "%s: at most %zd values", what, capacity);
    n = -1;
  }
  for (i = 0; i < n; ++i) {
    out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
    if (out[i] == -1 && PyErr_Occurred()) {
      n = -1;
      break;
    }
  }
  Py_DECREF(fast);
  return n;
}

/* A search's options and the storage they point into. */
typedef struct yirage_py_search_request {
  yirage_search_options options;
  yirage_target_properties target;
  int64_t grids[64], loops[64];
} yirage_py_search_request;

/* Fills r->options: -1 with a Python error set, else a status (an unknown `target`, a built-in
 * target's name or NULL for the device's or the host's, gives NOT_FOUND). `grids`, `loops`:
 * block counts per axis and for-loop ranges to try (None: the target's); `fixed`: one grid (3
 * ints) or None; profile_repeats 0: the default. `progress` (None: none) must outlive the
 * options' use. */
static int yirage_py_search_request_fill(yirage_py_search_request *r, const yirage_device *device,
                                         const char *target, double time_budget, uint32_t profile_top_k,
                                         uint32_t threads, const char *cache_dir, int remeasure, PyObject *progress,
                                         PyObject *grids, PyObject *loops, PyObject *fixed,
                                         uint32_t profile_repeats) {
  int64_t fixed_values[64];
  Py_ssize_t n_grids, n_loops, n_fixed;
  yirage_search_options_init(&r->options);
  n_grids = yirage_py_int64s(grids, r->grids, 64, "grid candidates");
  n_loops = n_grids < 0 ? -1 : yirage_py_int64s(loops, r->loops, 64, "for-loop ranges");
  n_fixed = n_loops < 0 ? -1 : yirage_py_int64s(fixed, fixed_values, 64, "fixed grid");
  if (n_fixed < 0) return -1;
  if (fixed != Py_None && n_fixed != 3) {
    PyErr_SetString(PyExc_ValueError, "a fixed grid has 3 dims");
    return -1;
  }
  if (progress != Py_None && !PyCallable_Check(progress)) {
    PyErr_SetString(PyExc_TypeError, "progress must be callable");
    return -1;
  }
  if (target != NULL) {
    yirage_status status;
    memset(&r->target, 0, sizeof r->target);
    r->target.struct_size = sizeof r->target;
    status = yirage_target_builtin(target, &r->target);
    if (status != YIRAGE_OK) return (int)status;
    r->options.target = &r->target;
  }
  r->options.grid_candidates = n_grids > 0 ? r->grids : NULL;
  r->options.num_grid_candidates = (size_t)n_grids;
  r->options.forloop_candidates = n_loops > 0 ? r->loops : NULL;
  r->options.num_forloop_candidates = (size_t)n_loops;
  if (n_fixed == 3) memcpy(r->options.fixed_grid, fixed_values, sizeof r->options.fixed_grid);
  if (profile_repeats > 0) r->options.profile_repeats = profile_repeats;
  r->options.device = device;
  r->options.time_budget_seconds = time_budget;
  r->options.profile_top_k = profile_top_k;
  r->options.threads = threads;
  r->options.cache_dir = cache_dir;
  r->options.remeasure = remeasure;
  if (progress != Py_None) {
    r->options.progress = yirage_py_progress;
    r->options.progress_user_data = progress;
  }
  return YIRAGE_OK;
}

/* [status, search result]; also for TIMEOUT, which still carries what was verified. The options
 * as yirage_py_search_request_fill takes them. */
PyObject *yirage_py_superoptimize(const yirage_graph *graph, const yirage_device *device, const char *target,
                                  double time_budget, uint32_t profile_top_k, uint32_t threads,
                                  const char *cache_dir, int remeasure, PyObject *progress,
                                  PyObject *grids, PyObject *loops, PyObject *fixed,
                                  uint32_t profile_repeats) {
  yirage_py_search_request r;
  yirage_search_result *result = NULL;
  int status = yirage_py_search_request_fill(&r, device, target, time_budget, profile_top_k, threads, cache_dir,
                                             remeasure, progress, grids, loops, fixed, profile_repeats);
  if (status < 0) return NULL;
  if (status != YIRAGE_OK) return yirage_py_result((yirage_status)status, NULL);
  Py_BEGIN_ALLOW_THREADS
  status = yirage_superoptimize(graph, &r.options, &result);
  Py_END_ALLOW_THREADS
  return yirage_py_result((yirage_status)status, result != NULL
      ? yirage_py_handle(result, SWIGTYPE_p_yirage_search_result_s) : NULL);
}

/* Searches in shards. [status, plan]: the options as yirage_py_superoptimize takes them (no
 * progress: the plan would keep it). */
PyObject *yirage_py_search_plan_create(const yirage_graph *graph, uint32_t min_units, const yirage_device *device,
                                       const char *target, double time_budget, uint32_t threads,
                                       PyObject *grids, PyObject *loops, PyObject *fixed) {
  yirage_py_search_request r;
  yirage_search_plan *plan = NULL;
  int status = yirage_py_search_request_fill(&r, device, target, time_budget, 4, threads, NULL, 0, Py_None, grids,
                                             loops, fixed, 0);
  if (status < 0) return NULL;
  if (status != YIRAGE_OK) return yirage_py_result((yirage_status)status, NULL);
  Py_BEGIN_ALLOW_THREADS
  status = yirage_search_plan_create(graph, &r.options, min_units, &plan);
  Py_END_ALLOW_THREADS
  return yirage_py_result((yirage_status)status, status == YIRAGE_OK
      ? yirage_py_handle(plan, SWIGTYPE_p_yirage_search_plan_s) : NULL);
}

/* [status, str]: the plan's 32 hexadecimal digits. */
PyObject *yirage_py_search_plan_id(const yirage_search_plan *plan) {
  char id[33];
  yirage_status status = yirage_search_plan_id(plan, id);
  return yirage_py_result(status, status == YIRAGE_OK ? PyUnicode_FromString(id) : NULL);
}

/* [status, bytes]: the partial result of units `units` (a sequence of ints); also for TIMEOUT and
 * CANCELLED, with the units that finished. */
PyObject *yirage_py_search_plan_run_units(const yirage_search_plan *plan, PyObject *units) {
  Py_ssize_t n, i;
  uint32_t *wanted;
  yirage_blob *blob = NULL;
  yirage_status status;
  PyObject *bytes = NULL;
  if (!PySequence_Check(units)) {
    PyErr_SetString(PyExc_TypeError, "units must be a sequence of ints");
    return NULL;
  }
  n = PySequence_Size(units);
  if (n < 0) return NULL;
  wanted = (uint32_t *)malloc(sizeof *wanted * (size_t)(n > 0 ? n : 1));
  if (wanted == NULL) return PyErr_NoMemory();
  for (i = 0; i < n; ++i) {
    PyObject *item = PySequence_GetItem(units, i);
    unsigned long long value = item ? PyLong_AsUnsignedLongLong(item) : 0;
    Py_XDECREF(item);
    if (PyErr_Occurred() || value > 0xffffffffull) {
      free(wanted);
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError, "units must be ints from 0 to 2**32 - 1");
      return NULL;
    }
    wanted[i] = (uint32_t)value;
  }
  Py_BEGIN_ALLOW_THREADS
  status = yirage_search_plan_run_units(plan, wanted, (size_t)n, &blob);
  Py_END_ALLOW_THREADS
  free(wanted);
  if (blob != NULL) {
    bytes = PyBytes_FromStringAndSize((const char *)yirage_blob_data(blob), (Py_ssize_t)yirage_blob_size(blob));
    yirage_blob_release(blob);
    if (bytes == NULL) return NULL;
  }
  return yirage_py_result(status, bytes);
}

/* [status, units new to the plan]; `data`: any bytes-like object. */
PyObject *yirage_py_search_plan_add_partial(yirage_search_plan *plan, PyObject *data) {
  Py_buffer view;
  size_t added = 0;
  yirage_status status;
  if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) != 0) return NULL;
  Py_BEGIN_ALLOW_THREADS
  status = yirage_search_plan_add_partial(plan, view.buf, (size_t)view.len, &added);
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&view);
  return yirage_py_result(status, status == YIRAGE_OK ? PyLong_FromSize_t(added) : NULL);
}

/* [status, search result]; also for TIMEOUT (units missing), as yirage_py_superoptimize. */
PyObject *yirage_py_search_plan_merge(const yirage_search_plan *plan, const yirage_device *device,
                                      const char *target, double time_budget, uint32_t profile_top_k,
                                      uint32_t threads, PyObject *progress, PyObject *grids, PyObject *loops,
                                      PyObject *fixed, uint32_t profile_repeats) {
  yirage_py_search_request r;
  yirage_search_result *result = NULL;
  int status = yirage_py_search_request_fill(&r, device, target, time_budget, profile_top_k, threads, NULL, 0,
                                             progress, grids, loops, fixed, profile_repeats);
  if (status < 0) return NULL;
  if (status != YIRAGE_OK) return yirage_py_result((yirage_status)status, NULL);
  Py_BEGIN_ALLOW_THREADS
  status = yirage_search_plan_merge(plan, &r.options, &result);
  Py_END_ALLOW_THREADS
  return yirage_py_result((yirage_status)status, result != NULL
      ? yirage_py_handle(result, SWIGTYPE_p_yirage_search_result_s) : NULL);
}

/* [status, (stats dict, candidates, profiled)]: candidates are (graph, dict) pairs, cheapest (or
 * fastest measured) first; profiled are dicts. */
PyObject *yirage_py_search_report(const yirage_search_result *result) {
  yirage_search_stats s;
  size_t n = 0, i;
  PyObject *candidates, *profiled;
  yirage_status status;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  status = yirage_search_result_stats(result, &s);
  if (status == YIRAGE_OK) status = yirage_search_result_num_candidates(result, &n);
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  candidates = PyList_New(0);
  for (i = 0; i < n; ++i) {
    yirage_graph *graph = NULL;
    yirage_search_candidate_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    status = yirage_search_result_candidate(result, i, &graph, &info);
    if (status != YIRAGE_OK) {
      Py_DECREF(candidates);
      return yirage_py_result(status, NULL);
    }
    PyObject *pair = Py_BuildValue("(N{s:d,s:I,s:s,s:d,s:d,s:d,s:I,s:s})",
        yirage_py_handle(graph, SWIGTYPE_p_yirage_graph_s), "estimated_seconds",
        info.estimated_seconds, "verified_trials", (unsigned)info.verified_trials, "description",
        info.description, "measured_seconds", info.measured_seconds, "measured_min_seconds",
        info.measured_min_seconds, "measured_max_seconds", info.measured_max_seconds,
        "measured_samples", (unsigned)info.measured_samples, "not_measured", info.not_measured);
    PyList_Append(candidates, pair);
    Py_DECREF(pair);
  }
  status = yirage_search_result_num_profiled(result, &n);
  if (status != YIRAGE_OK) {
    Py_DECREF(candidates);
    return yirage_py_result(status, NULL);
  }
  profiled = PyList_New(0);
  for (i = 0; i < n; ++i) {
    yirage_search_profile_record r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    if (yirage_search_result_profiled(result, i, &r) != YIRAGE_OK) continue;
    PyObject *d = Py_BuildValue("{s:s,s:d,s:d,s:d,s:O,s:s,s:d,s:d,s:I}", "description", r.description,
        "estimated_seconds", r.estimated_seconds, "measured_seconds", r.measured_seconds,
        "relative_error", r.relative_error, "kept", r.kept ? Py_True : Py_False, "error", r.error,
        "min_seconds", r.min_seconds, "max_seconds", r.max_seconds, "samples", (unsigned)r.samples);
    PyList_Append(profiled, d);
    Py_DECREF(d);
  }
  return yirage_py_result(YIRAGE_OK, Py_BuildValue(
      "({s:L,s:L,s:L,s:L,s:L,s:d,s:d,s:d,s:O},NN)", "states", (long long)s.states,
      "candidates", (long long)s.candidates, "fingerprint_checks", (long long)s.fingerprint_checks,
      "unbuildable", (long long)s.unbuildable,
      "z3_queries", (long long)s.z3_queries, "z3_seconds", s.z3_seconds,
      "first_fused_seconds", s.first_fused_seconds, "seconds", s.seconds,
      "from_cache", s.from_cache ? Py_True : Py_False, candidates, profiled));
}

/* [status, kernel] */
PyObject *yirage_py_compile(const yirage_graph *graph, const yirage_device *device) {
  yirage_kernel *kernel = NULL;
  yirage_status status;
  Py_BEGIN_ALLOW_THREADS
  status = yirage_compile(graph, device, NULL, &kernel);
  Py_END_ALLOW_THREADS
  return yirage_py_result(status, status == YIRAGE_OK
      ? yirage_py_handle(kernel, SWIGTYPE_p_yirage_kernel_s) : NULL);
}

/* How yirage_py_run runs: on the caller's device tensors (and waits where asked), or on host
 * tensors through device memory of yirage's (yirage_kernel_run_host, which waits). */
enum { YIRAGE_PY_RUN = 0, YIRAGE_PY_RUN_SYNC = 1, YIRAGE_PY_RUN_HOST = 2 };

/* The kernel run on `stream` as `mode` says (the GIL released). */
static yirage_status yirage_py_run(const yirage_kernel *kernel, DLTensor **ins, size_t n_in, DLTensor **outs,
                                   size_t n_out, unsigned long long stream, int mode) {
  yirage_status status;
  Py_BEGIN_ALLOW_THREADS
  if (mode == YIRAGE_PY_RUN_HOST) {
    status = yirage_kernel_run_host(kernel, (const DLTensor *const *)ins, n_in, outs, n_out);
  } else {
    status = yirage_kernel_run(kernel, (const DLTensor *const *)ins, n_in, outs, n_out, (void *)(uintptr_t)stream);
    if (status == YIRAGE_OK && mode == YIRAGE_PY_RUN_SYNC) {
      status = yirage_kernel_synchronize(kernel, (void *)(uintptr_t)stream);
    }
  }
  Py_END_ALLOW_THREADS
  return status;
}

/* [status]: the kernel run on DLPack capsules on `stream`; `mode` 1: waited for (the GIL
 * released), 2: host tensors whatever the device (yirage_kernel_run_host). */
PyObject *yirage_py_kernel_run(const yirage_kernel *kernel, PyObject *inputs, PyObject *outputs,
                               unsigned long long stream, int mode) {
  Py_ssize_t n_in, n_out;
  DLTensor *in_stack[8], *out_stack[8], **ins = in_stack, **outs = out_stack;
  yirage_status status;
  if (!PySequence_Check(inputs) || !PySequence_Check(outputs)) {
    PyErr_SetString(PyExc_TypeError, "inputs and outputs must be sequences of DLPack capsules");
    return NULL;
  }
  n_in = PySequence_Size(inputs);
  n_out = PySequence_Size(outputs);
  /* Most kernels have a few tensors: the arrays on the stack, else on the heap. */
  if (n_in > 8) ins = (DLTensor **)calloc((size_t)n_in, sizeof *ins);
  if (n_out > 8) outs = (DLTensor **)calloc((size_t)n_out, sizeof *outs);
  if (ins == NULL || outs == NULL || yirage_py_dltensors(inputs, ins, n_in) != 0 ||
      yirage_py_dltensors(outputs, outs, n_out) != 0) {
    if (ins != in_stack) free(ins);
    if (outs != out_stack) free(outs);
    return PyErr_Occurred() ? NULL : PyErr_NoMemory();
  }
  status = yirage_py_run(kernel, ins, (size_t)n_in, outs, (size_t)n_out, stream, mode);
  if (ins != in_stack) free(ins);
  if (outs != out_stack) free(outs);
  return yirage_py_result(status, NULL);
}

/* PyTorch tensors on a GPU, read in C without DLPack (`__dlpack__` costs about 3 µs a tensor, and
 * the same reads in Python a few more: docs/python.md, "Cheap calls"). `spec`, made once per
 * kernel by _make_torch_spec: (torch.Tensor, {torch.dtype: (DLPack code, bits)}, the allocators'
 * function of a device index (per output, a function of no arguments making a new compact one
 * there), ((dims, torch.dtype) of each output), {device index: its allocators}, the
 * current-stream function of a device index). */
enum { YIRAGE_PY_TORCH_TYPE, YIRAGE_PY_TORCH_DTYPES, YIRAGE_PY_TORCH_ALLOCATORS, YIRAGE_PY_TORCH_OUTPUTS,
       YIRAGE_PY_TORCH_PLACES, YIRAGE_PY_TORCH_STREAM, YIRAGE_PY_TORCH_SPEC_SIZE };
enum { YIRAGE_PY_TORCH_MAX_TENSORS = 16 };

static PyObject *yirage_py_name(PyObject **cache, const char *name) {
  if (*cache == NULL) *cache = PyUnicode_InternFromString(name);
  return *cache;
}

/* An int from `object.name()`; -1 with an exception where it fails. */
static long long yirage_py_call_int(PyObject *object, PyObject **cache, const char *name) {
  PyObject *name_object = yirage_py_name(cache, name), *r;
  long long value;
  if (name_object == NULL) return -1;
  r = PyObject_CallMethodObjArgs(object, name_object, NULL);
  if (r == NULL) return -1;
  value = PyLong_AsLongLong(r);
  Py_DECREF(r);
  return value;
}

/* `t`'s DLPack dtype from the spec's (code, bits); -1 with TypeError for anything else. */
static int yirage_py_torch_dtype(PyObject *dl, DLTensor *t) {
  long code, bits;
  if (!PyTuple_Check(dl) || PyTuple_GET_SIZE(dl) != 2) {
    PyErr_SetString(PyExc_TypeError, "a spec dtype must be a (DLPack code, bits) tuple");
    return -1;
  }
  code = PyLong_AsLong(PyTuple_GET_ITEM(dl, 0));
  bits = PyLong_AsLong(PyTuple_GET_ITEM(dl, 1));
  if (PyErr_Occurred()) return -1;
  t->dtype.code = (uint8_t)code;
  t->dtype.bits = (uint8_t)bits;
  t->dtype.lanes = 1;
  return 0;
}

/* Fills `t` (shape and strides in `room`, 2 × YIRAGE_MAX_RANK) from PyTorch tensor `x` on a device
 * of `device_type`, and `*device` with its index: 1, or 0 where `x` is not a plain torch.Tensor on
 * a CUDA (or ROCm) GPU of a dtype yirage has (the DLPack path takes it), or -1 with an exception. */
static int yirage_py_torch_tensor(PyObject *x, PyObject *spec, int device_type, DLTensor *t, int64_t *room,
                                  long long *device) {
  static PyObject *is_cuda_name, *dtype_name, *get_device_name, *data_ptr_name, *shape_name, *contiguous_name,
      *stride_name;
  PyObject *is_cuda, *dtype, *dl, *shape, *strides;
  long long pointer;
  Py_ssize_t ndim, ndim_strides;
  int contiguous, on_gpu;
  if ((PyObject *)Py_TYPE(x) != PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_TYPE)) return 0;
  /* Not an XPU or MPS tensor, which have device indices too. */
  if (yirage_py_name(&is_cuda_name, "is_cuda") == NULL || (is_cuda = PyObject_GetAttr(x, is_cuda_name)) == NULL)
    return -1;
  on_gpu = PyObject_IsTrue(is_cuda);
  Py_DECREF(is_cuda);
  if (on_gpu <= 0) return on_gpu;
  if (yirage_py_name(&dtype_name, "dtype") == NULL || (dtype = PyObject_GetAttr(x, dtype_name)) == NULL) return -1;
  dl = PyDict_GetItemWithError(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_DTYPES), dtype);
  Py_DECREF(dtype);
  if (dl == NULL) return PyErr_Occurred() ? -1 : 0;
  *device = yirage_py_call_int(x, &get_device_name, "get_device");
  if (*device < 0) return PyErr_Occurred() ? -1 : 0; /* a host tensor */
  pointer = yirage_py_call_int(x, &data_ptr_name, "data_ptr");
  if (pointer == -1 && PyErr_Occurred()) return -1;
  if (yirage_py_name(&shape_name, "shape") == NULL || (shape = PyObject_GetAttr(x, shape_name)) == NULL) return -1;
  if (PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) > YIRAGE_MAX_RANK) {
    Py_DECREF(shape);
    return 0; /* a rank yirage has not: the DLPack path's checks name it */
  }
  ndim = yirage_py_int64s(shape, room, YIRAGE_MAX_RANK, "a PyTorch shape");
  Py_DECREF(shape);
  if (ndim < 0) return -1;
  memset(t, 0, sizeof *t);
  t->shape = room;
  contiguous = (int)yirage_py_call_int(x, &contiguous_name, "is_contiguous");
  if (contiguous == -1 && PyErr_Occurred()) return -1;
  if (!contiguous) {
    if (yirage_py_name(&stride_name, "stride") == NULL ||
        (strides = PyObject_CallMethodObjArgs(x, stride_name, NULL)) == NULL)
      return -1;
    ndim_strides = yirage_py_int64s(strides, room + YIRAGE_MAX_RANK, YIRAGE_MAX_RANK, "a PyTorch stride");
    Py_DECREF(strides);
    if (ndim_strides < 0) return -1;
    if (ndim_strides != ndim) return 0;
    t->strides = room + YIRAGE_MAX_RANK;
  }
  t->data = (void *)(uintptr_t)pointer;
  t->device.device_type = (DLDeviceType)device_type;
  t->device.device_id = (int32_t)*device;
  t->ndim = (int32_t)ndim;
  return yirage_py_torch_dtype(dl, t) == 0 ? 1 : -1;
}

/* The outputs' allocators on device index `device`, made at the first call there and kept in
 * the spec's places: a new reference, or NULL with an exception. Making them runs Python (and
 * PyTorch, which releases the GIL): where two threads make them at once, the first one stored is
 * kept and both use it. */
static PyObject *yirage_py_torch_places(PyObject *spec, long long device) {
  PyObject *places = PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_PLACES), *key, *made, *kept;
  const Py_ssize_t n = PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_OUTPUTS));
  if ((key = PyLong_FromLongLong(device)) == NULL) return NULL;
  kept = PyDict_GetItemWithError(places, key);
  if (kept != NULL || PyErr_Occurred()) {
    Py_DECREF(key);
    Py_XINCREF(kept);
    return kept;
  }
  made = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_ALLOCATORS), key, NULL);
  if (made != NULL && (!PyTuple_Check(made) || PyTuple_GET_SIZE(made) != n)) {
    PyErr_SetString(PyExc_TypeError, "the spec's allocators must be a tuple of one function per output");
    Py_CLEAR(made);
  }
  kept = made ? PyDict_SetDefault(places, key, made) : NULL;
  Py_XINCREF(kept);
  Py_XDECREF(made);
  Py_DECREF(key);
  return kept;
}

/* New outputs from the spec's allocators on device index `device`, their DLTensors in `t` (shapes
 * in `room`), compact and of the kernel's own dims and dtypes; a new list, or NULL. */
static PyObject *yirage_py_torch_new_outputs(PyObject *spec, long long device, int device_type, DLTensor *t,
                                             int64_t (*room)[2 * YIRAGE_MAX_RANK]) {
  static PyObject *data_ptr_name;
  PyObject *outputs = PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_OUTPUTS);
  PyObject *allocators = yirage_py_torch_places(spec, device), *list;
  const Py_ssize_t n = PyTuple_GET_SIZE(outputs);
  Py_ssize_t i;
  if (allocators == NULL) return NULL;
  if ((list = PyList_New(n)) == NULL) {
    Py_DECREF(allocators);
    return NULL;
  }
  for (i = 0; i < n; ++i) {
    PyObject *dims = PyTuple_GET_ITEM(PyTuple_GET_ITEM(outputs, i), 0);
    PyObject *dl = PyDict_GetItem(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_DTYPES),
                                  PyTuple_GET_ITEM(PyTuple_GET_ITEM(outputs, i), 1));
    PyObject *o = PyObject_CallNoArgs(PyTuple_GET_ITEM(allocators, i));
    long long pointer;
    if (o == NULL) break;
    PyList_SET_ITEM(list, i, o);
    pointer = yirage_py_call_int(o, &data_ptr_name, "data_ptr");
    if ((pointer == -1 && PyErr_Occurred()) || dl == NULL) break;
    memset(&t[i], 0, sizeof t[i]);
    t[i].ndim = (int32_t)yirage_py_int64s(dims, room[i], YIRAGE_MAX_RANK, "an output's dims");
    if (t[i].ndim < 0 || yirage_py_torch_dtype(dl, &t[i]) != 0) break;
    t[i].data = (void *)(uintptr_t)pointer;
    t[i].device.device_type = (DLDeviceType)device_type;
    t[i].device.device_id = (int32_t)device;
    t[i].shape = room[i];
  }
  Py_DECREF(allocators);
  if (i < n) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "an output's dtype is not in the spec");
    Py_DECREF(list);
    return NULL;
  }
  return list;
}

/* [status, outputs]: the kernel run on PyTorch tensors on a GPU (`outputs` None: new ones from
 * the spec's allocators; `stream` None: PyTorch's current stream on the inputs' device; waited
 * for where `synchronize`), or None where a tensor is not for this path (a subclass, a host tensor, one on
 * another kind of device such as XPU, a dtype yirage has not, more than 16; inputs or outputs
 * given as other than a list or tuple): the caller then takes the DLPack path. */
PyObject *yirage_py_torch_run(const yirage_kernel *kernel, PyObject *spec, PyObject *inputs, PyObject *outputs,
                              PyObject *stream, int device_type, int synchronize) {
  DLTensor tensors[2 * YIRAGE_PY_TORCH_MAX_TENSORS], *ins[YIRAGE_PY_TORCH_MAX_TENSORS];
  DLTensor *outs[YIRAGE_PY_TORCH_MAX_TENSORS];
  int64_t room[2 * YIRAGE_PY_TORCH_MAX_TENSORS][2 * YIRAGE_MAX_RANK];
  PyObject *in_fast = NULL, *out_fast = NULL, *made = NULL, *r = NULL;
  Py_ssize_t n_in, n_out, i;
  long long device = -1, on = 0;
  unsigned long long handle = 0;
  yirage_status status;
  if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != YIRAGE_PY_TORCH_SPEC_SIZE ||
      !PyDict_Check(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_DTYPES)) ||
      !PyTuple_Check(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_OUTPUTS)) ||
      !PyDict_Check(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_PLACES))) {
    PyErr_SetString(PyExc_TypeError, "spec must be Kernel._torch_spec's tuple");
    return NULL;
  }
  for (i = 0; i < PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_OUTPUTS)); ++i) {
    PyObject *o = PyTuple_GET_ITEM(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_OUTPUTS), i);
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(o, 0))) {
      PyErr_SetString(PyExc_TypeError, "spec must be Kernel._torch_spec's tuple: outputs are (dims, dtype)");
      return NULL;
    }
  }
  /* Lists and tuples only: the other path must still see the tensors of an iterator. */
  if ((!PyList_Check(inputs) && !PyTuple_Check(inputs)) ||
      (outputs != Py_None && !PyList_Check(outputs) && !PyTuple_Check(outputs))) {
    Py_RETURN_NONE;
  }
  if ((in_fast = PySequence_Fast(inputs, "inputs must be a sequence")) == NULL) return NULL;
  n_in = PySequence_Fast_GET_SIZE(in_fast);
  n_out = PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_OUTPUTS));
  if (outputs != Py_None) {
    if ((out_fast = PySequence_Fast(outputs, "outputs must be a sequence")) == NULL) goto done;
    n_out = PySequence_Fast_GET_SIZE(out_fast);
  }
  if (n_in < 1 || n_in > YIRAGE_PY_TORCH_MAX_TENSORS || n_out > YIRAGE_PY_TORCH_MAX_TENSORS) goto other_path;
  for (i = 0; i < n_in + n_out; ++i) {
    int read;
    if (i >= n_in && out_fast == NULL) break;
    read = yirage_py_torch_tensor(i < n_in ? PySequence_Fast_GET_ITEM(in_fast, i)
                                           : PySequence_Fast_GET_ITEM(out_fast, i - n_in),
                                  spec, device_type, &tensors[i], room[i], i == 0 ? &device : &on);
    if (read < 0) goto done;
    if (read == 0) goto other_path;
  }
  for (i = 0; i < n_in; ++i) ins[i] = &tensors[i];
  for (i = 0; i < n_out; ++i) outs[i] = &tensors[n_in + i];
  if (out_fast == NULL) {
    made = yirage_py_torch_new_outputs(spec, device, device_type, &tensors[n_in], &room[n_in]);
    if (made == NULL) goto done;
  }
  if (stream == Py_None) {
    PyObject *current = PyObject_CallFunction(PyTuple_GET_ITEM(spec, YIRAGE_PY_TORCH_STREAM), "L", device);
    if (current == NULL) goto done;
    handle = PyLong_AsUnsignedLongLong(current);
    Py_DECREF(current);
  } else {
    PyObject *index = PyNumber_Index(stream); /* an int, or anything with __index__ */
    if (index == NULL) goto done;
    handle = PyLong_AsUnsignedLongLong(index);
    Py_DECREF(index);
  }
  if (handle == (unsigned long long)-1 && PyErr_Occurred()) goto done;
  status = yirage_py_run(kernel, ins, (size_t)n_in, outs, (size_t)n_out, handle,
                         synchronize ? YIRAGE_PY_RUN_SYNC : YIRAGE_PY_RUN);
  if (made == NULL) made = PySequence_List(out_fast); /* the given outputs */
  r = made ? yirage_py_result(status, status == YIRAGE_OK ? made : NULL) : NULL;
  if (r != NULL && status == YIRAGE_OK) made = NULL; /* the result holds it */
  goto done;
other_path:
  Py_INCREF(Py_None);
  r = Py_None;
done:
  Py_XDECREF(made);
  Py_XDECREF(in_fast);
  Py_XDECREF(out_fast);
  return r;
}

/* Device buffers (yirage_buffer) for callers whose tensors are on the host. */

/* [status, buffer] */
PyObject *yirage_py_buffer_alloc(const yirage_device *device, unsigned long long bytes) {
  yirage_buffer *buffer = NULL;
  const yirage_status status = yirage_buffer_alloc(device, (size_t)bytes, &buffer);
  return yirage_py_result(status, status == YIRAGE_OK ? yirage_py_handle(buffer, SWIGTYPE_p_yirage_buffer_s) : NULL);
}

/* [status]: copies a C-contiguous Python buffer (a numpy array) into the device buffer at 0
 * (`to_device`), or the device buffer's first bytes into it (a writable one); the GIL released. */
PyObject *yirage_py_buffer_copy(yirage_buffer *buffer, PyObject *host, int to_device) {
  Py_buffer view;
  yirage_status status;
  if (PyObject_GetBuffer(host, &view, PyBUF_C_CONTIGUOUS | (to_device ? 0 : PyBUF_WRITABLE)) != 0) return NULL;
  Py_BEGIN_ALLOW_THREADS
  status = to_device ? yirage_buffer_write(buffer, 0, view.buf, (size_t)view.len)
                     : yirage_buffer_read(buffer, 0, view.buf, (size_t)view.len);
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&view);
  return yirage_py_result(status, NULL);
}

/* A DLPack capsule's destructor: frees the tensor unless a consumer took it ("used_dltensor"). */
static void yirage_py_capsule_free(PyObject *capsule) {
  DLManagedTensor *managed;
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  managed = (DLManagedTensor *)PyCapsule_GetPointer(capsule, "dltensor");
  if (managed != NULL && managed->deleter != NULL) managed->deleter(managed);
}

/* [status, capsule]: the buffer as a DLPack tensor of `dims` and yirage dtype `dtype`. */
PyObject *yirage_py_buffer_dlpack(const yirage_buffer *buffer, PyObject *dims, int dtype) {
  int64_t shape[64]; /* yirage_py_int64s reads up to 64; the C call refuses more than YIRAGE_MAX_RANK */
  DLManagedTensor *managed = NULL;
  yirage_status status;
  PyObject *capsule;
  const Py_ssize_t ndim = yirage_py_int64s(dims, shape, 64, "dims");
  if (ndim < 0) return NULL;
  status = yirage_buffer_to_dlpack(buffer, shape, (int32_t)ndim, (yirage_dtype)dtype, &managed);
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  capsule = PyCapsule_New(managed, "dltensor", yirage_py_capsule_free);
  if (capsule == NULL) managed->deleter(managed);
  return capsule ? yirage_py_result(status, capsule) : NULL;
}

/* [status]: waits for the kernel's work on `stream` (the GIL released). */
PyObject *yirage_py_kernel_synchronize(const yirage_kernel *kernel, unsigned long long stream) {
  yirage_status status;
  Py_BEGIN_ALLOW_THREADS
  status = yirage_kernel_synchronize(kernel, (void *)(uintptr_t)stream);
  Py_END_ALLOW_THREADS
  return yirage_py_result(status, NULL);
}

/* [status, str]: how a run of the kernel launches (yirage_kernel_describe). */
PyObject *yirage_py_kernel_describe(const yirage_kernel *kernel) {
  yirage_blob *blob = NULL;
  PyObject *text;
  yirage_status status = yirage_kernel_describe(kernel, &blob);
  if (status != YIRAGE_OK) return yirage_py_result(status, NULL);
  text = PyUnicode_FromStringAndSize((const char *)yirage_blob_data(blob),
                                     (Py_ssize_t)yirage_blob_size(blob) - 1); /* less the NUL */
  yirage_blob_release(blob);
  return text ? yirage_py_result(status, text) : NULL;
}

/* [status, dict]: yirage_kernel_measure against the kernel's own graph (the GIL released). */
PyObject *yirage_py_kernel_measure(const yirage_kernel *kernel, unsigned long long seed,
                                   unsigned int warmup, unsigned int repeats,
                                   unsigned long long flush_bytes) {
  yirage_measure_options options;
  yirage_measurement m;
  yirage_status status;
  yirage_measure_options_init(&options);
  options.seed = seed;
  options.warmup = warmup;
  options.repeats = repeats;
  options.flush_bytes = flush_bytes;
  memset(&m, 0, sizeof m);
  m.struct_size = sizeof m;
  Py_BEGIN_ALLOW_THREADS
  status = yirage_kernel_measure(kernel, NULL, &options, &m);
  Py_END_ALLOW_THREADS
  return yirage_py_result(status, status == YIRAGE_OK ? Py_BuildValue(
      "{s:O,s:d,s:d,s:d,s:s}", "correct", m.correct ? Py_True : Py_False, "relative_error",
      m.relative_error, "median_seconds", m.median_seconds, "min_seconds", m.min_seconds, "error",
      m.error) : NULL);
}
%}
