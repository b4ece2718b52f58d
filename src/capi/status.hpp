// The boundary between the C++ core and the C ABI: runs a body, turns any exception into a
// yirage_status and records its message as the calling thread's last error.
#pragma once

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "util/error.hpp"
#include "yirage.h"

namespace yirage::capi {

// Records `message` as this thread's last error and returns `status`. Never throws.
yirage_status fail(yirage_status status, const std::string &message) noexcept;

template <class Body>
yirage_status guard(Body &&body) noexcept {
  try {
    body();
    return YIRAGE_OK;
  } catch (const Error &e) {
    return fail(static_cast<yirage_status>(e.code()), e.what());
  } catch (const std::bad_alloc &) {
    return fail(YIRAGE_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception &e) {
    return fail(YIRAGE_ERROR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(YIRAGE_ERROR_INTERNAL, "internal error: unknown exception");
  }
}

// Throws invalid_argument("<function>: <name> is NULL") when pointer is NULL.
inline void require_non_null(const char *function, const char *name, const void *pointer) {
  if (pointer == nullptr) invalid_argument(std::string(function) + ": " + name + " is NULL");
}

// Throws invalid_argument("<function>: <what>->struct_size N is smaller than M") when a caller's
// struct is older than the first version of it this library accepts.
inline void require_struct_size(const char *function, const char *what, size_t size, size_t needed) {
  if (size < needed) {
    invalid_argument(std::string(function) + ": " + what + "->struct_size " + std::to_string(size) +
                     " is smaller than " + std::to_string(needed));
  }
}

// Copies `text` into a caller's fixed-size char array, truncating, always NUL-terminated.
template <size_t N>
void copy_string(char (&out)[N], const std::string &text) noexcept {
  const size_t n = std::min(text.size(), N - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace yirage::capi
