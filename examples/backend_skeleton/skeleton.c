/*
 * libyirage-backend-skeleton.so — the starting point of a yirage backend plugin.
 *
 * It is complete and conforming: it loads, negotiates the ABI, and reports zero devices with a
 * reason, exactly what a real plugin does on a machine without its driver or hardware. Every entry
 * says in a comment what a real backend does there. Copy this folder, rename "skeleton", and fill
 * in the entries one group at a time, running the conformance suite after each
 * (docs/plugin-guide.md):
 *
 *     yirage-conformance --plugin ./build/libyirage-backend-myaccel.so
 *
 * Rules every entry follows (include/yirage_backend.h has the full list):
 *   - never throw, never exit, never print: report through the error channel;
 *   - on failure, fill *error and leave every out-parameter untouched;
 *   - release entries accept NULL;
 *   - an instance is used from several threads at once: guard shared state.
 *
 * Copyright 2026 the yirage developers. Licensed under the Apache License, Version 2.0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yirage_backend.h"

#define PLUGIN_NAME "skeleton"

/* Per-instance state: the driver's handles, loaded libraries, the device list, the kernel cache
 * folder. A real plugin opens its driver here with dlopen (never link -lcuda and friends: the
 * plugin must load on machines without the driver) and records why it could not. */
struct yirage_backend_instance_s {
  char cache_dir[1024]; /* where compiled kernels go; "" when the host gave none */
  const char *reason;   /* why there are no devices */
};

/* ---- the error channel ---- */

/* Fills the host's error struct. A struct_size smaller than ABI 1.0's means the host cannot take
 * the message: write nothing, the status still says what happened. */
static yirage_status fail(yirage_backend_error *error, yirage_status status, int64_t native, const char *message) {
  if (error != NULL && error->struct_size >= sizeof *error) {
    error->status = status;
    error->native_code = native; /* the driver's own code (CUresult, cl_int, errno…), or 0 */
    snprintf(error->message, sizeof error->message, "%s: %s", PLUGIN_NAME, message);
  }
  return status;
}

static yirage_status no_device(const yirage_backend_instance *instance, int32_t device, yirage_backend_error *error) {
  char message[512];
  snprintf(message, sizeof message, "no device %d: %s", (int)device,
           instance != NULL ? instance->reason : "no instance");
  return fail(error, YIRAGE_ERROR_NOT_FOUND, 0, message);
}

/* ---- instances ---- */

/* Checks the host's struct, copies what it needs from it (the host's strings are only valid
 * during the call) and opens the driver. A missing driver is NOT an error: create succeeds and
 * the device count is zero. */
static yirage_status skeleton_create(const yirage_backend_host *host, yirage_backend_instance **out_instance,
                                     yirage_backend_error *error) {
  if (host == NULL || out_instance == NULL) {
    return fail(error, YIRAGE_ERROR_INVALID_ARGUMENT, 0, "create: host or out_instance is NULL");
  }
  if (host->struct_size < sizeof *host) {
    return fail(error, YIRAGE_ERROR_INVALID_ARGUMENT, 0, "create: host->struct_size is smaller than ABI 1.0's");
  }
  if (host->abi_major != YIRAGE_BACKEND_ABI_MAJOR) {
    return fail(error, YIRAGE_ERROR_VERSION_MISMATCH, 0,
                "create: the host speaks another major version of the plugin ABI");
  }
  yirage_backend_instance *instance = calloc(1, sizeof *instance);
  if (instance == NULL) return fail(error, YIRAGE_ERROR_OUT_OF_MEMORY, 0, "create: out of memory");
  if (host->cache_dir != NULL) {
    snprintf(instance->cache_dir, sizeof instance->cache_dir, "%s/%s", host->cache_dir, PLUGIN_NAME);
  }
  /* A real plugin: handle = dlopen("libmydriver.so.1", RTLD_NOW | RTLD_LOCAL); on failure keep
   * dlerror()'s text as the reason; then initialize the driver and enumerate its devices. */
  instance->reason = "the skeleton plugin drives no hardware (copy it and fill in the entries)";
  *out_instance = instance;
  return YIRAGE_OK;
}

/* Frees everything the instance owns. The host has released every buffer, executable and timer
 * of the instance before. */
static void skeleton_destroy(yirage_backend_instance *instance) {
  free(instance);
}

/* ---- devices ---- */

