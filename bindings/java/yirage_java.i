/* SWIG interface: the C ABI of yirage.h as the JNI class org.yirage.jni.YirageNative. The
 * hand-written package org.yirage (src/org/yirage) is the API Java programmers use; this layer
 * is its plumbing and stays close to C:
 *  - every opaque handle (graph, tensor, block graph, blob, context, device, kernel, search
 *    result) is a Java long holding the pointer, 0 for NULL; out-parameters of handle type are
 *    long[] of length >= 1;
 *  - statuses are ints (YirageNativeConstants.YIRAGE_OK, ...): org.yirage.Status turns them into
 *    exceptions, with yirage_last_error_message() read on the same thread;
 *  - enums are int constants; size_t, int64_t are long; uint32_t is long (SWIG keeps it
 *    unsigned); uint64_t (seeds, byte counts) is long, reinterpreted;
 *  - option and info structs are SWIG proxies whose constructor fills the C defaults and
 *    struct_size, and whose delete() frees them (no finalizers: the Java layer frees them in
 *    finally blocks);
 *  - host tensors cross as org.yirage.HostTensor[] (a direct ByteBuffer, a dtype code and a
 *    shape), read field by field into DLTensors for the duration of the call.
 * Only yirage.h is used: no core headers. */
%module YirageNative

%{
#include <stdlib.h>
#include <string.h>
#include "yirage.h"
%}

/* The JNI class loads the library when it is first used: from the file named by the system
 * property yirage.jni.library when set, else libyirage_jni.so from java.library.path. */
%pragma(java) jniclasscode=%{
  static {
    String path = System.getProperty("yirage.jni.library");
    if (path != null && !path.isEmpty()) {
      System.load(path);
    } else {
      System.loadLibrary("yirage_jni");
    }
  }
%}

%include <stdint.i>
%include <arrays_java.i>
%include <enumtypeunsafe.swg>
%javaconst(1);

/* Built with -DSWIGWORDSIZE64, so int64_t is C long as it is on LP64 Linux (no pointer casts
 * between long and long long in the wrapper); SWIG maps C long to Java int, so int64_t values
 * and arrays are mapped to Java long explicitly. Seeds (uint64_t) are 64-bit patterns in a Java
 * long (BigInteger would be SWIG's default). */
%apply long long { int64_t, uint64_t };
%apply long long[ANY] { int64_t[ANY] };

/* No finalizers on the struct proxies: they are freed explicitly. */
%typemap(javafinalize) SWIGTYPE ""

/* ---- Handles as long ---------------------------------------------------------------------- */
%define %yirage_handle(TYPE)
%typemap(jni) TYPE *, const TYPE * "jlong"
%typemap(jtype) TYPE *, const TYPE * "long"
%typemap(jstype) TYPE *, const TYPE * "long"
%typemap(javain) TYPE *, const TYPE * "$javainput"
%typemap(javaout) TYPE *, const TYPE * { return $jnicall; }
%typemap(in) TYPE *, const TYPE * %{ $1 = ($1_ltype)(intptr_t)$input; %}
%typemap(out) TYPE *, const TYPE * %{ $result = (jlong)(intptr_t)$1; %}
%typemap(memberin) TYPE *, const TYPE * %{ $1 = $input; %}
/* Out-parameters: a long[] of length >= 1 receives the handle; null passes NULL (optional
 * out-parameters; required ones then fail in the library with INVALID_ARGUMENT). */
%typemap(jni) TYPE **, const TYPE ** "jlongArray"
%typemap(jtype) TYPE **, const TYPE ** "long[]"
%typemap(jstype) TYPE **, const TYPE ** "long[]"
%typemap(javain) TYPE **, const TYPE ** "$javainput"
%typemap(in) TYPE ** ($*1_ltype temp = NULL), const TYPE ** ($*1_ltype temp = NULL) {
  if ($input && JCALL1(GetArrayLength, jenv, $input) < 1) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "out-parameter: a long[] of length >= 1 is required");
    return $null;
  }
  $1 = $input ? &temp : NULL;
}
%typemap(argout) TYPE **, const TYPE ** {
  if ($input) {
    jlong value = (jlong)(intptr_t)temp$argnum;
    JCALL4(SetLongArrayRegion, jenv, $input, 0, 1, &value);
  }
}
%enddef
%yirage_handle(yirage_graph)
%yirage_handle(yirage_tensor)
%yirage_handle(yirage_block_graph)
%yirage_handle(yirage_blob)
%yirage_handle(yirage_context)
%yirage_handle(yirage_device)
%yirage_handle(yirage_kernel)
%yirage_handle(yirage_search_result)

