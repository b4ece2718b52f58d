#include "verify/field_arithmetic.hpp"

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "util/error.hpp"

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

uint64_t mix(uint64_t x) {  // splitmix64's finalizer: a good 64-bit mixing function
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
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

FieldArithmetic::FieldArithmetic(uint64_t seed) : key_(mix(seed ^ 0x6a09e667f3bcc908ull)) {
  max_p_ = 1 + mix(key_ + 1) % (P - 1);
  max_q_ = 1 + mix(key_ + 2) % (Q - 1);
}

FieldValue FieldArithmetic::random(std::mt19937_64 &rng) const {
  return {static_cast<uint32_t>(rng() % P), static_cast<uint32_t>(rng() % Q)};
}

FieldValue FieldArithmetic::constant(double c) const {
  if (!std::isfinite(c)) {
    throw Error(ErrorCode::kInternal, "fingerprint: a non-finite constant has no field image");
  }
  int exponent;
  const double fraction = std::frexp(std::fabs(c), &exponent);  // c = ±fraction · 2^exponent
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
  const uint32_t q = combine_q(
      a.q, b.q, [this](uint64_t x, uint64_t y) { return (x + y + max_q_ * (x * y % Q)) % Q; });
  return {static_cast<uint32_t>(p), q};
}

FieldValue FieldArithmetic::opaque(uint64_t tag, Value a, Value b) const {
  const uint64_t h =
      mix(key_ ^ mix(tag ^ mix((uint64_t{a.p} << 32 | a.q) ^ mix(uint64_t{b.p} << 32 | b.q))));
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
      const uint64_t tag =
          mix(std::bit_cast<uint64_t>(attributes.lo)) ^ std::bit_cast<uint64_t>(attributes.hi);
      return opaque(static_cast<uint64_t>(kind) ^ mix(tag), x, zero());
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

inline uint64_t fold(uint64_t x, uint64_t f) { return (x >> 32) * f + (x & 0xffffffffu); }

}  // namespace

void FieldArithmetic::matmul_row(const Value *a, const Value *b, Value *out, int64_t k,
                                 int64_t n) const {
  // sums[2j] and sums[2j + 1]: output j's P and Q parts, folded every kRowsPerFold rows and
  // reduced at the end. Where A's row has an unknown Q part every output's Q part is unknown and
  // only P parts are summed; otherwise q_or[j] ORs B's Q parts into output j, which has a term
  // with an unknown one exactly when its top bit is set (known ones are below Q < 2^30).
  // (Blocks of 4 rows of A sharing each load of B measured no faster: the multiplications, not
  // the reads, bound it.)
  bool a_unknown = false;
  for (int64_t p = 0; p < k; ++p) a_unknown = a_unknown || !known(a[p].q);
  const size_t columns = static_cast<size_t>(n);
  std::vector<uint64_t> sums(2 * columns, 0);
  std::vector<uint32_t> q_or(a_unknown ? 0 : columns, 0);
  for (int64_t p = 0; p < k; ++p) {
    const uint64_t ap = a[p].p, aq = a[p].q;
    const Value *row = b + p * n;
    if (a_unknown) {
      for (size_t j = 0; j < columns; ++j) sums[2 * j] += ap * row[j].p;
    } else {
      for (size_t j = 0; j < columns; ++j) {
        sums[2 * j] += ap * row[j].p;
        sums[2 * j + 1] += aq * row[j].q;
        q_or[j] |= row[j].q;
      }
    }
    if (p % kRowsPerFold == kRowsPerFold - 1) {
      for (size_t j = 0; j < columns; ++j) {
        sums[2 * j] = fold(sums[2 * j], kFoldP);
        sums[2 * j + 1] = fold(sums[2 * j + 1], kFoldQ);
      }
    }
  }
  for (size_t j = 0; j < columns; ++j) {
    const bool q_known = !a_unknown && (q_or[j] & 0x80000000u) == 0;
    out[j] = {static_cast<uint32_t>(sums[2 * j] % P), q_known ? static_cast<uint32_t>(sums[2 * j + 1] % Q) : kUnknownQ};
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