static yirage_status skeleton_device_count(yirage_backend_instance *instance, int32_t *out_count,
                                           yirage_backend_error *error) {
  if (instance == NULL || out_count == NULL) {
    return fail(error, YIRAGE_ERROR_INVALID_ARGUMENT, 0, "device_count: NULL argument");
  }
  *out_count = 0; /* a real plugin: the devices its driver reports */
  return YIRAGE_OK;
}

/* Why there are no devices ("cuda: no driver: libcuda.so.1: cannot open shared object file"). */
static const char *skeleton_unavailable_reason(yirage_backend_instance *instance) {
  return instance != NULL ? instance->reason : "no instance";
}

/* Fills the device's name, its yirage_target_properties (read from the device wherever the
 * driver can tell: compute units, shared memory, registers, memory size; bandwidth and FLOP/s
 * from a documented table or measured once), the dtypes it runs and its DLPack device. Write
 * only sizeof(yirage_backend_device_info) bytes and keep the host's struct_size fields. */
static yirage_status skeleton_device_info(yirage_backend_instance *instance, int32_t device,
                                          yirage_backend_device_info *out_info, yirage_backend_error *error) {
  (void)out_info;
  return no_device(instance, device, error);
}

/* ---- buffers ---- */

/* Allocates device memory (zero bytes is valid and gives a buffer). Too much is
 * YIRAGE_ERROR_OUT_OF_MEMORY with the driver's code, never a crash. */
static yirage_status skeleton_buffer_alloc(yirage_backend_instance *instance, int32_t device, size_t bytes,
                                           yirage_backend_buffer **out_buffer, yirage_backend_error *error) {
  (void)bytes, (void)out_buffer;
  return no_device(instance, device, error);
}

/* Wraps memory the caller owns (a DLPack data pointer of this device) without copying. */
static yirage_status skeleton_buffer_wrap(yirage_backend_instance *instance, int32_t device, void *native, size_t bytes,
                                          yirage_backend_buffer **out_buffer, yirage_backend_error *error) {
  (void)native, (void)bytes, (void)out_buffer;
  return no_device(instance, device, error);
}

/* Frees an allocated buffer (a wrapped one's memory belongs to the caller). NULL is a no-op. */
static void skeleton_buffer_release(yirage_backend_buffer *buffer) {
  (void)buffer;
}

/* Copies host memory into [offset, offset + bytes) of the buffer, and back. A range outside the
 * buffer is YIRAGE_ERROR_INVALID_ARGUMENT. Both complete before they return. */
static yirage_status skeleton_buffer_write(yirage_backend_buffer *buffer, size_t offset, const void *source,
                                           size_t bytes, yirage_backend_error *error) {
  (void)buffer, (void)offset, (void)source, (void)bytes;
  return fail(error, YIRAGE_ERROR_INVALID_ARGUMENT, 0, "buffer_write: no buffer can exist");
}

static yirage_status skeleton_buffer_read(yirage_backend_buffer *buffer, size_t offset, void *destination, size_t bytes,
                                          yirage_backend_error *error) {
  (void)buffer, (void)offset, (void)destination, (void)bytes;
  return fail(error, YIRAGE_ERROR_INVALID_ARGUMENT, 0, "buffer_read: no buffer can exist");
}

/* ---- kernels ---- */

/* Says whether compile would accept the program: parse it (schemas/yirage_kernel_program.fbs;
 * run the flatbuffers verifier first: the bytes are untrusted), then answer YIRAGE_OK or
 * YIRAGE_ERROR_UNSUPPORTED with the reason ("no bfloat16 on this device"). The search uses it to
 * skip what the device cannot run. */
static yirage_status skeleton_supports(yirage_backend_instance *instance, int32_t device, const void *program,
                                       size_t program_size, yirage_backend_error *error) {
  (void)program, (void)program_size;
  return no_device(instance, device, error);
}

/* Generates code for the program's one operator (a pre-defined op, or a customized op with its
 * thread-block graph), compiles it, caches the binary under the instance's cache folder keyed by
 * a hash of source, compiler version and options, and loads it. A malformed program is
 * YIRAGE_ERROR_CORRUPT_DATA; a failed build is YIRAGE_ERROR_BACKEND with the build log in the
 * message. options may be NULL (defaults); out-of-range values are refused. */
static yirage_status skeleton_compile(yirage_backend_instance *instance, int32_t device, const void *program,
                                      size_t program_size, const yirage_backend_compile_options *options,
                                      yirage_backend_executable **out_executable, yirage_backend_error *error) {
  (void)program, (void)program_size, (void)options, (void)out_executable;
  return no_device(instance, device, error);
}

