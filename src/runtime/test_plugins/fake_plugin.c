/* Plugins for the loader's tests, one per FAKE_VARIANT:
 *   FAKE_NO_DEVICE    a plugin whose "driver" is missing: zero devices, a reason; its create
 *                     ignores the host struct (the conformance runner test expects the suite
 *                     to fail it for that);
 *   FAKE_NEWER_MAJOR  claims ABI major 2;
 *   FAKE_OLDER_MAJOR  claims ABI major 0;
 *   FAKE_NO_ENTRY     exports no entry symbol;
 *   FAKE_CRASH        like NO_DEVICE, but destroy(NULL) dereferences NULL (the conformance
 *                     runner must survive it);
 *   FAKE_HANG         like NO_DEVICE, but unavailable_reason never returns;
 * plugins that take a host that loads them in-process down (each like NO_DEVICE otherwise):
 *   FAKE_CREATE_SEGV  create dereferences NULL;
 *   FAKE_COUNT_ABORT  device_count calls abort();
 *   FAKE_ENTRY_EXIT   the entry symbol calls exit(3);
 *   FAKE_CREATE_EXIT  create calls _exit(4), which runs no atexit handler;
 *   FAKE_CREATE_HANG  create never returns;
 * and plugins that report what the loader must not trust:
 *   FAKE_HUGE_COUNT     device_count reports 2·10^9 devices (device_info fails for each);
 *   FAKE_NEGATIVE_COUNT device_count reports -1;
 *   FAKE_LONG_REASON    unavailable_reason is 5000 bytes long;
 *   FAKE_BAD_NAME       the plugin's name is "Fake Device";
 *   FAKE_ONE_DEVICE     a plugin named "fakedevice" with one plausible device; the variants below
 *                       are it with one field wrong:
 *   FAKE_UNTERMINATED_NAME  the device name fills its 128 bytes without a NUL;
 *   FAKE_UNKNOWN_DTYPES     dtypes is 0xffffffff;
 *   FAKE_BAD_DLPACK         the DLPack device id is -1;
 *   FAKE_UNKNOWN_FLAGS      flags has a bit of no YIRAGE_BACKEND_DEVICE_* flag. */
#if defined(FAKE_UNTERMINATED_NAME) || defined(FAKE_UNKNOWN_DTYPES) || defined(FAKE_BAD_DLPACK) || \
    defined(FAKE_UNKNOWN_FLAGS)
#define FAKE_ONE_DEVICE
#endif

#define _POSIX_C_SOURCE 200809L /* pause() */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "yirage_backend.h"

#if !defined(FAKE_NO_ENTRY)

struct yirage_backend_instance_s {
  int unused;
};
static struct yirage_backend_instance_s the_instance;

static void fill(yirage_backend_error *error, yirage_status status, const char *message) {
  if (error == NULL || error->struct_size < sizeof *error) return;
  error->status = status;
  error->native_code = 0;
  strncpy(error->message, message, sizeof error->message - 1);
  error->message[sizeof error->message - 1] = '\0';
}

