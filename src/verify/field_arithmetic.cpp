#include "verify/field_arithmetic.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "util/error.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define YIRAGE_FIELD_AVX512 1
#endif

namespace yirage::verify {

namespace {

using F = FieldArithmetic;

uint64_t power(uint64_t base, uint64_t exponent, uint64_t modulus) {
  uint64_t result = 1;
  base %= modulus;
  while (exponent > 0) {
    if (exponent & 1) result = result * base % modulus;
    base = base * base % modulus;
    exponent >>= 1;
  }
  return result;
}

// Z_m⁻¹ by Fermat (m prime); 0 maps to 0.
uint64_t inverse(uint64_t a, uint64_t modulus) {
  return power(a, modulus - 2, modulus);
}

bool known(uint32_t q) {
  return q != F::kUnknownQ;
}

// Combines q parts, which stay known only if both are.
template <class Op>
uint32_t combine_q(uint32_t a, uint32_t b, Op op) {
  return known(a) && known(b) ? static_cast<uint32_t>(op(a, b)) : F::kUnknownQ;
}

// The image of 2^e for any integer e, via 2^(P−1) = 1.
uint64_t power_of_two(int64_t e, uint64_t modulus) {
  const auto order = static_cast<int64_t>(modulus - 1);
  return power(2, static_cast<uint64_t>(((e % order) + order) % order), modulus);
}

}  // namespace

FieldArithmetic::FieldArithmetic(uint64_t seed) : key_(mix64(seed ^ 0x6a09e667f3bcc908ull)) {
  max_p_ = 1 + mix64(key_ + 1) % (P - 1);
  max_q_ = 1 + mix64(key_ + 2) % (Q - 1);
}

FieldValue FieldArithmetic::constant(double c) const {
  if (!std::isfinite(c)) {
    throw Error(ErrorCode::kInternal, "fingerprint: a non-finite constant has no field image");
  }
  int exponent;
  const double fraction = std::frexp(std::fabs(c), &exponent);            // c = ±fraction · 2^exponent
  const auto mantissa = static_cast<uint64_t>(std::ldexp(fraction, 53));  // exact integer
  auto image = [&](uint64_t modulus) {
    const uint64_t v = (mantissa % modulus) * power_of_two(exponent - 53, modulus) % modulus;
    return static_cast<uint32_t>(c < 0 ? (modulus - v) % modulus : v);
  };
  return {image(P), image(Q)};
}

FieldValue FieldArithmetic::div(Value a, Value b) const {
  // A divisor usually comes broadcast (attention's row sums, over a row of 64 or more
  // quotients), and an inverse costs about 60 modular multiplications: each thread remembers
  // those of the last divisor it saw ({P, Q} is no value).
  thread_local Value last{static_cast<uint32_t>(P), static_cast<uint32_t>(Q)};
  thread_local uint64_t inverse_p = 0, inverse_q = 0;
  if (!(b == last)) {
    last = b;
    inverse_p = inverse(b.p, P);
    inverse_q = known(b.q) ? inverse(b.q, Q) : 0;
  }
  return {static_cast<uint32_t>(uint64_t{a.p} * inverse_p % P),
          combine_q(a.q, b.q, [](uint64_t x, uint64_t) { return x * inverse_q % Q; })};
}

FieldValue FieldArithmetic::sqrt(Value a) const {
  return {static_cast<uint32_t>(power(a.p, (P + 1) / 4, P)),
          known(a.q) ? static_cast<uint32_t>(power(a.q, (Q + 1) / 4, Q)) : kUnknownQ};
}

namespace {

// g^x for x < Q as g^lo · (g^(2^15))^hi with x = lo + 2^15·hi: two table reads and one
// multiplication instead of about 30 squarings. Built once, on first use (thread-safe).
struct ExpTables {
  static constexpr int kBits = 15;
  std::vector<uint32_t> low, high;
  ExpTables() : low(size_t{1} << kBits), high(size_t{1} << kBits) {
    const uint64_t step = power(F::kGenerator, uint64_t{1} << kBits, F::P);
    uint64_t l = 1, h = 1;
    for (size_t i = 0; i < low.size(); ++i) {
      low[i] = static_cast<uint32_t>(l);
      high[i] = static_cast<uint32_t>(h);
      l = l * F::kGenerator % F::P;
      h = h * step % F::P;
    }
  }
};

const ExpTables &exp_tables() {
  static const ExpTables tables;
  return tables;
}

}  // namespace

FieldValue FieldArithmetic::exp(Value a) const {
  if (!known(a.q)) {
    throw Error(ErrorCode::kUnsupported,
                "fingerprint: exp of a value that itself depends on exp has no exact image in "
                "the fingerprint field; such graphs cannot be checked");
  }
  static_assert(Q < (uint64_t{1} << (2 * ExpTables::kBits)), "exponents must fit two tables");
  const ExpTables &t = exp_tables();
  const uint32_t low = a.q & ((1u << ExpTables::kBits) - 1), high = a.q >> ExpTables::kBits;
  return {static_cast<uint32_t>(uint64_t{t.low[low]} * t.high[high] % P), kUnknownQ};
}

FieldValue FieldArithmetic::max(Value a, Value b) const {
  // a ⊕ b = a + b + r·a·b: associative and commutative with identity 0.
  const uint64_t p = (uint64_t{a.p} + b.p + max_p_ * (uint64_t{a.p} * b.p % P)) % P;
  const uint32_t q = combine_q(a.q, b.q, [this](uint64_t x, uint64_t y) { return (x + y + max_q_ * (x * y % Q)) % Q; });
  return {static_cast<uint32_t>(p), q};
}

FieldValue FieldArithmetic::opaque(uint64_t tag, Value a, Value b) const {
  const uint64_t h = mix64(key_ ^ mix64(tag ^ mix64((uint64_t{a.p} << 32 | a.q) ^ mix64(uint64_t{b.p} << 32 | b.q))));
  return {static_cast<uint32_t>(h % P), static_cast<uint32_t>((h >> 32) % Q)};
}

FieldValue FieldArithmetic::unary(OpKind kind, const OpAttributes &attributes, Value x) const {
  switch (kind) {
    case OpKind::kExp: return exp(x);
    case OpKind::kSqrt: return sqrt(x);
    case OpKind::kSquare: return mul(x, x);
    case OpKind::kNeg: return sub(zero(), x);
    case OpKind::kMulScalar: return mul(x, constant(attributes.scalar));
    case OpKind::kSilu:
    case OpKind::kGelu:
    case OpKind::kRelu:
    case OpKind::kSigmoid:
    case OpKind::kLog: return opaque(static_cast<uint64_t>(kind), x, zero());
    case OpKind::kClamp: {
      // The bounds are part of the function: clamp(x, 0, 1) and clamp(x, 0, 2) differ.
      const uint64_t tag = mix64(std::bit_cast<uint64_t>(attributes.lo)) ^ std::bit_cast<uint64_t>(attributes.hi);
      return opaque(static_cast<uint64_t>(kind) ^ mix64(tag), x, zero());
    }
    default: break;
  }
  throw Error(ErrorCode::kInternal, std::string("fingerprint: not a unary op: ") + op_name(kind));
}

namespace {

// 2^32 mod P and 2^32 mod Q: x = hi·2^32 + lo ≡ hi·F + lo, so a 64-bit sum folds to below
// 2^32·5012 + 2^32 < 2^45 with one multiplication, where % by the modulus costs a 64-bit
// multiply-high chain (and does not vectorize).
constexpr uint64_t kFoldP = (uint64_t{1} << 32) % FieldArithmetic::P;
constexpr uint64_t kFoldQ = (uint64_t{1} << 32) % FieldArithmetic::Q;
static_assert(kFoldP == 5010 && kFoldQ == 5012);
// Rows of products summed between folds: 4 products below P² plus a folded sum stay below 2^64.
constexpr int64_t kRowsPerFold = 4;
// (A Q part of kUnknownQ makes larger products, which may wrap: such a sum is discarded.)
static_assert((uint64_t{1} << 45) <= ~uint64_t{0} - kRowsPerFold * (FieldArithmetic::P - 1) * (FieldArithmetic::P - 1));

inline uint64_t fold(uint64_t x, uint64_t f) {
  return (x >> 32) * f + (x & 0xffffffffu);
}

// Rows of B per pass over the columns: a vector block of columns walks down the pass's rows, n
// Values apart, and the next blocks read the rest of the same cache lines, which 64 rows' worth
// still hold. A pass down all of a large B instead (gated_mlp's 4096 rows, 32 KB apart) missed
// cache and TLB on every load and came out slower than summing a row of B at a time.
constexpr int64_t kPassRows = 64;
static_assert(kPassRows % kRowsPerFold == 0, "passes keep the folds' cadence");

// One row of A's sums over some columns of B: per column, the 64-bit P and Q sums and the OR of
// the Q parts of B that entered it (in the high half, where the vector blocks' ORs have them).
struct ColumnSums {
  uint64_t *p, *q, *ors;
  ColumnSums from(int64_t column) const { return {p + column, q + column, ors + column}; }
};

// Rows [p0, p1) of columns [first, last) of one row of A, added to their sums (s[0] is column
// first's), a row of B at a time: the columns after the vector blocks, and every column without
// SSE2. With kQ false (A's row has an unknown Q part) only P parts are summed.
template <bool kQ>
void matmul_rest(const FieldValue *a, const FieldValue *b, int64_t n, int64_t first, int64_t last, int64_t p0,
                 int64_t p1, ColumnSums s) {
  const int64_t width = last - first;
  for (int64_t p = p0; p < p1; ++p) {
    const uint64_t ap = a[p].p, aq = a[p].q;
    const FieldValue *row = b + p * n + first;
    for (int64_t j = 0; j < width; ++j) {
      s.p[j] += ap * row[j].p;
      if constexpr (kQ) {
        s.q[j] += aq * row[j].q;
        s.ors[j] |= uint64_t{row[j].q} << 32;
      }
    }
    if (p % kRowsPerFold == kRowsPerFold - 1) {
      for (int64_t j = 0; j < width; ++j) {
        s.p[j] = fold(s.p[j], kFoldP);
        if constexpr (kQ) s.q[j] = fold(s.q[j], kFoldQ);
      }
    }
  }
}

#if defined(__SSE2__)
// Columns per vector block: two 128-bit vectors of two 8-byte Values each.
constexpr int64_t kBlockColumns = 4;

inline __m128i fold2(__m128i x, __m128i f, __m128i low32) {
  return _mm_add_epi64(_mm_mul_epu32(_mm_srli_epi64(x, 32), f), _mm_and_si128(x, low32));
}

// matmul_rest for columns [j, j + 4) (s[0] is column j's), their sums in registers over the rows. A
// Value loaded as it lies is a 64-bit lane with P in its low half and Q in its high half;
// _mm_mul_epu32 multiplies the low halves of two lanes into 64 bits, so it takes P parts as loaded
// and Q parts after a 32-bit shift: two columns' products per instruction.
template <bool kQ>
void matmul_block(const FieldValue *a, const FieldValue *b, int64_t n, int64_t j, int64_t p0, int64_t p1,
                  ColumnSums s) {
  const __m128i fold_p = _mm_set1_epi64x(static_cast<int64_t>(kFoldP));
  const __m128i fold_q = _mm_set1_epi64x(static_cast<int64_t>(kFoldQ));
  const __m128i low32 = _mm_set1_epi64x(0xffffffffLL);
  auto at = [](uint64_t *array, int64_t half) { return reinterpret_cast<__m128i *>(array + 2 * half); };
  __m128i sum_p0 = _mm_loadu_si128(at(s.p, 0)), sum_p1 = _mm_loadu_si128(at(s.p, 1));
  __m128i sum_q0 = _mm_loadu_si128(at(s.q, 0)), sum_q1 = _mm_loadu_si128(at(s.q, 1));
  __m128i or0 = _mm_loadu_si128(at(s.ors, 0)), or1 = _mm_loadu_si128(at(s.ors, 1));
  for (int64_t p = p0; p < p1; ++p) {
    const auto *row = reinterpret_cast<const __m128i *>(b + p * n + j);
    const __m128i v0 = _mm_loadu_si128(row), v1 = _mm_loadu_si128(row + 1);
    const __m128i ap = _mm_set1_epi64x(a[p].p);
    sum_p0 = _mm_add_epi64(sum_p0, _mm_mul_epu32(v0, ap));
    sum_p1 = _mm_add_epi64(sum_p1, _mm_mul_epu32(v1, ap));
    if constexpr (kQ) {
      const __m128i aq = _mm_set1_epi64x(a[p].q);
      sum_q0 = _mm_add_epi64(sum_q0, _mm_mul_epu32(_mm_srli_epi64(v0, 32), aq));
      sum_q1 = _mm_add_epi64(sum_q1, _mm_mul_epu32(_mm_srli_epi64(v1, 32), aq));
      or0 = _mm_or_si128(or0, v0);
      or1 = _mm_or_si128(or1, v1);
    }
    if (p % kRowsPerFold == kRowsPerFold - 1) {
      sum_p0 = fold2(sum_p0, fold_p, low32);
      sum_p1 = fold2(sum_p1, fold_p, low32);
      if constexpr (kQ) {
        sum_q0 = fold2(sum_q0, fold_q, low32);
        sum_q1 = fold2(sum_q1, fold_q, low32);
      }
    }
  }
  _mm_storeu_si128(at(s.p, 0), sum_p0), _mm_storeu_si128(at(s.p, 1), sum_p1);
  _mm_storeu_si128(at(s.q, 0), sum_q0), _mm_storeu_si128(at(s.q, 1), sum_q1);
  _mm_storeu_si128(at(s.ors, 0), or0), _mm_storeu_si128(at(s.ors, 1), or1);
}
#endif

#if defined(YIRAGE_FIELD_AVX512)
// Columns per wide block: one 512-bit vector of eight 8-byte Values.
constexpr int64_t kWideColumns = 8;
// Rows of A from which matmul_rows takes wide blocks.
constexpr int64_t kWideMinRows = 4;

// GCC 12 warns that its own _mm512_mul_epu32 and _mm512_srli_epi64 read an uninitialized vector
// (their _mm512_undefined_epi32 pass-through): a known false positive of its headers (clang has
// no such warning, nor its name).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

__attribute__((target("avx512f"))) inline __m512i fold8(__m512i x, __m512i f, __m512i low32) {
  return _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(x, 32), f), _mm512_and_si512(x, low32));
}