static void skeleton_executable_release(yirage_backend_executable *executable) {
  (void)executable;
}

/* Enqueues one run of the kernel on `stream` (NULL: the device's default). The buffers are the
 * program's inputs and outputs in order; a wrong count, a NULL or a buffer smaller than its
 * tensor is YIRAGE_ERROR_INVALID_ARGUMENT, checked before anything runs. A buffer may be larger
 * than its tensor: write nothing past the tensor, and never write inputs. */
static yirage_status skeleton_launch(yirage_backend_executable *executable, void *stream,
                                     yirage_backend_buffer *const *inputs, size_t num_inputs,
                                     yirage_backend_buffer *const *outputs, size_t num_outputs,
                                     yirage_backend_error *error) {
  (void)executable, (void)stream, (void)inputs, (void)num_inputs, (void)outputs, (void)num_outputs;
  return fail(error, YIRAGE_ERROR_INVALID_ARGUMENT, 0, "launch: no executable can exist");
}

/* Waits until everything enqueued on `stream` has finished. */
static yirage_status skeleton_synchronize(yirage_backend_instance *instance, int32_t device, void *stream,
                                          yirage_backend_error *error) {
  (void)stream;
  return no_device(instance, device, error);
}

/* ---- timers (events) ---- */

static yirage_status skeleton_timer_create(yirage_backend_instance *instance, int32_t device,
                                           yirage_backend_timer **out_timer, yirage_backend_error *error) {
  (void)out_timer;
  return no_device(instance, device, error);
}

static void skeleton_timer_release(yirage_backend_timer *timer) {
  (void)timer;
}

/* Marks the point in `stream` where the timer fires. */
static yirage_status skeleton_timer_record(yirage_backend_timer *timer, void *stream, yirage_backend_error *error) {
  (void)timer, (void)stream;
  return fail(error, YIRAGE_ERROR_INVALID_ARGUMENT, 0, "timer_record: no timer can exist");
}

/* Device seconds between two recorded timers, once both have fired (call synchronize first). */
static yirage_status skeleton_timer_elapsed(yirage_backend_timer *start, yirage_backend_timer *stop,
                                            double *out_seconds, yirage_backend_error *error) {
  (void)start, (void)stop, (void)out_seconds;
  return fail(error, YIRAGE_ERROR_INVALID_ARGUMENT, 0, "timer_elapsed: no timer can exist");
}

/* ---- the table ---- */

/* Static and immutable: the host keeps the pointer for the life of the process. Every entry of
 * the ABI version this plugin was built against must be set, except the optional ones. */
static const yirage_backend_api skeleton_api = {
    sizeof(yirage_backend_api),
    YIRAGE_BACKEND_ABI_MAJOR,
    YIRAGE_BACKEND_ABI_MINOR,
    PLUGIN_NAME,
    "0.1.0",
    skeleton_create,
    skeleton_destroy,
    skeleton_device_count,
    skeleton_unavailable_reason,
    skeleton_device_info,
    skeleton_buffer_alloc,
    skeleton_buffer_wrap,
    skeleton_buffer_release,
    skeleton_buffer_write,
    skeleton_buffer_read,
    skeleton_supports,
    skeleton_compile,
    skeleton_executable_release,
    skeleton_launch,
    skeleton_synchronize,
    skeleton_timer_create,
    skeleton_timer_release,
    skeleton_timer_record,
    skeleton_timer_elapsed,
    NULL, /* estimate (ABI 1.1, optional): the search's cost model then ranks candidates alone */
    NULL, /* buffer_native (ABI 1.2, optional): without it, yirage_buffer_to_dlpack is UNSUPPORTED */
    NULL, /* recording_begin (ABI 1.3, optional, all four or none): without them, the host launches */
    NULL, /* recording_end      a graph's kernels one by one on every run */
    NULL, /* recording_replay */
    NULL, /* recording_release */
};

/* The one exported symbol. Return the table whatever the host's version: the host decides
 * whether it can use it (same major, minor new enough). Return NULL only if this plugin cannot
 * serve that host at all. */
YIRAGE_BACKEND_EXPORT const yirage_backend_api *yirage_backend_entry(uint32_t host_abi_major, uint32_t host_abi_minor) {
  (void)host_abi_major, (void)host_abi_minor;
  return &skeleton_api;
}
