#include "capi/status.hpp"

namespace yirage::capi {

namespace {
thread_local std::string last_error;
}

yirage_status fail(yirage_status status, const std::string &message) noexcept {
  try {
    last_error = message;
  } catch (...) {
    // Copying the message ran out of memory; a short static text still tells what happened.
    last_error.clear();
  }
  return status;
}

}  // namespace yirage::capi

extern "C" {

uint32_t yirage_abi_version(void) {
  return YIRAGE_ABI_VERSION;
}

const char *yirage_version(void) {
  return YIRAGE_VERSION_STRING;
}

const char *yirage_status_name(yirage_status status) {
  switch (status) {
    case YIRAGE_OK: return "OK";
    case YIRAGE_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case YIRAGE_ERROR_UNSUPPORTED: return "UNSUPPORTED";
    case YIRAGE_ERROR_NOT_FOUND: return "NOT_FOUND";
    case YIRAGE_ERROR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case YIRAGE_ERROR_BACKEND: return "BACKEND";
    case YIRAGE_ERROR_VERSION_MISMATCH: return "VERSION_MISMATCH";
    case YIRAGE_ERROR_CORRUPT_DATA: return "CORRUPT_DATA";
    case YIRAGE_ERROR_CANCELLED: return "CANCELLED";
    case YIRAGE_ERROR_TIMEOUT: return "TIMEOUT";
    case YIRAGE_ERROR_INTERNAL: return "INTERNAL";
    case YIRAGE_STATUS_MAX_ENUM: break;
  }
  return "UNKNOWN_STATUS";
}

const char *yirage_last_error_message(void) {
  return yirage::capi::last_error.c_str();
}

}  // extern "C"