static yirage_status create(const yirage_backend_host *host, yirage_backend_instance **out,
                            yirage_backend_error *error) {
  (void)host;
  (void)error;
#if defined(FAKE_CREATE_SEGV)
  volatile int *volatile nowhere = NULL; /* volatile twice: the store is neither dropped nor a trap */
  *nowhere = 1;
#elif defined(FAKE_CREATE_EXIT)
  _exit(4);
#elif defined(FAKE_CREATE_HANG)
  for (;;) pause();
#endif
  *out = &the_instance;
  return YIRAGE_OK;
}
static void destroy(yirage_backend_instance *instance) {
#if defined(FAKE_CRASH)
  if (instance == NULL) *(volatile int *)instance = 1;
#endif
  (void)instance;
}
static yirage_status device_count(yirage_backend_instance *instance, int32_t *out, yirage_backend_error *error) {
  (void)instance;
  (void)error;
  (void)out;
#if defined(FAKE_COUNT_ABORT)
  abort();
#elif defined(FAKE_HUGE_COUNT)
  *out = 2000000000;
#elif defined(FAKE_NEGATIVE_COUNT)
  *out = -1;
#elif defined(FAKE_ONE_DEVICE)
  *out = 1;
#else
  *out = 0;
#endif
  return YIRAGE_OK;
}
#if defined(FAKE_LONG_REASON)
static char long_reason[5001];
#endif
static const char *unavailable_reason(yirage_backend_instance *instance) {
  (void)instance;
#if defined(FAKE_HANG)
  for (volatile int forever = 1; forever;) {
  }
#elif defined(FAKE_LONG_REASON)
  memset(long_reason, 'x', sizeof long_reason - 1);
  return long_reason;
#endif
  return "fake: no driver: libfake.so.1 is not installed";
}
static yirage_status no_device(yirage_backend_error *error) {
  fill(error, YIRAGE_ERROR_NOT_FOUND, "fake: no device");
  return YIRAGE_ERROR_NOT_FOUND;
}
#if defined(FAKE_ONE_DEVICE)
/* A small CPU, plausible enough for the loader's checks. */
static yirage_status device_info(yirage_backend_instance *i, int32_t d, yirage_backend_device_info *o,
                                 yirage_backend_error *e) {
  (void)i;
  if (d != 0) return no_device(e);
  yirage_target_properties *t = &o->target;
  strcpy(o->name, "fake device");
  strcpy(t->name, "fake");
  t->kind = YIRAGE_TARGET_CPU;
  t->compute_units = 4;
  t->max_threads_per_block = 1;
  t->max_blocks_per_compute_unit = 1;
  t->threads_per_compute_unit = 1;
  t->shared_memory_per_block = 1 << 20;
  t->shared_memory_per_compute_unit = 1 << 20;
  t->warp_width = 8;
  t->memory_bytes = (int64_t)1 << 30;
  t->memory_bandwidth = 1e10;
  t->l2_bytes = 1 << 20;
  t->l2_bandwidth = 1e11;
  t->peak_flops_float32 = 1e10;
  t->vector_flops_float32 = 1e10;
  t->launch_overhead_seconds = 1e-6;
  o->dtypes = 1u << YIRAGE_FLOAT32;
  o->dlpack_device_type = 1; /* kDLCPU */
  o->dlpack_device_id = 0;
#if defined(FAKE_UNTERMINATED_NAME)
  memset(o->name, 'n', sizeof o->name);
#elif defined(FAKE_UNKNOWN_DTYPES)
  o->dtypes = 0xffffffffu;
#elif defined(FAKE_BAD_DLPACK)
  o->dlpack_device_id = -1;
#elif defined(FAKE_UNKNOWN_FLAGS)
  o->flags = 0x80000000u;
#endif
  return YIRAGE_OK;
}
#else
static yirage_status device_info(yirage_backend_instance *i, int32_t d, yirage_backend_device_info *o,
                                 yirage_backend_error *e) {
  (void)i, (void)d, (void)o;
  return no_device(e);
}
#endif

