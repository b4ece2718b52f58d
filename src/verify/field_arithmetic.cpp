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
  return {static_cast<uint32_t>(uint64_t{a.p} * inverse(b.p, P) % P),
          combine_q(a.q, b.q, [](uint64_t x, uint64_t y) { return x * inverse(y, Q) % Q; })};
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

void FieldArithmetic::matmul_row(const Value *a, const Value *b, Value *out, int64_t k,
                                 int64_t n) const {
  // Q parts are summed whatever they are; an element whose terms include an unknown Q part is
  // marked unknown at the end (unsigned overflow of its discarded sum is harmless).
  std::vector<uint64_t> sum_p(static_cast<size_t>(n), 0), sum_q(static_cast<size_t>(n), 0);
  std::vector<uint8_t> unknown(static_cast<size_t>(n), 0);
  bool a_unknown = false;
  for (int64_t p = 0; p < k; ++p) {
    const uint64_t ap = a[p].p, aq = a[p].q;
    a_unknown = a_unknown || !known(a[p].q);
    const Value *row = b + p * n;
    for (int64_t j = 0; j < n; ++j) {
      sum_p[static_cast<size_t>(j)] += ap * row[j].p;
      sum_q[static_cast<size_t>(j)] += aq * row[j].q;
      unknown[static_cast<size_t>(j)] |= static_cast<uint8_t>(row[j].q == kUnknownQ);
    }
    if (p % 3 == 2 || p == k - 1) {
      for (int64_t j = 0; j < n; ++j) {
        sum_p[static_cast<size_t>(j)] %= P;
        sum_q[static_cast<size_t>(j)] %= Q;
      }
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    const bool q_known = !a_unknown && unknown[static_cast<size_t>(j)] == 0;
    out[j] = {static_cast<uint32_t>(sum_p[static_cast<size_t>(j)]),
              q_known ? static_cast<uint32_t>(sum_q[static_cast<size_t>(j)]) : kUnknownQ};
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
