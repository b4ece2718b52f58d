#include "ir/dtype.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace yirage {

bool is_valid_dtype(int32_t value) {
  return value == static_cast<int32_t>(DType::kFloat16) || value == static_cast<int32_t>(DType::kBFloat16) ||
         value == static_cast<int32_t>(DType::kFloat32);
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
    case DType::kFloat32: return 4;
  }
  return 0;
}

const char *dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat32: return "float32";
  }
  return "unknown";
}

double float16_to_double(uint16_t bits) {
  const bool negative = (bits & 0x8000u) != 0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);  // subnormal: m · 2^-24
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
  }
  return negative ? -magnitude : magnitude;
}

double bfloat16_to_double(uint16_t bits) {
  // bfloat16 is the upper half of a float32, so widening is exact through float.
  return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
}

namespace {

// A binary floating-point format with `mantissa_bits` stored fraction bits and exponent bias
// `bias`; used to round a double directly into float16 or bfloat16.
struct NarrowFormat {
  int mantissa_bits;
  int exponent_bits;
  int bias;
};

uint16_t round_double_to(double value, NarrowFormat format) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 63) << (format.mantissa_bits + format.exponent_bits));
  const uint16_t exponent_all_ones = static_cast<uint16_t>((1u << format.exponent_bits) - 1);
  const uint16_t infinity = static_cast<uint16_t>(exponent_all_ones << format.mantissa_bits);
  if (std::isnan(value)) {
    return static_cast<uint16_t>(sign | infinity | (1u << (format.mantissa_bits - 1)));
  }
  if (std::isinf(value)) return sign | infinity;
  const double magnitude = std::fabs(value);
  if (magnitude == 0.0) return sign;

  // Scale so that one unit in the last place of the narrow format is 1.0, then round the
  // (exactly representable, since it is a power-of-two scaling) double to an integer with ties
  // to even. Below the normal range the unit is fixed at the subnormal spacing.
  int exponent;
  std::frexp(magnitude, &exponent);  // magnitude = f · 2^exponent, f in [0.5, 1)
  const int min_normal_exponent = 1 - format.bias;
  const int unbiased = std::max(exponent - 1, min_normal_exponent);
  const int ulp_exponent = unbiased - format.mantissa_bits;
  const double scaled = std::ldexp(magnitude, -ulp_exponent);
  double rounded = std::nearbyint(scaled);  // default rounding mode: nearest, ties to even
  int biased = unbiased + format.bias;
  const double implicit_one = std::ldexp(1.0, format.mantissa_bits);
  if (rounded >= 2 * implicit_one) {  // rounding carried into the next binade
    rounded /= 2;
    biased += 1;
  }
  if (rounded < implicit_one) {  // subnormal result (or rounded up to the smallest normal)
    return sign | static_cast<uint16_t>(rounded);
  }
  if (biased >= exponent_all_ones) return sign | infinity;
  const auto fraction = static_cast<uint16_t>(rounded - implicit_one);
  return sign | static_cast<uint16_t>(biased << format.mantissa_bits) | fraction;
}

}  // namespace

uint16_t double_to_float16(double value) {
  return round_double_to(value, {10, 5, 15});
}

uint16_t double_to_bfloat16(double value) {
  return round_double_to(value, {7, 8, 127});
}

double load_element(DType dtype, const void *address) {
  switch (dtype) {
    case DType::kFloat16: {
      uint16_t bits;
      std::memcpy(&bits, address, sizeof bits);
      return float16_to_double(bits);
    }
    case DType::kBFloat16: {
      uint16_t bits;
      std::memcpy(&bits, address, sizeof bits);
      return bfloat16_to_double(bits);
    }
    case DType::kFloat32: {
      float value;
      std::memcpy(&value, address, sizeof value);
      return value;
    }
  }
  return NAN;
}

void store_element(DType dtype, void *address, double value) {
  switch (dtype) {
    case DType::kFloat16: {
      const uint16_t bits = double_to_float16(value);
      std::memcpy(address, &bits, sizeof bits);
      return;
    }
    case DType::kBFloat16: {
      const uint16_t bits = double_to_bfloat16(value);
      std::memcpy(address, &bits, sizeof bits);
      return;
    }
    case DType::kFloat32: {
      const auto narrowed = static_cast<float>(value);  // correctly rounded, ties to even
      std::memcpy(address, &narrowed, sizeof narrowed);
      return;
    }
  }
}

}  // namespace yirage
