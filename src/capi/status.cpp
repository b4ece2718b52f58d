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
  return yirage::status_name(static_cast<int>(status));
}

const char *yirage_last_error_message(void) {
  return yirage::capi::last_error.c_str();
}

}  // extern "C"
