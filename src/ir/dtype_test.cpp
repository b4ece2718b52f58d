#include "ir/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace yirage {
namespace {

TEST(DType, NamesAndSizes) {
  EXPECT_STREQ(dtype_name(DType::kFloat16), "float16");
  EXPECT_EQ(dtype_size(DType::kBFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_TRUE(is_valid_dtype(3));
  EXPECT_FALSE(is_valid_dtype(0));
  EXPECT_FALSE(is_valid_dtype(4));
}

TEST(Float16, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const double value = float16_to_double(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(float16_to_double(double_to_float16(value))));
    } else {
      ASSERT_EQ(double_to_float16(value), bits) << "value " << value;
    }
  }
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(float16_to_double(0x3c00), 1.0);
  EXPECT_EQ(float16_to_double(0x7bff), 65504.0);
  EXPECT_EQ(float16_to_double(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(double_to_float16(65520.0), 0x7c00);  // halfway to 2^16 rounds to infinity
  EXPECT_EQ(double_to_float16(65519.99), 0x7bff);
  EXPECT_EQ(double_to_float16(std::ldexp(1.0, -25)), 0x0000);  // tie to even (zero)
  EXPECT_EQ(double_to_float16(std::ldexp(3.0, -26)), 0x0001);
  EXPECT_EQ(double_to_float16(-0.0), 0x8000);
  EXPECT_EQ(double_to_float16(1e300), 0x7c00);
}

// GCC's _Float16 conversion from double is correctly rounded; compare against it on ties,
// near-ties and random values over the whole range.
#if defined(__FLT16_MAX__)
TEST(Float16, MatchesCompilerConversion) {
  auto compiler = [](double d) {
    const _Float16 h = static_cast<_Float16>(d);
    uint16_t bits;
    std::memcpy(&bits, &h, sizeof bits);
    return bits;
  };
  for (uint32_t bits = 0; bits < 0x7c00; ++bits) {
    const double lo = float16_to_double(static_cast<uint16_t>(bits));
    const double hi = float16_to_double(static_cast<uint16_t>(bits + 1));
    const double mid = (lo + hi) / 2;  // exact in double
    for (double d : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9), -mid}) {
      ASSERT_EQ(double_to_float16(d), compiler(d)) << "d = " << d;
    }
  }
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> exponent(-30, 17), mantissa(1, 2);
  for (int i = 0; i < 200000; ++i) {
    const double d = std::ldexp(mantissa(rng), static_cast<int>(exponent(rng)));
    ASSERT_EQ(double_to_float16(d), compiler(d)) << "d = " << d;
  }
}
#endif

TEST(BFloat16, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const double value = bfloat16_to_double(static_cast<uint16_t>(bits));
    if (!std::isnan(value)) {
      ASSERT_EQ(double_to_bfloat16(value), bits) << value;
    }
  }
  EXPECT_TRUE(std::isnan(bfloat16_to_double(double_to_bfloat16(NAN))));
}

// Rounding to nearest, ties to even, checked from the definition: the result is at least as
// close as both neighbours, and on a tie it is the one with an even last bit.
TEST(BFloat16, RoundsToNearestEvenFromDouble) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint32_t> pattern(0x0001, 0x7f7e);
  std::uniform_real_distribution<double> fraction(0, 1);
  for (int i = 0; i < 200000; ++i) {
    const auto bits = static_cast<uint16_t>(pattern(rng));
    const double lo = bfloat16_to_double(bits), hi = bfloat16_to_double(bits + 1);
    const double d = i % 4 == 0 ? (lo + hi) / 2 : lo + (hi - lo) * fraction(rng);
    const uint16_t got = double_to_bfloat16(d);
    const double error = std::fabs(bfloat16_to_double(got) - d);
    ASSERT_LE(error, std::fabs(lo - d)) << d;
    ASSERT_LE(error, std::fabs(hi - d)) << d;
    if (std::fabs(lo - d) == std::fabs(hi - d)) {
      ASSERT_EQ(got % 2, 0) << d;
    }
  }
  // Double rounding through float would get this wrong: just above a bfloat16 tie by less than
  // float's precision.
  const double above_tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(double_to_bfloat16(above_tie), 0x3f81);
}

TEST(Elements, LoadStoreEachDType) {
  unsigned char buffer[5] = {};
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    store_element(dtype, buffer + 1, -2.5);  // unaligned on purpose
    EXPECT_EQ(load_element(dtype, buffer + 1), -2.5) << dtype_name(dtype);
  }
  store_element(DType::kFloat32, buffer, 0.1);
  EXPECT_EQ(load_element(DType::kFloat32, buffer), static_cast<double>(0.1f));
}

}  // namespace
}  // namespace yirage
