// Element types and their exact conversions to and from float64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace yirage {

// Values mirror yirage_dtype (include/yirage.h) and are stored in files: never renumber.
enum class DType : int32_t { kFloat16 = 1, kBFloat16 = 2, kFloat32 = 3 };

bool is_valid_dtype(int32_t value);
size_t dtype_size(DType dtype);
const char *dtype_name(DType dtype);

// Exact widening of a 16-bit pattern to double.
double float16_to_double(uint16_t bits);
double bfloat16_to_double(uint16_t bits);

// Rounds a double straight to the narrow format, to nearest with ties to even. Going through
// float first would round twice and can be off by one unit in the last place, so these work on
// the double's bits. Overflow gives infinity; NaN stays NaN (quiet).
uint16_t double_to_float16(double value);
uint16_t double_to_bfloat16(double value);

// Reads / writes one element of `dtype` at `address` (any alignment).
double load_element(DType dtype, const void *address);
void store_element(DType dtype, void *address, double value);

}  // namespace yirage