// matmul_block for columns [j, j + 8) with AVX-512F (compiled for it alone, called only where the
// CPU has it): each 64-bit lane a column, as in matmul_block, four times as many per instruction.
// (Four rows of A a call, sharing each load of B, measured slower: 57.6 against 47.9 s for
// qwen2.5_7b.down.t256's search on the 2-core VM.)
template <bool kQ>
__attribute__((target("avx512f"))) void matmul_wide_block(const FieldValue *a, const FieldValue *b, int64_t n,
                                                          int64_t j, int64_t p0, int64_t p1, ColumnSums s) {
  const __m512i fold_p = _mm512_set1_epi64(static_cast<int64_t>(kFoldP));
  const __m512i fold_q = _mm512_set1_epi64(static_cast<int64_t>(kFoldQ));
  const __m512i low32 = _mm512_set1_epi64(0xffffffffLL);
  __m512i sum_p = _mm512_loadu_si512(s.p), sum_q = _mm512_loadu_si512(s.q), ors = _mm512_loadu_si512(s.ors);
  for (int64_t p = p0; p < p1; ++p) {
    const __m512i v = _mm512_loadu_si512(b + p * n + j);
    sum_p = _mm512_add_epi64(sum_p, _mm512_mul_epu32(v, _mm512_set1_epi64(a[p].p)));
    if constexpr (kQ) {
      sum_q = _mm512_add_epi64(sum_q, _mm512_mul_epu32(_mm512_srli_epi64(v, 32), _mm512_set1_epi64(a[p].q)));
      ors = _mm512_or_si512(ors, v);
    }
    if (p % kRowsPerFold == kRowsPerFold - 1) {
      sum_p = fold8(sum_p, fold_p, low32);
      if constexpr (kQ) sum_q = fold8(sum_q, fold_q, low32);
    }
  }
  _mm512_storeu_si512(s.p, sum_p);
  _mm512_storeu_si512(s.q, sum_q);
  _mm512_storeu_si512(s.ors, ors);
}

