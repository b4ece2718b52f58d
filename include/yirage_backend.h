/*
 * yirage_backend.h — the plugin ABI that yirage backends implement (ARCHITECTURE.md §6,
 * docs/plugin-guide.md).
 *
 * Copyright 2026 the yirage developers. Licensed under the Apache License, Version 2.0.
 *
 * A backend is a shared library libyirage-backend-<name>.so exporting one C symbol,
 * YIRAGE_BACKEND_ENTRY_SYMBOL, of type yirage_backend_entry_fn. The loader calls it with the
 * ABI version it speaks and gets back a static, immutable function table. What crosses the ABI
 * is one kernel program at a time: a flatbuffers KernelProgram (schemas/yirage_kernel_program.fbs)
 * that the plugin compiles into an executable and launches on buffers it allocated or wrapped.
 *
 * Multi-operator programs (ABI 1.4): a program of schema version 2 holds several operators of a
 * kernel graph, in order, with the tensors the host passes (inputs it reads, outputs others
 * read); its other tensors are the plugin's to keep. The host offers them only to devices of
 * plugins of minor 4 or newer that set YIRAGE_BACKEND_DEVICE_OPERATOR_GROUPS, asking supports()
 * first: a plugin runs the ones it can as one (CUDA: a loop split over blocks and the sum of its
 * parts, in one launch) and refuses the rest with YIRAGE_ERROR_UNSUPPORTED, and the host then
 * gives it one operator a program. Programs of one operator keep schema version 1, so plugins of
 * every minor read them.
 *
 * Rules:
 *  - C99. Every struct begins with size_t struct_size, always set by the host, never written by
 *    the plugin. Structs are append-only within a major version, so the smallest valid
 *    struct_size of each struct is its size in ABI 1.0; a smaller one is refused with
 *    YIRAGE_ERROR_INVALID_ARGUMENT (for the error channel itself: it is left unwritten).
 *    A plugin reads only the first min(struct_size, its own sizeof) bytes of an input struct
 *    (fields it does not know are ignored) and writes only that many bytes of an output struct
 *    (bytes beyond stay as the host left them). Nested structs carry their own struct_size.
 *  - The table is append-only too: a host uses only the entries within the table's struct_size
 *    and the plugin's minor, and every entry of the plugin's minor must be non-NULL except those
 *    marked optional.
 *  - create refuses a host whose abi_major differs from the plugin's with
 *    YIRAGE_ERROR_VERSION_MISMATCH; a newer host minor is fine.
 *  - Versions: a plugin may be loaded when its major equals YIRAGE_BACKEND_ABI_MAJOR and its
 *    minor is at least YIRAGE_BACKEND_ABI_MINOR_REQUIRED. Anything else is refused with
 *    YIRAGE_ERROR_VERSION_MISMATCH: an older major, a newer major, or a minor too old.
 *  - Every fallible entry returns yirage_status. On failure it fills *error (never NULL) with the
 *    status, the native error code (CUresult, cl_int, errno…; 0 if none) and a message, and leaves
 *    every out-parameter untouched. A plugin never throws across the ABI and never exits.
 *  - A plugin whose driver or hardware is missing must still load: create succeeds, the device
 *    count is zero and unavailable_reason says why.
 *  - Release/destroy entries accept NULL.
 *  - Thread safety: an instance may be used from several threads at once, except that one
 *    buffer or executable must not be released while another thread uses it.
 */
#ifndef YIRAGE_BACKEND_H_
#define YIRAGE_BACKEND_H_

#include <stddef.h>
#include <stdint.h>

#include "yirage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* This header's ABI version. The minor grows when entries or fields are appended. */
#define YIRAGE_BACKEND_ABI_MAJOR 1
#define YIRAGE_BACKEND_ABI_MINOR 7
/* The oldest minor this host accepts. */
#define YIRAGE_BACKEND_ABI_MINOR_REQUIRED 0

/* The one symbol a plugin exports. */
#define YIRAGE_BACKEND_ENTRY_SYMBOL "yirage_backend_entry"

#if defined(__GNUC__) || defined(__clang__)
#define YIRAGE_BACKEND_EXPORT __attribute__((visibility("default")))
#else
#define YIRAGE_BACKEND_EXPORT
#endif

