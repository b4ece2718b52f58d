// Target properties across the C ABI.
#pragma once

#include "target/target.hpp"
#include "yirage.h"

namespace yirage::capi {

// The properties behind a caller's struct: NULL, a struct_size too small or an implausible
// property give invalid_argument naming `function`.
targets::TargetProperties target_from_c(const char *function, const yirage_target_properties *in);

}  // namespace yirage::capi
