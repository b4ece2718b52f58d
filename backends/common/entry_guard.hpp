// What every in-tree plugin's table entries share: turning exceptions into a status plus the
// error channel (yirage_backend.h: never throw across the ABI; honour the channel's struct_size),
// and the common argument checks.
#pragma once

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "util/error.hpp"
#include "yirage_backend.h"

namespace yirage::backend {

// An Error carrying the driver's own code (CUresult, cl_int, errno…) for the error channel.
class NativeError : public Error {
 public:
  NativeError(ErrorCode code, const std::string &message, int64_t native)
      : Error(code, message), native_(native) {}
  int64_t native() const { return native_; }

 private:
  int64_t native_;
};

// Fills the channel; a channel smaller than ABI 1.0's is left unwritten.
inline void set_error(yirage_backend_error *error, yirage_status status, const std::string &message,
                      int64_t native = 0) {
  if (error == nullptr || error->struct_size < sizeof(yirage_backend_error)) return;
  error->status = status;
  error->native_code = native;
  const size_t n = std::min(message.size(), sizeof error->message - 1);
  std::memcpy(error->message, message.data(), n);
  error->message[n] = '\0';
}

// Runs body; any exception becomes a status and the channel's message. `plugin` prefixes the
// messages of failures that did not say where they came from.
template <class Body>
yirage_status protect(const char *plugin, yirage_backend_error *error, Body &&body) noexcept {
  try {
    body();
    return YIRAGE_OK;
  } catch (const NativeError &e) {
    set_error(error, static_cast<yirage_status>(e.code()), e.what(), e.native());
    return static_cast<yirage_status>(e.code());
  } catch (const Error &e) {
    set_error(error, static_cast<yirage_status>(e.code()), e.what());
    return static_cast<yirage_status>(e.code());
  } catch (const std::bad_alloc &) {
    set_error(error, YIRAGE_ERROR_OUT_OF_MEMORY, std::string(plugin) + ": out of host memory");
    return YIRAGE_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    set_error(error, YIRAGE_ERROR_INTERNAL, std::string(plugin) + ": internal error: " + e.what());
    return YIRAGE_ERROR_INTERNAL;
  } catch (...) {
    set_error(error, YIRAGE_ERROR_INTERNAL, std::string(plugin) + ": internal error");
    return YIRAGE_ERROR_INTERNAL;
  }
}

// Throws INVALID_ARGUMENT unless [offset, offset + bytes) lies within `size` bytes.
inline void check_range(const char *plugin, size_t size, size_t offset, size_t bytes, const char *op) {
  if (offset > size || bytes > size - offset) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(plugin) + ": " + op + ": bytes [" + std::to_string(offset) + ", " +
                    std::to_string(offset + bytes) + ") are outside the buffer's " + std::to_string(size));
  }
}

}  // namespace yirage::backend