/* Opaque objects owned by the plugin. */
typedef struct yirage_backend_instance_s yirage_backend_instance;
typedef struct yirage_backend_buffer_s yirage_backend_buffer;
typedef struct yirage_backend_executable_s yirage_backend_executable;
typedef struct yirage_backend_timer_s yirage_backend_timer;
typedef struct yirage_backend_recording_s yirage_backend_recording;

/* The error channel. `message` holds the build log when compile fails. */
typedef struct yirage_backend_error {
  size_t struct_size;   /* set by the host */
  yirage_status status; /* the status the entry returned */
  int64_t native_code;  /* the driver's or system's own code; 0 if none */
  char message[4096];   /* NUL-terminated, may be truncated */
} yirage_backend_error;

/* Log levels for the host's log callback. */
typedef enum yirage_backend_log_level {
  YIRAGE_BACKEND_LOG_DEBUG = 0,
  YIRAGE_BACKEND_LOG_INFO = 1,
  YIRAGE_BACKEND_LOG_WARNING = 2,
  YIRAGE_BACKEND_LOG_MAX_ENUM = 0x7fffffff
} yirage_backend_log_level;

/* What the host gives a plugin instance. */
typedef struct yirage_backend_host {
  size_t struct_size;    /* sizeof(yirage_backend_host) of the host */
  uint32_t abi_major;    /* the host's YIRAGE_BACKEND_ABI_MAJOR */
  uint32_t abi_minor;    /* the host's YIRAGE_BACKEND_ABI_MINOR */
  const char *cache_dir; /* where the plugin may keep compiled code; NULL: its default */
  /* May be NULL. Called from any thread. */
  void (*log)(void *user_data, yirage_backend_log_level level, const char *message);
  void *log_user_data;
} yirage_backend_host;

/* Bits of yirage_backend_device_info.flags. */
/* supports() may take programs of several operators (ABI 1.4): the host offers them only then. */
#define YIRAGE_BACKEND_DEVICE_OPERATOR_GROUPS 0x1u

/* A device as a plugin reports it. `target` feeds the search and the cost model. */
typedef struct yirage_backend_device_info {
  size_t struct_size;              /* set by the host */
  char name[128];                  /* e.g. "AMD EPYC 7B13 (16 threads)" */
  yirage_target_properties target; /* target.struct_size is set by the host */
  uint32_t dtypes;                 /* bit (1 << yirage_dtype) per supported dtype */
  int32_t dlpack_device_type;      /* DLDeviceType of its memory (kDLCPU, kDLCUDA, …) */
  int32_t dlpack_device_id;
  uint32_t flags; /* ABI 1.4: YIRAGE_BACKEND_DEVICE_* bits; the host zeroes it for older plugins */
} yirage_backend_device_info;

/* Options of compile; NULL means the defaults. A value out of range is refused with
 * YIRAGE_ERROR_INVALID_ARGUMENT, never clamped. */
typedef struct yirage_backend_compile_options {
  size_t struct_size;
  int32_t optimization_level; /* 0..3 (default 3) */
} yirage_backend_compile_options;

/* The backend's word on how it would run a kernel program (estimate, ABI 1.1), for the search's
 * cost model, which ranks candidates before any is built. The host sets every field to "no
 * opinion" before the call; the plugin writes what it knows. */
