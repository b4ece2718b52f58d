// TargetProperties to and from yirage_target_properties (include/yirage.h), the form targets
// take across the C ABI and the plugin ABI.
#pragma once

#include "target/target.hpp"
#include "yirage.h"

namespace yirage::targets {

// Fills every field of `out` except struct_size (the name is truncated to fit).
void target_to_c(const TargetProperties &target, yirage_target_properties &out);
// Not validated: callers validate what came from outside.
TargetProperties target_from_c(const yirage_target_properties &in);

}  // namespace yirage::targets