#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

std::atomic<bool> &wide_vectors_on() {
  static std::atomic<bool> on{__builtin_cpu_supports("avx512f") != 0};
  return on;
}
#endif

}  // namespace

bool FieldArithmetic::wide_vectors() {
#if defined(YIRAGE_FIELD_AVX512)
  return wide_vectors_on().load();
#else
  return false;
#endif
}

void FieldArithmetic::set_wide_vectors(bool on) {
#if defined(YIRAGE_FIELD_AVX512)
  wide_vectors_on() = on && __builtin_cpu_supports("avx512f") != 0;
#else
  (void)on;
#endif
}

void FieldArithmetic::matmul_rows(const Value *a, int64_t rows, const Value *b, Value *out, int64_t k, int64_t n,
                                  int64_t first, int64_t last) const {
  // Per row of A, its columns' sums (ColumnSums), folded every kRowsPerFold rows of B and
  // reduced at the end. Pass by pass over B's rows: each vector block of columns for every row
  // of A while the block's cache lines are at hand, then the columns after the blocks. Where a
  // row of A has an unknown Q part every output's Q part is unknown and only P parts are summed;
  // otherwise the OR of B's Q parts that entered a column has its top bit set exactly when one
  // was unknown (known ones are below Q < 2^30). docs/verification.md has the times.
  const int64_t width = last - first;
  std::vector<uint64_t> sums(static_cast<size_t>(3 * rows * width), 0);
  std::vector<bool> a_unknown(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    a_unknown[static_cast<size_t>(r)] =
        std::any_of(a + r * k, a + (r + 1) * k, [](const Value &v) { return !known(v.q); });
  }
  auto row_sums = [&](int64_t r) {
    uint64_t *p = sums.data() + 3 * r * width;
    return ColumnSums{p, p + width, p + 2 * width};
  };
  // Columns [first, wide) go in wide blocks, [wide, blocked) in vector blocks, the rest alone.
  int64_t wide = first, blocked = first;
#if defined(YIRAGE_FIELD_AVX512)
  // Only for several rows of A: with one or two, wide blocks measured slower than SSE2's (a
  // vector times a 4096 × 4096 weight, two rows: 1.32-1.36 ns a multiply-add against 1.15-1.21;
  // docs/verification.md).
  if (wide_vectors() && rows >= kWideMinRows) wide = first + width / kWideColumns * kWideColumns;
#endif
#if defined(__SSE2__)
  static_assert(sizeof(FieldValue) == 8, "two Values per 128-bit vector");
  blocked = wide + (last - wide) / kBlockColumns * kBlockColumns;
#endif
  // Columns [from, to) in blocks of `step` for every row of A: `known` for rows whose Q parts are
  // all known, `unknown` for the others.
  using Block = void (*)(const FieldValue *, const FieldValue *, int64_t, int64_t, int64_t, int64_t, ColumnSums);
  [[maybe_unused]] const auto in_blocks = [&](int64_t from, int64_t to, int64_t step, Block known, Block unknown,
                                              int64_t p0, int64_t p1) {
    for (int64_t j = from; j < to; j += step) {
      for (int64_t r = 0; r < rows; ++r) {
        (a_unknown[static_cast<size_t>(r)] ? unknown : known)(a + r * k, b, n, j, p0, p1, row_sums(r).from(j - first));
      }
    }
  };
  for (int64_t p0 = 0; p0 < k; p0 += kPassRows) {
    const int64_t p1 = std::min(k, p0 + kPassRows);
#if defined(YIRAGE_FIELD_AVX512)
    in_blocks(first, wide, kWideColumns, matmul_wide_block<true>, matmul_wide_block<false>, p0, p1);
#endif
#if defined(__SSE2__)
    in_blocks(wide, blocked, kBlockColumns, matmul_block<true>, matmul_block<false>, p0, p1);
#endif
    if (blocked == last) continue;
    for (int64_t r = 0; r < rows; ++r) {
      const auto rest = a_unknown[static_cast<size_t>(r)] ? matmul_rest<false> : matmul_rest<true>;
      rest(a + r * k, b, n, blocked, last, p0, p1, row_sums(r).from(blocked - first));
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const ColumnSums s = row_sums(r);
    for (int64_t j = 0; j < width; ++j) {
      const bool q_known = !a_unknown[static_cast<size_t>(r)] && (s.ors[j] >> 63) == 0;
      out[r * n + first + j] = {static_cast<uint32_t>(s.p[j] % P),
                                q_known ? static_cast<uint32_t>(s.q[j] % Q) : kUnknownQ};
    }
  }
}

FieldValue FieldArithmetic::binary(OpKind kind, Value a, Value b) const {
  switch (kind) {
    case OpKind::kAdd: return add(a, b);
    case OpKind::kSub: return sub(a, b);
    case OpKind::kMul: return mul(a, b);
    case OpKind::kDiv: return div(a, b);
    case OpKind::kMax: return max(a, b);
    case OpKind::kPow: return opaque(static_cast<uint64_t>(kind), a, b);
    default: break;
  }
  throw Error(ErrorCode::kInternal, std::string("fingerprint: not a binary op: ") + op_name(kind));
}

}  // namespace yirage::verify
