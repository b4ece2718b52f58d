// What every generated CPU kernel starts with: integer types, NaN and infinity, float16 and
// bfloat16 loads and stores (yr_ld, yr_st, and row conversions yr_ld_row / yr_st_row with F16C
// where the host has it) and the yr_* math helpers of codegen/expr.hpp. No standard header.
#pragma once

namespace yirage::codegen {

extern const char *const kCpuPrelude;

}  // namespace yirage::codegen
