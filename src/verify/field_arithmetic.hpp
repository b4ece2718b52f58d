// Arithmetic for fingerprints (ARCHITECTURE.md §4, docs/verification.md): each value is a pair
// (v mod P, v mod Q) — the Chinese-remainder form of v mod P·Q — with Q prime and P = 2Q + 1
// prime, so that exp(v) = g^(v mod Q) mod P, for g of order Q, turns sums into products exactly
// as exp does. Run through the same interpreter as the reference executor, it evaluates a graph
// exactly on random inputs; equal functions give equal fingerprints, and different ones collide
// only with small, bounded probability.
//
// Operators with no algebraic counterpart are modelled so that the identities graphs rely on
// still hold: max is the associative, commutative a ⊕ b = a + b + r·a·b (identity 0), so any
// reduction order gives one result and softmax's shift-invariance survives; sqrt is the
// multiplicative power map x^((P+1)/4); silu, gelu, relu, sigmoid, log, clamp and pow are
// random functions (keyed hashes) of their inputs. The exp of a value that itself came from exp
// has no faithful image (its Q part is lost) and is refused as unsupported.
#pragma once

#include <cstdint>

#include "ir/operator.hpp"
#include "util/counter_random.hpp"

namespace yirage::verify {

struct FieldValue {
  uint32_t p;  // v mod P
  uint32_t q;  // v mod Q, or kUnknownQ once v depends on exp
  bool operator==(const FieldValue &) const = default;
};

class FieldArithmetic {
 public:
  using Value = FieldValue;

  static constexpr uint64_t P = 2147481143;  // prime, P = 2Q + 1, P ≡ 3 (mod 4)
  static constexpr uint64_t Q = 1073740571;  // prime, Q ≡ 3 (mod 4)
  static constexpr uint64_t kGenerator = 4;  // a square ≠ 1 in Z_P*, hence of order Q
  static constexpr uint32_t kUnknownQ = 0xffffffffu;

  // `seed` fixes the random functions and the max coefficient of one trial.
  explicit FieldArithmetic(uint64_t seed);

  // Value `index` of the random stream `key` (util/counter_random.hpp): uniform over the field.
  Value random(uint64_t key, uint64_t index) const {
    return {static_cast<uint32_t>(below(counter_random(key, 2 * index), P)),
            static_cast<uint32_t>(below(counter_random(key, 2 * index + 1), Q))};
  }

  // The exact image of a finite double (every double is m·2^e with integer m).
  Value constant(double c) const;
  Value zero() const { return {0, 0}; }
  Value max_identity() const { return {0, 0}; }
  // The ring operations are inline: fingerprinting a matmul is little else.
  Value add(Value a, Value b) const {
    return {add_mod(a.p, b.p, P), both_known(a, b) ? add_mod(a.q, b.q, Q) : kUnknownQ};
  }
  Value sub(Value a, Value b) const {
    return {add_mod(a.p, static_cast<uint32_t>(P - b.p), P),
            both_known(a, b) ? add_mod(a.q, static_cast<uint32_t>(Q - b.q), Q) : kUnknownQ};
  }
  Value mul(Value a, Value b) const {
    return {static_cast<uint32_t>(uint64_t{a.p} * b.p % P),
            both_known(a, b) ? static_cast<uint32_t>(uint64_t{a.q} * b.q % Q) : kUnknownQ};
  }
  Value div(Value a, Value b) const;  // a · b⁻¹; 0⁻¹ is taken as 0
  Value sqrt(Value a) const;
  Value exp(Value a) const;  // throws Error(kUnsupported) when a.q is unknown
  Value max(Value a, Value b) const;
  Value unary(OpKind kind, const OpAttributes &attributes, Value x) const;

  // out[r·n + j] = Σ_p a[r·k + p]·b[p·n + j] for r < rows and first ≤ j < last: rows of a matmul,
  // columns [first, last) of them. Products are summed in 64 bits and folded (x ≡ (x >> 32)·(2^32
  // mod m) + x mod 2^32) every fourth term, which is exact because four products below 2^62 plus
  // a folded sum below 2^45 stay below 2^64; only P parts are summed for a row of A with an
  // unknown Q part. The rows share each pass over B, so B is read once for all of them. Columns go
  // in vector blocks: 8 at a time with AVX-512 where the CPU has it, 4 with SSE2, then one by one.
  void matmul_rows(const Value *a, int64_t rows, const Value *b, Value *out, int64_t k, int64_t n, int64_t first,
                   int64_t last) const;
  // Whether matmul_rows takes 8-column blocks (AVX-512F, where the CPU has it); off makes it take
  // the 4-column blocks everywhere (the results are the same: tests compare both).
  static bool wide_vectors();
  static void set_wide_vectors(bool on);
  Value binary(OpKind kind, Value a, Value b) const;

 private:
  static bool both_known(Value a, Value b) { return a.q != kUnknownQ && b.q != kUnknownQ; }
  // (x + y) mod m for x, y < m (y may equal m, from m − 0), without a division.
  static uint32_t add_mod(uint32_t x, uint32_t y, uint64_t m) {
    const uint64_t s = uint64_t{x} + y;
    return static_cast<uint32_t>(s >= m ? s - m : s);
  }

  // A keyed random function of (kind, parameters, inputs) onto the whole field.
  Value opaque(uint64_t tag, Value a, Value b) const;

  uint64_t key_;
  uint64_t max_p_, max_q_;  // the r of a ⊕ b = a + b + r·a·b, per component
};

}  // namespace yirage::verify