/* Native streams (void *) as long; 0 is the backend's default stream. */
%typemap(jni) void *stream "jlong"
%typemap(jtype) void *stream "long"
%typemap(jstype) void *stream "long"
%typemap(javain) void *stream "$javainput"
%typemap(in) void *stream %{ $1 = (void *)(intptr_t)$input; %}

/* ---- Scalar out-parameters as arrays of length >= 1 ----------------------------------------- */
%define %yirage_out_scalar(CTYPE, JNITYPE, JNIARRAY, JAVATYPE, SETREGION, NAMES)
%typemap(jni) CTYPE *NAMES "JNIARRAY"
%typemap(jtype) CTYPE *NAMES "JAVATYPE[]"
%typemap(jstype) CTYPE *NAMES "JAVATYPE[]"
%typemap(javain) CTYPE *NAMES "$javainput"
%typemap(in) CTYPE *NAMES (CTYPE temp = 0) {
  if (!$input || JCALL1(GetArrayLength, jenv, $input) < 1) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "out-parameter: an array of length >= 1 is required");
    return $null;
  }
  $1 = &temp;
}
%typemap(argout) CTYPE *NAMES {
  JNITYPE value = (JNITYPE)temp$argnum;
  JCALL4(SETREGION, jenv, $input, 0, 1, &value);
}
%enddef
%yirage_out_scalar(size_t, jlong, jlongArray, long, SetLongArrayRegion, out_count)
%yirage_out_scalar(size_t, jlong, jlongArray, long, SetLongArrayRegion, out_ndim)
%yirage_out_scalar(int64_t, jlong, jlongArray, long, SetLongArrayRegion, out_bytes)
%yirage_out_scalar(double, jdouble, jdoubleArray, double, SetDoubleArrayRegion, out_seconds)
%yirage_out_scalar(yirage_dtype, jint, jintArray, int, SetIntArrayRegion, out_dtype)

/* const char **out_text: a String[] of length >= 1 receives the (library-owned) text. */
%typemap(jni) const char **out_text "jobjectArray"
%typemap(jtype) const char **out_text "String[]"
%typemap(jstype) const char **out_text "String[]"
%typemap(javain) const char **out_text "$javainput"
%typemap(in) const char **out_text (const char *temp = NULL) {
  if (!$input || JCALL1(GetArrayLength, jenv, $input) < 1) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "out-parameter: a String[] of length >= 1 is required");
    return $null;
  }
  $1 = ($1_ltype)&temp;
}
%typemap(argout) const char **out_text {
  if (temp$argnum) {
    jstring text = JCALL1(NewStringUTF, jenv, temp$argnum);
    JCALL3(SetObjectArrayElement, jenv, $input, 0, text);
  }
}

/* ---- Arrays in ------------------------------------------------------------------------------ */
/* (count, int64 values) pairs as one long[]. */
%typemap(jni) (size_t ndim, const int64_t *dims), (size_t n_normalized, const int64_t *normalized_shape), (size_t n_parts, const int64_t *sizes) "jlongArray"
%typemap(jtype) (size_t ndim, const int64_t *dims), (size_t n_normalized, const int64_t *normalized_shape), (size_t n_parts, const int64_t *sizes) "long[]"
%typemap(jstype) (size_t ndim, const int64_t *dims), (size_t n_normalized, const int64_t *normalized_shape), (size_t n_parts, const int64_t *sizes) "long[]"
%typemap(javain) (size_t ndim, const int64_t *dims), (size_t n_normalized, const int64_t *normalized_shape), (size_t n_parts, const int64_t *sizes) "$javainput"
%typemap(in) (size_t ndim, const int64_t *dims), (size_t n_normalized, const int64_t *normalized_shape), (size_t n_parts, const int64_t *sizes) {
  if (!$input) {
    SWIG_JavaThrowException(jenv, SWIG_JavaNullPointerException, "null long[]");
    return $null;
  }
  $1 = (size_t)JCALL1(GetArrayLength, jenv, $input);
  $2 = (int64_t *)JCALL2(GetLongArrayElements, jenv, $input, 0);
}
%typemap(freearg) (size_t ndim, const int64_t *dims), (size_t n_normalized, const int64_t *normalized_shape), (size_t n_parts, const int64_t *sizes) {
  if ($2) JCALL3(ReleaseLongArrayElements, jenv, $input, (jlong *)$2, JNI_ABORT);
}

