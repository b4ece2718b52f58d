#include "util/subprocess.hpp"

#include <gtest/gtest.h>

namespace yirage::util {
namespace {

TEST(RunProcess, CollectsStdoutAndStderrAndTheExitStatus) {
  // No shell is involved: the words reach the program as they are.
  const ProcessOutcome echoed = run_process({"echo", "a;", "$HOME", "*"});
  EXPECT_EQ(echoed.status, 0);
  EXPECT_EQ(echoed.output, "a; $HOME *\n");
  const ProcessOutcome listed = run_process({"ls", "/nonexistent-yirage-path"});
  EXPECT_NE(listed.status, 0);
  EXPECT_NE(listed.output.find("nonexistent-yirage-path"), std::string::npos) << "stderr is not collected";
}

TEST(RunProcess, AProgramThatCannotStartIs127WithTheReason) {
  const ProcessOutcome missing = run_process({"/nonexistent/yirage-tool", "--version"});
  EXPECT_EQ(missing.status, 127);
  EXPECT_NE(missing.output.find("No such file"), std::string::npos) << missing.output;
  EXPECT_EQ(run_process({}).status, 127);
}

TEST(CommandLine, JoinsTheWords) {
  EXPECT_EQ(command_line({"clang-15", "-O2", "k.cl"}), "clang-15 -O2 k.cl");
}

}  // namespace
}  // namespace yirage::util