typedef struct yirage_backend_kernel_estimate {
  size_t struct_size;
  /* How many times each block of a customized operator waits for its tiles over its for-loop:
   * the loop's range where every iteration loads, waits, then computes; fewer where the code keeps
   * later iterations' loads in flight while earlier ones compute (1: all of them at once). The
   * cost model charges each wait the target's loop_iteration_seconds. -1: no opinion (the host
   * then counts the range, or 1 for a loop that only adds up its input tiles). From 1 to the
   * range; since ABI 1.5, to a host whose minor is 5 or more, up to the range plus
   * YIRAGE_BACKEND_MAX_READ_ONCE_WAITS: the waits for tiles a block reads once, before its loop,
   * where they take several (more than the registers hold in flight). */
  int64_t loop_waits;
  /* ABI 1.6. Seconds one block of a customized operator spends moving tiles through its compute
   * unit's shared memory over the whole kernel with the backend's code (code that keeps each
   * operator's result there, as a generic path does), beyond the device-memory and arithmetic
   * time the host's model counts. The blocks a compute unit takes share its shared memory: the
   * model charges ceil(blocks / compute units) times this. From 0 to 1; -1: no opinion (none
   * charged). Written only where the host's struct_size holds it. */
  double shared_memory_seconds;
  /* ABI 1.6. Seconds the kernel's launch adds where it follows another customized kernel of the
   * graph, where the backend overlaps its launch with that kernel's run (the CUDA plugin's
   * programmatic dependent launch); the model charges this instead of the target's
   * launch_overhead_seconds there. From 0 to 1; -1: no opinion. Written only where the host's
   * struct_size holds it. */
  double dependent_launch_seconds;
  /* ABI 1.6. The most blocks of a customized operator one compute unit holds at once, where the
   * backend knows a tighter limit than the target's figures give (its code's registers: the CUDA
   * plugin's attention in registers takes about a register file a block); the model counts its
   * waves with it. From 1; -1: no opinion. Written only where the host's struct_size holds it. */
  int64_t max_resident_blocks;
  /* ABI 1.7. 1 where the backend runs the customized operator as one matrix product of its whole
   * input tensors (a library or tiled GEMM: the µGraph's grid, loop and tiles are not kept), with
   * the µGraph's elementwise operators applied to each result; the model then prices it as a
   * kernel-level matmul of those tensors that also reads its other inputs once. 0: it runs by
   * its µGraph; -1: no opinion (as 0). Written only where the host's struct_size holds it. */
  int64_t whole_product;
} yirage_backend_kernel_estimate;
#define YIRAGE_BACKEND_MAX_READ_ONCE_WAITS 1024