/* imap, omap: int[3]. */
%typemap(jni) const int32_t *imap, const int32_t *omap "jintArray"
%typemap(jtype) const int32_t *imap, const int32_t *omap "int[]"
%typemap(jstype) const int32_t *imap, const int32_t *omap "int[]"
%typemap(javain) const int32_t *imap, const int32_t *omap "$javainput"
%typemap(in) const int32_t *imap (int32_t temp[3]), const int32_t *omap (int32_t temp[3]) {
  if (!$input || JCALL1(GetArrayLength, jenv, $input) != 3) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "$1_name: an int[3] is required");
    return $null;
  }
  JCALL4(GetIntArrayRegion, jenv, $input, 0, 3, (jint *)temp);
  $1 = temp;
}

/* Bytes in (deserialize) and out (blob copies, dims). */
%apply (const char *STRING, size_t LENGTH) { (const void *data, size_t size) };
%apply (char *STRING, size_t LENGTH) { (void *out_bytes, size_t capacity) };
%typemap(jni) (size_t capacity, int64_t *out_dims) "jlongArray"
%typemap(jtype) (size_t capacity, int64_t *out_dims) "long[]"
%typemap(jstype) (size_t capacity, int64_t *out_dims) "long[]"
%typemap(javain) (size_t capacity, int64_t *out_dims) "$javainput"
%typemap(in) (size_t capacity, int64_t *out_dims) {
  if (!$input) {
    SWIG_JavaThrowException(jenv, SWIG_JavaNullPointerException, "null long[]");
    return $null;
  }
  $1 = (size_t)JCALL1(GetArrayLength, jenv, $input);
  $2 = (int64_t *)JCALL2(GetLongArrayElements, jenv, $input, 0);
}
%typemap(freearg) (size_t capacity, int64_t *out_dims) {
  if ($2) JCALL3(ReleaseLongArrayElements, jenv, $input, (jlong *)$2, 0);
}

/* Handle arrays out: a long[] whose length is the capacity the helper checks. */
%typemap(jni) (yirage_tensor **handles, size_t capacity) "jlongArray"
%typemap(jtype) (yirage_tensor **handles, size_t capacity) "long[]"
%typemap(jstype) (yirage_tensor **handles, size_t capacity) "long[]"
%typemap(javain) (yirage_tensor **handles, size_t capacity) "$javainput"
%typemap(in) (yirage_tensor **handles, size_t capacity) {
  if (!$input) {
    SWIG_JavaThrowException(jenv, SWIG_JavaNullPointerException, "null long[]");
    return $null;
  }
  $2 = (size_t)JCALL1(GetArrayLength, jenv, $input);
  $1 = (yirage_tensor **)calloc($2 ? $2 : 1, sizeof(yirage_tensor *));
}
%typemap(argout) (yirage_tensor **handles, size_t capacity) {
  size_t i;
  for (i = 0; i < $2; ++i) {
    jlong value = (jlong)(intptr_t)$1[i];
    JCALL4(SetLongArrayRegion, jenv, $input, (jsize)i, 1, &value);
  }
}
%typemap(freearg) (yirage_tensor **handles, size_t capacity) "free($1);";

