/* Plugins for the loader's tests, one per FAKE_VARIANT:
 *   FAKE_NO_DEVICE    a plugin whose "driver" is missing: zero devices, a reason; its create
 *                     ignores the host struct (the conformance runner test expects the suite
 *                     to fail it for that);
 *   FAKE_NEWER_MAJOR  claims ABI major 2;
 *   FAKE_OLDER_MAJOR  claims ABI major 0;
 *   FAKE_NO_ENTRY     exports no entry symbol;
 *   FAKE_CRASH        like NO_DEVICE, but destroy(NULL) dereferences NULL (the conformance
 *                     runner must survive it);
 *   FAKE_HANG         like NO_DEVICE, but unavailable_reason never returns. */
#include <string.h>

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
  *out = 0;
  return YIRAGE_OK;
}
static const char *unavailable_reason(yirage_backend_instance *instance) {
  (void)instance;
#if defined(FAKE_HANG)
  for (volatile int forever = 1; forever;) {
  }
#endif
  return "fake: no driver: libfake.so.1 is not installed";
}
static yirage_status no_device(yirage_backend_error *error) {
  fill(error, YIRAGE_ERROR_NOT_FOUND, "fake: no device");
  return YIRAGE_ERROR_NOT_FOUND;
}
static yirage_status device_info(yirage_backend_instance *i, int32_t d, yirage_backend_device_info *o,
                                 yirage_backend_error *e) {
  (void)i, (void)d, (void)o;
  return no_device(e);
}

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
    "nodevice",
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
  return &api;
}

#else
YIRAGE_BACKEND_EXPORT int not_a_yirage_plugin(void) {
  return 0;
}
#endif
