// yirage's log lines on stderr ("yirage [warning] <message>"): warnings are printed unless
// $YIRAGE_LOG says otherwise (docs/backends.md, "Logging"). Plugins' log lines go through the
// same threshold.
#pragma once

#include <string>

namespace yirage::util {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2 };

// The lowest level printed, from $YIRAGE_LOG: debug 0, info 1, warning 2 (also when unset or
// unknown), off -1 (nothing). Read on every call: cheap, and tests change it.
int log_threshold();

// Prints one line at `level` where the threshold lets it through. Thread-safe (one fprintf).
void log_line(LogLevel level, const std::string &message);

}  // namespace yirage::util
