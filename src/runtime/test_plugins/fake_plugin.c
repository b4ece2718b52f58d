/* Plugins for the loader's tests, one per FAKE_VARIANT:
 *   FAKE_NO_DEVICE    a well-formed plugin whose "driver" is missing: zero devices, a reason;
 *   FAKE_NEWER_MAJOR  claims ABI major 2;
 *   FAKE_OLDER_MAJOR  claims ABI major 0;
 *   FAKE_NO_ENTRY     exports no entry symbol. */
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
static void destroy(yirage_backend_instance *instance) { (void)instance; }
static yirage_status device_count(yirage_backend_instance *instance, int32_t *out,
                                  yirage_backend_error *error) {
  (void)instance;
  (void)error;
  *out = 0;
  return YIRAGE_OK;
}
static const char *unavailable_reason(yirage_backend_instance *instance) {
  (void)instance;
  return "fake: no driver: libfake.so.1 is not installed";
}
static yirage_status no_device(yirage_backend_error *error) {
  fill(error, YIRAGE_ERROR_NOT_FOUND, "fake: no device");
  return YIRAGE_ERROR_NOT_FOUND;
}
static yirage_status device_info(yirage_backend_instance *i, int32_t d,
                                 yirage_backend_device_info *o, yirage_backend_error *e) {
  (void)i, (void)d, (void)o;
  return no_device(e);
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
    /* Every other entry is unreachable with zero devices; the loader never calls them. */
};

YIRAGE_BACKEND_EXPORT const yirage_backend_api *yirage_backend_entry(uint32_t major,
                                                                     uint32_t minor) {
  (void)major;
  (void)minor;
  return &api;
}

#else
YIRAGE_BACKEND_EXPORT int not_a_yirage_plugin(void) { return 0; }
#endif
