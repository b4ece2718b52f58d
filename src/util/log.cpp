#include "util/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace yirage::util {

int log_threshold() {
  const char *level = std::getenv("YIRAGE_LOG");
  if (level == nullptr) return 2;
  if (std::strcmp(level, "debug") == 0) return 0;
  if (std::strcmp(level, "info") == 0) return 1;
  if (std::strcmp(level, "off") == 0) return -1;
  return 2;
}

void log_line(LogLevel level, const std::string &message) {
  static const char *const names[] = {"debug", "info", "warning"};
  const int threshold = log_threshold();
  if (threshold < 0 || static_cast<int>(level) < threshold) return;
  std::fprintf(stderr, "yirage [%s] %s\n", names[static_cast<int>(level)], message.c_str());
}

}  // namespace yirage::util
