// Running a tool (a compiler) as a child process: no shell, its output collected through a pipe,
// nothing written to disk. Used by the plugins that compile through external programs (the CPU
// plugin's C++ compiler, the Level Zero plugin's clang and llvm-spirv).
#pragma once

#include <string>
#include <vector>

namespace yirage::util {

// What a run printed, and how it ended.
struct ProcessOutcome {
  int status = 0;      // the exit status; 127 when the program could not be started; -1 a signal
  std::string output;  // stdout and stderr together; why it could not be started
};

// Runs argv[0] (searched on PATH when it has no slash) with `argv` and the caller's environment
// through posix_spawn, and waits for it. Thread-safe; the pipe is close-on-exec, so a child
// started by another thread at the same time never holds it open.
ProcessOutcome run_process(const std::vector<std::string> &argv);

// argv as one line for messages: the words joined by spaces.
std::string command_line(const std::vector<std::string> &argv);

}  // namespace yirage::util