/* Every entry below needs a device, and there is none. */
static yirage_status buffer_alloc(yirage_backend_instance *i, int32_t d, size_t n, yirage_backend_buffer **o,
                                  yirage_backend_error *e) {
  (void)i, (void)d, (void)n, (void)o;
  return no_device(e);
}
static yirage_status buffer_wrap(yirage_backend_instance *i, int32_t d, void *p, size_t n, yirage_backend_buffer **o,
                                 yirage_backend_error *e) {
  (void)i, (void)d, (void)p, (void)n, (void)o;
  return no_device(e);
}
static void release_buffer(yirage_backend_buffer *b) {
  (void)b;
}
static yirage_status buffer_copy(yirage_backend_buffer *b, size_t off, const void *p, size_t n,
                                 yirage_backend_error *e) {
  (void)b, (void)off, (void)p, (void)n;
  return no_device(e);
}
static yirage_status buffer_read(yirage_backend_buffer *b, size_t off, void *p, size_t n, yirage_backend_error *e) {
  return buffer_copy(b, off, p, n, e);
}
static yirage_status supports(yirage_backend_instance *i, int32_t d, const void *p, size_t n, yirage_backend_error *e) {
  (void)i, (void)d, (void)p, (void)n;
  return no_device(e);
}
static yirage_status compile(yirage_backend_instance *i, int32_t d, const void *p, size_t n,
                             const yirage_backend_compile_options *opt, yirage_backend_executable **o,
                             yirage_backend_error *e) {
  (void)opt, (void)o;
  return supports(i, d, p, n, e);
}
static void release_executable(yirage_backend_executable *x) {
  (void)x;
}
static yirage_status launch(yirage_backend_executable *x, void *s, yirage_backend_buffer *const *in, size_t n_in,
                            yirage_backend_buffer *const *out, size_t n_out, yirage_backend_error *e) {
  (void)x, (void)s, (void)in, (void)n_in, (void)out, (void)n_out;
  return no_device(e);
}
static yirage_status synchronize(yirage_backend_instance *i, int32_t d, void *s, yirage_backend_error *e) {
  (void)i, (void)d, (void)s;
  return no_device(e);
}
static yirage_status timer_create(yirage_backend_instance *i, int32_t d, yirage_backend_timer **o,
                                  yirage_backend_error *e) {
  (void)i, (void)d, (void)o;
  return no_device(e);
}
static void release_timer(yirage_backend_timer *t) {
  (void)t;
}
static yirage_status timer_record(yirage_backend_timer *t, void *s, yirage_backend_error *e) {
  (void)t, (void)s;
  return no_device(e);
}
static yirage_status timer_elapsed(yirage_backend_timer *a, yirage_backend_timer *b, double *o,
                                   yirage_backend_error *e) {
  (void)a, (void)b, (void)o;
  return no_device(e);
}

static yirage_status estimate(yirage_backend_instance *i, int32_t d, const void *p, size_t n,
                              yirage_backend_kernel_estimate *o, yirage_backend_error *e) {
  (void)o;
  return supports(i, d, p, n, e);
}

static const yirage_backend_api api = {
    sizeof(yirage_backend_api),
#if defined(FAKE_NEWER_MAJOR)
    YIRAGE_BACKEND_ABI_MAJOR + 1,
#elif defined(FAKE_OLDER_MAJOR)
    YIRAGE_BACKEND_ABI_MAJOR - 1,
#else
    YIRAGE_BACKEND_ABI_MAJOR,
#endif
    YIRAGE_BACKEND_ABI_MINOR,
#if defined(FAKE_BAD_NAME)
    "Fake Device",
#elif defined(FAKE_ONE_DEVICE)
    "fakedevice",
#else
    "nodevice",
#endif
    "0",
    create,
    destroy,
    device_count,
    unavailable_reason,
    device_info,
    buffer_alloc,
    buffer_wrap,
    release_buffer,
    buffer_copy,
    buffer_read,
    supports,
    compile,
    release_executable,
    launch,
    synchronize,
    timer_create,
    release_timer,
    timer_record,
    timer_elapsed,
    estimate,
    NULL, /* buffer_native: its buffers cannot be handed out as DLPack tensors */
};

YIRAGE_BACKEND_EXPORT const yirage_backend_api *yirage_backend_entry(uint32_t major, uint32_t minor) {
  (void)major;
  (void)minor;
#if defined(FAKE_ENTRY_EXIT)
  exit(3);
#endif
  return &api;
}

#else
YIRAGE_BACKEND_EXPORT int not_a_yirage_plugin(void) {
  return 0;
}
#endif
