#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_graphs.h"

double bench_half_to_double(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = mantissa ? NAN : INFINITY;
  } else if (exponent == 0) {
    magnitude = ldexp((double)mantissa, -24);
  } else {
    magnitude = ldexp((double)(mantissa | 0x400), exponent - 25);
  }
  return (bits & 0x8000) ? -magnitude : magnitude;
}

uint16_t bench_float_to_half(float value) {
  uint32_t x;
  uint32_t sign, exponent, mantissa;
  memcpy(&x, &value, sizeof x);
  sign = (x >> 16) & 0x8000u;
  exponent = (x >> 23) & 0xffu;
  mantissa = x & 0x7fffffu;
  if (exponent == 0xff) return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  {
    /* Rebias; handle overflow, normal and subnormal results with round-to-nearest-even. */
    int e = (int)exponent - 127 + 15;
    uint32_t m = mantissa | 0x800000u; /* 24-bit significand */
    int shift;
    uint32_t rounded, remainder, halfway;
    if (exponent == 0) return (uint16_t)sign; /* float subnormals are far below half's range */
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    shift = e >= 1 ? 13 : 14 - e; /* bits dropped from the 24-bit significand */
    if (shift > 24) return (uint16_t)sign;
    rounded = m >> shift;
    remainder = m & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (rounded & 1u))) rounded++;
    if (e >= 1) {
      /* rounded holds the implicit bit at 2^10; carrying into 2^11 bumps the exponent. */
      uint32_t bits = ((uint32_t)e << 10) + (rounded - 0x400u);
      if (bits >= 0x7c00u) return (uint16_t)(sign | 0x7c00u);
      return (uint16_t)(sign | bits);
    }
    return (uint16_t)(sign | rounded); /* subnormal, or exactly the smallest normal */
  }
}

double bench_bfloat16_to_double(uint16_t bits) {
  const uint32_t x = (uint32_t)bits << 16;
  float value;
  memcpy(&value, &x, sizeof value);
  return value;
}

uint16_t bench_float_to_bfloat16(float value) {
  uint32_t x;
  memcpy(&x, &value, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

int bench_tensor_alloc(const yirage_tensor *tensor, bench_tensor *out) {
  size_t ndim, i;
  memset(out, 0, sizeof *out);
  if (yirage_tensor_get_ndim(tensor, &ndim) != YIRAGE_OK ||
      yirage_tensor_get_dims(tensor, YIRAGE_MAX_RANK, out->shape) != YIRAGE_OK ||
      yirage_tensor_get_dtype(tensor, &out->dtype) != YIRAGE_OK) {
    return -1;
  }
  out->count = 1;
  for (i = 0; i < ndim; ++i) out->count *= out->shape[i];
  out->dl.data = malloc((size_t)out->count * yirage_dtype_size(out->dtype));
  if (out->dl.data == NULL) return -1;
  out->dl.device.device_type = kDLCPU;
  out->dl.device.device_id = 0;
  out->dl.ndim = (int)ndim;
  out->dl.shape = out->shape;
  out->dl.strides = NULL;
  out->dl.byte_offset = 0;
  out->dl.dtype.code = out->dtype == YIRAGE_BFLOAT16 ? kDLBfloat : kDLFloat;
  out->dl.dtype.bits = (uint8_t)(8 * yirage_dtype_size(out->dtype));
  out->dl.dtype.lanes = 1;
  return 0;
}

void bench_tensor_free(bench_tensor *t) {
  free(t->dl.data);
  t->dl.data = NULL;
}

static double next_uniform(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  *state = x;
  return (double)(x >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) with 53 bits */
}

void bench_tensor_fill_uniform(bench_tensor *t, uint64_t *state, double lo, double hi) {
  int64_t i;
  for (i = 0; i < t->count; ++i) {
    const float v = (float)(lo + (hi - lo) * next_uniform(state));
    if (t->dtype == YIRAGE_FLOAT32) {
      ((float *)t->dl.data)[i] = v;
    } else if (t->dtype == YIRAGE_FLOAT16) {
      ((uint16_t *)t->dl.data)[i] = bench_float_to_half(v);
    } else {
      ((uint16_t *)t->dl.data)[i] = bench_float_to_bfloat16(v);
    }
  }
}

void bench_tensor_poison(bench_tensor *t) {
  memset(t->dl.data, 0xff, (size_t)t->count * yirage_dtype_size(t->dtype));
}

double bench_tensor_get(const bench_tensor *t, int64_t i) {
  if (t->dtype == YIRAGE_FLOAT32) return ((const float *)t->dl.data)[i];
  if (t->dtype == YIRAGE_FLOAT16) return bench_half_to_double(((const uint16_t *)t->dl.data)[i]);
  return bench_bfloat16_to_double(((const uint16_t *)t->dl.data)[i]);
}

double bench_tensor_relative_error(const bench_tensor *got, const bench_tensor *want) {
  double diff = 0, norm = 0;
  int64_t e;
  for (e = 0; e < want->count; ++e) {
    const double a = bench_tensor_get(want, e), b = bench_tensor_get(got, e);
    diff += (a - b) * (a - b);
    norm += a * a;
  }
  return sqrt(diff / norm);
}
