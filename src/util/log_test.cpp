#include "util/log.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace yirage::util {
namespace {

TEST(LogLine, WarningsFollowYirageLog) {
  const char *kept = std::getenv("YIRAGE_LOG");
  const std::string saved = kept ? kept : "";
  setenv("YIRAGE_LOG", "off", 1);
  ::testing::internal::CaptureStderr();
  log_line(LogLevel::kWarning, "unheard");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  unsetenv("YIRAGE_LOG");  // warnings are printed by default
  ::testing::internal::CaptureStderr();
  log_line(LogLevel::kWarning, "the cache cannot be written");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "yirage [warning] the cache cannot be written\n");
  if (kept) {
    setenv("YIRAGE_LOG", saved.c_str(), 1);
  } else {
    unsetenv("YIRAGE_LOG");
  }
}

}  // namespace
}  // namespace yirage::util
