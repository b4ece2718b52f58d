/* SWIG interface: the raw C ABI of yirage.h as the Python module yirage.yirage_c. Statuses come
 * back as integers and out-parameters as extra return values ([status, out, ...]); the package
 * yirage (yirage/__init__.py) turns them into Python objects and exceptions. Only yirage.h is
 * used: no core headers. */
%module yirage_c

%{
#define SWIG_FILE_WITH_INIT
#include "yirage.h"
%}

%include <stdint.i>
%include <typemaps.i>

/* Out-parameters become extra return values. */
%define %yirage_out_handle(TYPE, NAME)
%typemap(in, numinputs=0) TYPE **NAME (TYPE *temp = NULL) "$1 = &temp;";
%typemap(argout) TYPE **NAME {
  $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(*$1, $*1_descriptor, 0));
}
%enddef
%yirage_out_handle(yirage_graph, out_graph)
%yirage_out_handle(yirage_tensor, out_tensor)
%yirage_out_handle(yirage_block_graph, out_block_graph)
%yirage_out_handle(yirage_blob, out_blob)

%apply size_t *OUTPUT { size_t *out_count, size_t *out_ndim };
%apply int64_t *OUTPUT { int64_t *out_bytes };
%apply int32_t *OUTPUT { int32_t *out_done };
%typemap(in, numinputs=0) yirage_dtype *out_dtype (yirage_dtype temp) "$1 = &temp;";
%typemap(argout) yirage_dtype *out_dtype {
  $result = SWIG_Python_AppendOutput($result, PyLong_FromLong((long)*$1));
}

/* Sequences of ints as (count, int64 array) and 3-entry int32 maps. */
%typemap(in) (size_t ndim, const int64_t *dims), (size_t n_normalized, const int64_t *normalized_shape),
             (size_t n_parts, const int64_t *sizes) {
  Py_ssize_t i, n;
  if (!PySequence_Check($input)) SWIG_exception_fail(SWIG_TypeError, "expected a sequence of ints");
  n = PySequence_Size($input);
  $1 = (size_t)n;
  $2 = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  for (i = 0; i < n; ++i) {
    PyObject *item = PySequence_GetItem($input, i);
    $2[i] = (int64_t)PyLong_AsLongLong(item);
    Py_XDECREF(item);
    if (PyErr_Occurred()) { free($2); $2 = NULL; SWIG_exception_fail(SWIG_TypeError, "expected a sequence of ints"); }
  }
}
%typemap(freearg) (size_t ndim, const int64_t *dims), (size_t n_normalized, const int64_t *normalized_shape),
                  (size_t n_parts, const int64_t *sizes) "free($2);";
%typemap(in) const int32_t *imap (int32_t temp[3]), const int32_t *omap (int32_t temp[3]) {
  int i;
  if (!PySequence_Check($input) || PySequence_Size($input) != 3)
    SWIG_exception_fail(SWIG_TypeError, "expected a sequence of 3 ints");
  for (i = 0; i < 3; ++i) {
    PyObject *item = PySequence_GetItem($input, i);
    temp[i] = (int32_t)PyLong_AsLong(item);
    Py_XDECREF(item);
  }
  if (PyErr_Occurred()) SWIG_exception_fail(SWIG_TypeError, "expected a sequence of 3 ints");
  $1 = temp;
}

/* Functions whose array out-parameters or structs need a Python-shaped wrapper. */
%ignore yirage_graph_split;
%ignore yirage_graph_chunk;
%ignore yirage_graph_customized;
%ignore yirage_tensor_get_dims;
%ignore yirage_graph_run_reference;
%ignore yirage_graph_equivalent;
%ignore yirage_graph_serialize;
%ignore yirage_graph_deserialize;
%ignore yirage_blob_data;
%ignore yirage_block_graph_create;
%ignore yirage_block_graph_options_init;
%ignore yirage_equivalence_options_init;
%ignore yirage_block_graph_options;
%ignore yirage_equivalence_options;
%ignore yirage_equivalence_result;
%ignore yirage_target_properties;
%ignore yirage_target_builtin;
%ignore yirage_graph_estimate_cost;
%ignore yirage_buffer_write;
%ignore yirage_buffer_read;
%ignore yirage_buffer_to_dlpack;
%ignore yirage_kernel_run_host;
%ignore yirage_kernel_describe;
%ignore yirage_search_plan_create;
%ignore yirage_search_plan_id;
%ignore yirage_search_plan_run_units;
%ignore yirage_search_plan_add_partial;
%ignore yirage_search_plan_merge;

%include "python_helpers.i"
%include "runtime_helpers.i"

%include "yirage.h"
