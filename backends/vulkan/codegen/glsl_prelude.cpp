#include "vulkan/codegen/glsl_prelude.hpp"

namespace yirage::codegen::vulkan {

// GLSL has no erf, and its pow is undefined for a negative base and for 0 with a non-positive
// exponent: both are spelled out to match the C library, as the reference executor sees it.
// bfloat16 rounds to nearest even, as the other backends do; float16 rounds through
// packHalf2x16.
const char *const kGlslPrelude = R"(#define NAN uintBitsToFloat(0x7fc00000u)
#define INFINITY uintBitsToFloat(0x7f800000u)
float yr_exp(float x) { return exp(x); }
float yr_erf(float x) {
  // Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7).
  const float t = 1.0f / (1.0f + 0.3275911f * abs(x));
  const float y = 1.0f - (((((1.061405429f * t - 1.453152027f) * t) + 1.421413741f) * t - 0.284496736f) * t +
                          0.254829592f) * t * exp(-x * x);
  return isnan(x) ? x : (x < 0.0f ? -y : y);
}
float yr_sqrt(float x) { return sqrt(x); }
float yr_rsqrt(float x) { return 1.0f / sqrt(x); }
float yr_log(float x) { return log(x); }
float yr_pow(float a, float b) {
  if (b == 0.0f) return 1.0f;
  if (isnan(a) || isnan(b)) return NAN;
  if (a == 0.0f) return b > 0.0f ? 0.0f : INFINITY;
  if (a < 0.0f) {
    if (b != trunc(b)) return NAN;
    const float r = pow(-a, b);
    return mod(abs(b), 2.0f) == 1.0f ? -r : r;
  }
  return pow(a, b);
}
float yr_sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }
float yr_max(float a, float b) { return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b); }
float yr_clamp(float x, float lo, float hi) {
  if (isnan(x)) return x;
  const float above = x < lo ? lo : x;
  return hi < above ? hi : above;
}
uint yr_bf16_bits(float v) {
  if (isnan(v)) return 0x7fc0u;
  uint u = floatBitsToUint(v);
  u += 0x7fffu + ((u >> 16) & 1u);
  return u >> 16;
}
uint yr_f16_bits(float v) { return packHalf2x16(vec2(v, 0.0f)) & 0xffffu; }
float yr_half_of(uint word, int i) { return unpackHalf2x16(word >> (uint(i & 1) * 16u)).x; }
float yr_bf16_of(uint word, int i) { return uintBitsToFloat(((word >> (uint(i & 1) * 16u)) & 0xffffu) << 16); }
)";

}  // namespace yirage::codegen::vulkan
