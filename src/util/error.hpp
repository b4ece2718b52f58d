// Typed exceptions of the core. The core throws these; src/capi turns each into a
// yirage_status plus its message, so no exception ever crosses the C ABI.
#pragma once

#include <stdexcept>
#include <string>

namespace yirage {

// Mirrors yirage_status (include/yirage.h); values must stay equal.
enum class ErrorCode {
  kInvalidArgument = 1,
  kUnsupported = 2,
  kNotFound = 3,
  kOutOfMemory = 4,
  kBackend = 5,
  kVersionMismatch = 6,
  kCorruptData = 7,
  kCancelled = 8,
  kTimeout = 9,
  kInternal = 10,
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string &message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// The name of a status code (yirage_status: 0 is OK, the rest are ErrorCode values), e.g.
// "INVALID_ARGUMENT"; "UNKNOWN_STATUS" for anything else.
inline const char *status_name(int status) {
  switch (status) {
    case 0: return "OK";
    case static_cast<int>(ErrorCode::kInvalidArgument): return "INVALID_ARGUMENT";
    case static_cast<int>(ErrorCode::kUnsupported): return "UNSUPPORTED";
    case static_cast<int>(ErrorCode::kNotFound): return "NOT_FOUND";
    case static_cast<int>(ErrorCode::kOutOfMemory): return "OUT_OF_MEMORY";
    case static_cast<int>(ErrorCode::kBackend): return "BACKEND";
    case static_cast<int>(ErrorCode::kVersionMismatch): return "VERSION_MISMATCH";
    case static_cast<int>(ErrorCode::kCorruptData): return "CORRUPT_DATA";
    case static_cast<int>(ErrorCode::kCancelled): return "CANCELLED";
    case static_cast<int>(ErrorCode::kTimeout): return "TIMEOUT";
    case static_cast<int>(ErrorCode::kInternal): return "INTERNAL";
    default: return "UNKNOWN_STATUS";
  }
}

// Throws Error(kInvalidArgument, message); the most common failure, so it gets a short name.
[[noreturn]] inline void invalid_argument(const std::string &message) {
  throw Error(ErrorCode::kInvalidArgument, message);
}

}  // namespace yirage