typedef struct yirage_backend_api {
  size_t struct_size;  /* sizeof(yirage_backend_api) of the plugin */
  uint32_t abi_major;  /* the plugin's YIRAGE_BACKEND_ABI_MAJOR */
  uint32_t abi_minor;  /* the plugin's YIRAGE_BACKEND_ABI_MINOR */
  const char *name;    /* short lowercase name, e.g. "cpu"; static storage */
  const char *version; /* the plugin's own version; static storage */

  /* Instances. `host` is only read during the call (the strings are copied). */
  yirage_status (*create)(const yirage_backend_host *host, yirage_backend_instance **out_instance,
                          yirage_backend_error *error);
  void (*destroy)(yirage_backend_instance *instance);

  /* Devices. A zero count comes with unavailable_reason (static or instance-owned storage). */
  yirage_status (*device_count)(yirage_backend_instance *instance, int32_t *out_count, yirage_backend_error *error);
  const char *(*unavailable_reason)(yirage_backend_instance *instance);
  yirage_status (*device_info)(yirage_backend_instance *instance, int32_t device, yirage_backend_device_info *out_info,
                               yirage_backend_error *error);

  /* Buffers in device memory. Zero bytes is valid. Offsets and sizes are in bytes. */
  yirage_status (*buffer_alloc)(yirage_backend_instance *instance, int32_t device, size_t bytes,
                                yirage_backend_buffer **out_buffer, yirage_backend_error *error);
  /* Wraps memory the caller owns (a DLPack data pointer of this device); never freed by the
   * plugin; the caller keeps it alive until the buffer is released. */
  yirage_status (*buffer_wrap)(yirage_backend_instance *instance, int32_t device, void *native, size_t bytes,
                               yirage_backend_buffer **out_buffer, yirage_backend_error *error);
  void (*buffer_release)(yirage_backend_buffer *buffer);
  yirage_status (*buffer_write)(yirage_backend_buffer *buffer, size_t offset, const void *source, size_t bytes,
                                yirage_backend_error *error);
  yirage_status (*buffer_read)(yirage_backend_buffer *buffer, size_t offset, void *destination, size_t bytes,
                               yirage_backend_error *error);

  /* Kernels. supports() returns YIRAGE_OK or YIRAGE_ERROR_UNSUPPORTED (with the reason). */
  yirage_status (*supports)(yirage_backend_instance *instance, int32_t device, const void *program, size_t program_size,
                            yirage_backend_error *error);
  /* Compiles a KernelProgram. On failure, error->message holds the reason and build log. */
  yirage_status (*compile)(yirage_backend_instance *instance, int32_t device, const void *program, size_t program_size,
                           const yirage_backend_compile_options *options, yirage_backend_executable **out_executable,
                           yirage_backend_error *error);
  void (*executable_release)(yirage_backend_executable *executable);
  /* Enqueues one run on `stream` (a native stream; NULL: the device's default). Buffers are the
   * program's inputs and outputs in order, each at least as large as its tensor. */
  yirage_status (*launch)(yirage_backend_executable *executable, void *stream, yirage_backend_buffer *const *inputs,
                          size_t num_inputs, yirage_backend_buffer *const *outputs, size_t num_outputs,
                          yirage_backend_error *error);
  /* Waits for everything enqueued on `stream`. */
  yirage_status (*synchronize)(yirage_backend_instance *instance, int32_t device, void *stream,
                               yirage_backend_error *error);

  /* Device timers for profiling: record marks a point in `stream`; elapsed is the device time
   * between two recorded timers, in seconds, once both have completed. */
  yirage_status (*timer_create)(yirage_backend_instance *instance, int32_t device, yirage_backend_timer **out_timer,
                                yirage_backend_error *error);
  void (*timer_release)(yirage_backend_timer *timer);
  yirage_status (*timer_record)(yirage_backend_timer *timer, void *stream, yirage_backend_error *error);
  yirage_status (*timer_elapsed)(yirage_backend_timer *start, yirage_backend_timer *stop, double *out_seconds,
                                 yirage_backend_error *error);

  /* ABI 1.1. Optional (NULL: the host uses its own cost model alone). Fills *out_estimate for
   * a program supports() accepts; YIRAGE_ERROR_UNSUPPORTED where supports() would refuse it.
   * Called while the search enumerates, for each candidate kernel, from several threads at once:
   * it should cost no more than supports(). */
  yirage_status (*estimate)(yirage_backend_instance *instance, int32_t device, const void *program, size_t program_size,
                            yirage_backend_kernel_estimate *out_estimate, yirage_backend_error *error);

  /* ABI 1.2. Optional (NULL: the host cannot hand this backend's buffers out as DLPack
   * tensors). The value a DLPack tensor of this device holds in its data field for the buffer's
   * first byte (a host pointer, a CUdeviceptr, …); valid until the buffer is released. */
  yirage_status (*buffer_native)(yirage_backend_buffer *buffer, void **out_native, yirage_backend_error *error);

  /* ABI 1.3. Optional, all four or none (NULL: the host launches a graph's kernels one by one
   * on every run). A recording holds launches, made once, that it replays in one submission
   * (CUDA: a CUDA graph), for graphs of several kernels run again and again on the same buffers.
   * recording_begin gives the stream to launch on until recording_end; launches there are
   * recorded, not run, and take the memory that launches on `stream` take (workspaces). The
   * recording replays only on `stream`, and holds the addresses of the buffers it was recorded
   * with: the host replays it only while those are the run's buffers. Nothing else may be
   * enqueued on the recording stream. YIRAGE_ERROR_UNSUPPORTED from recording_begin: this device
   * or driver cannot record; recording_end fails with the reason where a launch could not be
   * recorded (the host then runs without one). */
  yirage_status (*recording_begin)(yirage_backend_instance *instance, int32_t device, void *stream,
                                   void **out_recording_stream, yirage_backend_error *error);
  yirage_status (*recording_end)(yirage_backend_instance *instance, int32_t device, void *recording_stream,
                                 yirage_backend_recording **out_recording, yirage_backend_error *error);
  yirage_status (*recording_replay)(yirage_backend_recording *recording, yirage_backend_error *error);
  void (*recording_release)(yirage_backend_recording *recording);
} yirage_backend_api;

/* The entry symbol's type: returns the plugin's table (static storage), whatever the host's
 * version; the host decides whether it can use it. NULL means the plugin cannot serve this host
 * at all. */
typedef const yirage_backend_api *(*yirage_backend_entry_fn)(uint32_t host_abi_major, uint32_t host_abi_minor);

#ifdef __cplusplus
}
#endif

#endif /* YIRAGE_BACKEND_H_ */