/* Plugin paths: String[] in. */
%typemap(jni) (const char *const *paths, size_t n_paths) "jobjectArray"
%typemap(jtype) (const char *const *paths, size_t n_paths) "String[]"
%typemap(jstype) (const char *const *paths, size_t n_paths) "String[]"
%typemap(javain) (const char *const *paths, size_t n_paths) "$javainput"
%typemap(in) (const char *const *paths, size_t n_paths) {
  size_t i;
  char **copies;
  $2 = $input ? (size_t)JCALL1(GetArrayLength, jenv, $input) : 0;
  copies = (char **)calloc($2 ? $2 : 1, sizeof(char *));
  for (i = 0; i < $2; ++i) {
    jstring s = (jstring)JCALL2(GetObjectArrayElement, jenv, $input, (jsize)i);
    const char *utf = s ? JCALL2(GetStringUTFChars, jenv, s, 0) : NULL;
    copies[i] = utf ? (char *)malloc(strlen(utf) + 1) : NULL; /* no strdup in strict C11 */
    if (copies[i]) strcpy(copies[i], utf);
    if (utf) JCALL2(ReleaseStringUTFChars, jenv, s, utf);
    if (s) JCALL1(DeleteLocalRef, jenv, s);
    if (copies[i] == NULL) {
      size_t j;
      for (j = 0; j < i; ++j) free(copies[j]);
      free(copies);
      SWIG_JavaThrowException(jenv, SWIG_JavaNullPointerException, "null plugin path");
      return $null;
    }
  }
  $1 = ($1_ltype)copies;
}
%typemap(freearg) (const char *const *paths, size_t n_paths) {
  size_t i;
  for (i = 0; i < $2; ++i) free((char *)$1[i]);
  free((char **)$1);
}

/* ---- Host tensors: org.yirage.HostTensor[] as DLTensor arrays ------------------------------- */
%{
/* Reads each HostTensor's fields (data: a direct ByteBuffer at position 0; dtypeCode; shape)
 * into DLTensors. The shapes are copied; the ByteBuffers' memory stays where it is. Returns 0
 * with a pending Java exception on failure. */
static int yirage_java_dltensors(JNIEnv *jenv, jobjectArray array, DLTensor **out_tensors,
                                 size_t *out_count) {
  jclass cls = (*jenv)->FindClass(jenv, "org/yirage/HostTensor");
  jfieldID data_id, dtype_id, shape_id;
  jsize n, i;
  DLTensor *tensors;
  *out_tensors = NULL;
  *out_count = 0;
  if (cls == NULL) return 0;
  data_id = (*jenv)->GetFieldID(jenv, cls, "data", "Ljava/nio/ByteBuffer;");
  dtype_id = (*jenv)->GetFieldID(jenv, cls, "dtypeCode", "I");
  shape_id = (*jenv)->GetFieldID(jenv, cls, "shape", "[J");
  if (!data_id || !dtype_id || !shape_id) return 0;
  if (array == NULL) {
    SWIG_JavaThrowException(jenv, SWIG_JavaNullPointerException, "null HostTensor[]");
    return 0;
  }
  n = (*jenv)->GetArrayLength(jenv, array);
  tensors = (DLTensor *)calloc(n ? (size_t)n : 1, sizeof(DLTensor));
  for (i = 0; i < n; ++i) {
    jobject t = (*jenv)->GetObjectArrayElement(jenv, array, i);
    jobject data = t ? (*jenv)->GetObjectField(jenv, t, data_id) : NULL;
    jlongArray shape = t ? (jlongArray)(*jenv)->GetObjectField(jenv, t, shape_id) : NULL;
    int code = t ? (int)(*jenv)->GetIntField(jenv, t, dtype_id) : 0;
    jsize rank = shape ? (*jenv)->GetArrayLength(jenv, shape) : 0;
    DLTensor *d = &tensors[i];
    if (t == NULL || data == NULL || shape == NULL) {
      SWIG_JavaThrowException(jenv, SWIG_JavaNullPointerException, "null HostTensor");
      goto fail;
    }
    d->data = (*jenv)->GetDirectBufferAddress(jenv, data);
    d->device.device_type = kDLCPU;
    d->ndim = (int32_t)rank;
    d->dtype.bits = code == YIRAGE_FLOAT32 ? 32 : 16;
    d->dtype.code = code == YIRAGE_BFLOAT16 ? kDLBfloat : kDLFloat;
    d->dtype.lanes = 1;
    d->shape = (int64_t *)calloc(rank ? (size_t)rank : 1, sizeof(int64_t));
    (*jenv)->GetLongArrayRegion(jenv, shape, 0, rank, (jlong *)d->shape);
    (*jenv)->DeleteLocalRef(jenv, t);
    (*jenv)->DeleteLocalRef(jenv, data);
    (*jenv)->DeleteLocalRef(jenv, shape);
  }
  *out_tensors = tensors;
  *out_count = (size_t)n;
  return 1;
fail:
  for (i = 0; i < n; ++i) free(tensors[i].shape);
  free(tensors);
  return 0;
}

static void yirage_java_free_dltensors(DLTensor *tensors, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) free(tensors[i].shape);
  free(tensors);
}
%}
%define %yirage_host_tensors(CTYPE, N)
%typemap(jni) (CTYPE, size_t N) "jobjectArray"
%typemap(jtype) (CTYPE, size_t N) "org.yirage.HostTensor[]"
%typemap(jstype) (CTYPE, size_t N) "org.yirage.HostTensor[]"
%typemap(javain) (CTYPE, size_t N) "$javainput"
%typemap(in) (CTYPE, size_t N) (DLTensor *tensors = NULL, DLTensor **pointers = NULL) {
  size_t i;
  if (!yirage_java_dltensors(jenv, $input, &tensors, &$2)) return $null;
  pointers = (DLTensor **)calloc($2 ? $2 : 1, sizeof(DLTensor *));
  for (i = 0; i < $2; ++i) pointers[i] = &tensors[i];
  $1 = ($1_ltype)pointers;
}
%typemap(freearg) (CTYPE, size_t N) {
  yirage_java_free_dltensors(tensors$argnum, $2);
  free(pointers$argnum);
}
%enddef
%yirage_host_tensors(const DLTensor *const *inputs, n_inputs)
%yirage_host_tensors(DLTensor *const *outputs, n_outputs)

/* ---- Structs -------------------------------------------------------------------------------- */
/* Each proxy's constructor fills the defaults (the _init function where there is one) and
 * struct_size; text fields are read-only Strings. */
%define %yirage_struct(TYPE, INIT)
%extend TYPE {
  TYPE() {
    TYPE *s = (TYPE *)calloc(1, sizeof(TYPE));
    INIT;
    s->struct_size = sizeof(TYPE);
    return s;
  }
  ~TYPE() { free($self); }
}
%ignore TYPE::struct_size;
%enddef
%yirage_struct(yirage_equivalence_options, yirage_equivalence_options_init(s))
%yirage_struct(yirage_equivalence_result, (void)0)
%yirage_struct(yirage_target_properties, (void)0)
%yirage_struct(yirage_backend_info, (void)0)
%yirage_struct(yirage_device_info, s->target.struct_size = sizeof(s->target))
%yirage_struct(yirage_compile_options, yirage_compile_options_init(s))
%yirage_struct(yirage_measure_options, yirage_measure_options_init(s))
%yirage_struct(yirage_measurement, (void)0)
%yirage_struct(yirage_search_options, yirage_search_options_init(s))
%yirage_struct(yirage_search_candidate_info, (void)0)
%yirage_struct(yirage_search_stats, (void)0)
%yirage_struct(yirage_search_profile_record, (void)0)
%yirage_struct(yirage_block_graph_options, yirage_block_graph_options_init(s))
%immutable yirage_equivalence_result::reason;
%immutable yirage_target_properties::name;
%immutable yirage_backend_info::name;
%immutable yirage_backend_info::version;
%immutable yirage_backend_info::path;
%immutable yirage_backend_info::unavailable_reason;
%immutable yirage_device_info::backend;
%immutable yirage_device_info::name;
%immutable yirage_measurement::error;
%immutable yirage_search_candidate_info::description;
%immutable yirage_search_candidate_info::not_measured;
%immutable yirage_search_profile_record::description;
%immutable yirage_search_profile_record::error;

/* Fields whose memory a Java caller cannot own across the call: set through the helpers below,
 * or not offered (the progress callback, the cancel flag, the candidate lists). */
%ignore yirage_search_options::progress;
%ignore yirage_search_options::progress_user_data;
%ignore yirage_search_options::cancel;
%ignore yirage_search_options::cache_dir;
%ignore yirage_search_options::grid_candidates;
%ignore yirage_search_options::num_grid_candidates;
%ignore yirage_search_options::forloop_candidates;
%ignore yirage_search_options::num_forloop_candidates;
%ignore yirage_search_progress;
%ignore yirage_search_progress_fn;
%ignore yirage_context_options;
%ignore yirage_context_options_init;
%ignore yirage_context_create;
%ignore yirage_equivalence_options_init;
%ignore yirage_compile_options_init;
%ignore yirage_measure_options_init;
%ignore yirage_search_options_init;
%ignore yirage_block_graph_options_init;
%ignore yirage_blob_data;
%ignore yirage_buffer_write;
%ignore yirage_buffer_read;
%ignore yirage_buffer_to_dlpack;
%ignore yirage_graph_split;
%ignore yirage_graph_chunk;
%ignore yirage_graph_customized;
%ignore yirage_superoptimize;
/* Searches in shards (ABI 1.10) are not in the Java API yet: run_units' unit array and the
 * plan id's char[33] have no mapping here, and org.yirage has no class over them. */
%ignore yirage_search_plan_create;
%ignore yirage_search_plan_release;
%ignore yirage_search_plan_num_units;
%ignore yirage_search_plan_id;
%ignore yirage_search_plan_run_units;
%ignore yirage_search_plan_add_partial;
%ignore yirage_search_plan_unit_done;
%ignore yirage_search_plan_merge;

/* ---- Helpers for what does not map one to one ------------------------------------------------ */
%inline %{
/* Copies up to `capacity` bytes of a blob; returns how many. */
size_t yirage_java_blob_copy(const yirage_blob *blob, void *out_bytes, size_t capacity) {
  size_t n = yirage_blob_size(blob);
  if (n > capacity) n = capacity;
  if (n) memcpy(out_bytes, yirage_blob_data(blob), n);
  return n;
}

/* split / chunk / customized into a long[] whose length must be the number of parts. */
yirage_status yirage_java_split(yirage_graph *graph, yirage_tensor *x, int32_t dim,
                                size_t n_parts, const int64_t *sizes, yirage_tensor **handles,
                                size_t capacity) {
  if (capacity != n_parts) return YIRAGE_ERROR_INVALID_ARGUMENT;
  return yirage_graph_split(graph, x, dim, n_parts, sizes, handles);
}

yirage_status yirage_java_chunk(yirage_graph *graph, yirage_tensor *x, size_t n_chunks,
                                int32_t dim, yirage_tensor **handles, size_t capacity) {
  if (capacity != n_chunks) return YIRAGE_ERROR_INVALID_ARGUMENT;
  return yirage_graph_chunk(graph, x, n_chunks, dim, handles);
}

yirage_status yirage_java_customized(yirage_graph *graph, const yirage_block_graph *block_graph,
                                     yirage_tensor **handles, size_t capacity) {
  size_t n = 0;
  yirage_status status = yirage_block_graph_num_outputs(block_graph, &n);
  if (status != YIRAGE_OK) return status;
  if (capacity != n) return YIRAGE_ERROR_INVALID_ARGUMENT;
  return yirage_graph_customized(graph, block_graph, handles);
}

yirage_status yirage_java_context_create(const char *const *paths, size_t n_paths,
                                         int32_t search_default_paths, const char *cache_dir,
                                         yirage_context **out_context) {
  yirage_context_options options;
  yirage_context_options_init(&options);
  options.plugin_paths = paths;
  options.num_plugin_paths = n_paths;
  options.search_default_paths = search_default_paths;
  options.cache_dir = cache_dir;
  return yirage_context_create(&options, out_context);
}

/* yirage_superoptimize with a cache folder that lives for the call (NULL: none). */
yirage_status yirage_java_superoptimize(const yirage_graph *graph, yirage_search_options *options,
                                        const char *cache_dir,
                                        yirage_search_result **out_result) {
  yirage_status status;
  options->cache_dir = cache_dir;
  status = yirage_superoptimize(graph, options, out_result);
  options->cache_dir = NULL;
  return status;
}
%}

%include "yirage.h"
