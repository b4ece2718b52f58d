#include "verify/equivalence.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "util/error.hpp"
#include "verify/field_arithmetic.hpp"

namespace yirage::verify {
namespace {

EquivalenceOptions options() {
  return EquivalenceOptions{3, 7, 2};
}

// Two graphs over inputs a, b, c of [4, 8] (and d of [8, 4]), each made by its own recipe.
template <class Recipe>
KernelGraph graph_of(Recipe recipe) {
  KernelGraph g;
  const TensorId a = g.new_input({4, 8}, DType::kFloat16);
  const TensorId b = g.new_input({4, 8}, DType::kFloat16);
  const TensorId c = g.new_input({4, 8}, DType::kFloat16);
  const TensorId d = g.new_input({8, 4}, DType::kFloat16);
  g.mark_output(recipe(g, a, b, c, d));
  return g;
}

bool equivalent(const KernelGraph &x, const KernelGraph &y) {
  return check_equivalence(x, y, options()).equivalent;
}

TEST(Fingerprint, RingIdentitiesHold) {
  const auto distributed = graph_of([](KernelGraph &g, TensorId a, TensorId b, TensorId c, TensorId) {
    return g.binary(OpKind::kAdd, g.binary(OpKind::kMul, a, b), g.binary(OpKind::kMul, a, c));
  });
  const auto factored = graph_of([](KernelGraph &g, TensorId a, TensorId b, TensorId c, TensorId) {
    return g.binary(OpKind::kMul, a, g.binary(OpKind::kAdd, c, b));
  });
  EXPECT_TRUE(equivalent(distributed, factored));
  // (a + b)·d = a·d + b·d for matmul.
  const auto left = graph_of([](KernelGraph &g, TensorId a, TensorId b, TensorId, TensorId d) {
    return g.matmul(g.binary(OpKind::kAdd, a, b), d);
  });
  const auto right = graph_of([](KernelGraph &g, TensorId a, TensorId b, TensorId, TensorId d) {
    return g.binary(OpKind::kAdd, g.matmul(a, d), g.matmul(b, d));
  });
  EXPECT_TRUE(equivalent(left, right));
}

TEST(Fingerprint, ExpIsAHomomorphismAndSoftmaxIsShiftInvariant) {
  const auto exp_sum = graph_of([](KernelGraph &g, TensorId a, TensorId b, TensorId, TensorId) {
    return g.unary(OpKind::kExp, g.binary(OpKind::kAdd, a, b));
  });
  const auto exp_product = graph_of([](KernelGraph &g, TensorId a, TensorId b, TensorId, TensorId) {
    return g.binary(OpKind::kMul, g.unary(OpKind::kExp, a), g.unary(OpKind::kExp, b));
  });
  EXPECT_TRUE(equivalent(exp_sum, exp_product));
  const auto softmax =
      graph_of([](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) { return g.softmax(a, 1); });
  const auto plain = graph_of([](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) {
    const TensorId e = g.unary(OpKind::kExp, a);
    return g.binary(OpKind::kDiv, e, g.reduction(OpKind::kReduction, e, 1));
  });
  EXPECT_TRUE(equivalent(softmax, plain));
}

TEST(Fingerprint, DifferencesAreCaught) {
  auto binary = [](OpKind kind, bool swap) {
    return graph_of([=](KernelGraph &g, TensorId a, TensorId b, TensorId, TensorId) {
      return swap ? g.binary(kind, b, a) : g.binary(kind, a, b);
    });
  };
  EXPECT_FALSE(equivalent(binary(OpKind::kSub, false), binary(OpKind::kSub, true)));
  EXPECT_FALSE(equivalent(binary(OpKind::kDiv, false), binary(OpKind::kDiv, true)));
  EXPECT_FALSE(equivalent(binary(OpKind::kPow, false), binary(OpKind::kPow, true)));
  EXPECT_TRUE(equivalent(binary(OpKind::kMax, false), binary(OpKind::kMax, true)));
  auto unary = [](OpKind kind) {
    return graph_of([=](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) { return g.unary(kind, a); });
  };
  const OpKind kinds[] = {OpKind::kExp,    OpKind::kSilu,    OpKind::kGelu, OpKind::kRelu, OpKind::kSqrt,
                          OpKind::kSquare, OpKind::kSigmoid, OpKind::kLog,  OpKind::kNeg};
  for (OpKind x : kinds) {
    for (OpKind y : kinds) EXPECT_EQ(equivalent(unary(x), unary(y)), x == y) << op_name(x) << op_name(y);
  }
  auto clamp = [](double hi) {
    return graph_of([=](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) { return g.clamp(a, 0, hi); });
  };
  EXPECT_FALSE(equivalent(clamp(1), clamp(2)));
  auto scaled = [](double s) {
    return graph_of([=](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) { return g.mul_scalar(a, s); });
  };
  EXPECT_TRUE(equivalent(scaled(0.125), graph_of([](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) {
                           return g.mul_scalar(g.mul_scalar(a, 0.5), 0.25);
                         })));
  EXPECT_FALSE(equivalent(scaled(0.1), scaled(0.1000001)));
}

TEST(Fingerprint, ReportsWhyNotEquivalent) {
  const auto sum_rows = graph_of(
      [](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) { return g.reduction(OpKind::kReduction, a, 0); });
  const auto sum_cols = graph_of(
      [](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) { return g.reduction(OpKind::kReduction, a, 1); });
  const EquivalenceResult shapes = check_equivalence(sum_rows, sum_cols, options());
  EXPECT_FALSE(shapes.equivalent);
  EXPECT_EQ(shapes.reason, "output 0 is [1,8] float16 in the first graph and [4,1] float16 in the second");
  EXPECT_EQ(shapes.trials, 0);
  const auto neg =
      graph_of([](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) { return g.unary(OpKind::kNeg, a); });
  const auto same =
      graph_of([](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) { return g.unary(OpKind::kSquare, a); });
  const EquivalenceResult values = check_equivalence(neg, same, options());
  EXPECT_FALSE(values.equivalent);
  EXPECT_EQ(values.reason.rfind("output 0 differs at element 0 in trial 0", 0), 0u) << values.reason;
  const EquivalenceResult ok = check_equivalence(neg, neg, options());
  EXPECT_TRUE(ok.equivalent);
  EXPECT_EQ(ok.trials, 3);
  EXPECT_TRUE(ok.reason.empty());
}

TEST(Fingerprint, RefusesWhatItCannotCheck) {
  const auto nested = graph_of([](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId) {
    return g.unary(OpKind::kExp, g.unary(OpKind::kExp, a));
  });
  try {
    check_equivalence(nested, nested, options());
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  }
  // Also through a matmul (the field's lazily reduced row kernel must propagate "unknown").
  const auto through_matmul = graph_of([](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId d) {
    return g.unary(OpKind::kExp, g.matmul(g.unary(OpKind::kExp, a), d));
  });
  EXPECT_THROW(check_equivalence(through_matmul, through_matmul, options()), Error);
  // An exp'd operand on the other side of the matmul is fine as long as no exp follows.
  const auto fine = graph_of(
      [](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId d) { return g.matmul(g.unary(OpKind::kExp, a), d); });
  EXPECT_TRUE(check_equivalence(fine, fine, options()).equivalent);
  KernelGraph other;
  other.mark_output(other.unary(OpKind::kExp, other.new_input({4, 8}, DType::kFloat32)));
  EXPECT_THROW(check_equivalence(nested, other, options()), Error);  // different inputs
  EquivalenceOptions zero = options();
  zero.trials = 0;
  EXPECT_THROW(check_equivalence(nested, nested, zero), Error);
}

// A check asked to stop ends with kTimeout before it decides, and the next one runs whole.
TEST(Fingerprint, StopsWhenAsked) {
  const auto product =
      graph_of([](KernelGraph &g, TensorId a, TensorId, TensorId, TensorId d) { return g.matmul(a, d); });
  const FingerprintCheck check(product, options());
  int asked = 0;
  try {
    check.check(product, [&] { return ++asked > 1; });
    ADD_FAILURE() << "the check ran to the end";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kTimeout);
  }
  EXPECT_GE(asked, 2);
  const EquivalenceResult whole = check.check(product, [] { return false; });
  EXPECT_TRUE(whole.equivalent) << whole.reason;
  EXPECT_EQ(whole.trials, 3);
}

TEST(FieldArithmetic, ConstantsAreExact) {
  const FieldArithmetic f(1);
  EXPECT_EQ(f.mul(f.constant(0.125), f.constant(8)), f.constant(1));
  EXPECT_EQ(f.add(f.constant(-3.5), f.constant(3.5)), f.zero());
  // The double 0.1 is a dyadic rational a little off 1/10, and the field sees it exactly.
  EXPECT_NE(f.mul(f.constant(0.1), f.constant(10)), f.constant(1));
  EXPECT_EQ(f.div(f.constant(1), f.constant(3)), f.div(f.constant(2), f.constant(6)));
  EXPECT_EQ(f.div(f.constant(5), f.zero()), f.zero());  // 0⁻¹ is taken as 0
}

// MatmulRowsAreTheRingsSums' cases, with the kernel as it is set.
void expect_matmul_rows_are_the_rings_sums() {
  const FieldArithmetic f(5);
  uint64_t drawn = 0;  // values of the random stream 6 used so far
  const FieldValue top{static_cast<uint32_t>(FieldArithmetic::P - 1), static_cast<uint32_t>(FieldArithmetic::Q - 1)};
  const FieldValue unset{1, 1};
  const int64_t rows = 5;  // wide blocks take 4 rows or more
  for (const int64_t n : {1, 4, 7, 13, 19, 40}) {
    for (const int64_t k : {1, 3, 4, 5, 8, 9, 64, 65, 4097}) {
      for (const int mode : {0, 1, 2, 3}) {  // top values, random, unknown in A, unknown in B
        std::vector<FieldValue> a(static_cast<size_t>(rows * k)), b(static_cast<size_t>(k * n));
        for (auto &v : a) v = mode == 0 ? top : f.random(6, drawn++);
        for (auto &v : b) v = mode == 0 ? top : f.random(6, drawn++);
        const int64_t in_block = std::min<int64_t>(1, n - 1);
        if (mode == 2) a[static_cast<size_t>(k + k / 2)].q = FieldArithmetic::kUnknownQ;  // row 1
        if (mode == 3) {
          b[static_cast<size_t>((k - 1) * n + in_block)].q = FieldArithmetic::kUnknownQ;
          b[static_cast<size_t>(n - 1)].q = FieldArithmetic::kUnknownQ;
        }
        std::vector<FieldValue> out(static_cast<size_t>(rows * n), unset);
        const int64_t split = n / 2;
        f.matmul_rows(a.data(), rows, b.data(), out.data(), k, n, 0, split);
        for (int64_t j = split; j < n; ++j) {
          ASSERT_EQ(out[static_cast<size_t>(j)], unset) << "column " << j;
        }
        f.matmul_rows(a.data(), rows, b.data(), out.data(), k, n, split, n);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t j = 0; j < n; ++j) {
            FieldValue expected = f.zero();
            for (int64_t p = 0; p < k; ++p) {
              expected = f.add(expected, f.mul(a[static_cast<size_t>(r * k + p)], b[static_cast<size_t>(p * n + j)]));
            }
            const FieldValue got = out[static_cast<size_t>(r * n + j)];
            ASSERT_EQ(got, expected) << "n " << n << " k " << k << " mode " << mode << " row " << r << " column " << j;
            const bool unknown = (mode == 2 && r == 1) || (mode == 3 && (j == in_block || j == n - 1));
            EXPECT_EQ(got.q == FieldArithmetic::kUnknownQ, unknown)
                << "n " << n << " mode " << mode << " row " << r << " column " << j;
          }
        }
      }
    }
  }
}

// The matmul kernel (lazily folded sums, columns in wide blocks of 8 with AVX-512 where the CPU
// has it, vector blocks of 4 and a scalar tail, rows sharing each pass over B) against the ring's
// own add and mul, on five rows of A and each width's columns in two calls (a range that starts
// past column 0): values at the top of the field (the largest sums), random ones, an unknown Q
// part in the middle row of A only, or in B (a column of a block and the last column). Both
// with the wide blocks and without, where the CPU has them.
TEST(FieldArithmetic, MatmulRowsAreTheRingsSums) {
  const bool wide = FieldArithmetic::wide_vectors();
  for (const bool on : {true, false}) {
    if (on && !wide) continue;
    FieldArithmetic::set_wide_vectors(on);
    expect_matmul_rows_are_the_rings_sums();
  }
  FieldArithmetic::set_wide_vectors(wide);
  if (!wide) GTEST_LOG_(INFO) << "this CPU has no AVX-512F: the 8-column blocks were not run";
}

TEST(FieldArithmetic, ExpAndMaxLaws) {
  const FieldArithmetic f(2);
  for (uint64_t i = 0; i < 1000; ++i) {
    const FieldValue a = f.random(3, 3 * i), b = f.random(3, 3 * i + 1), c = f.random(3, 3 * i + 2);
    ASSERT_EQ(f.exp(f.add(a, b)), f.mul(f.exp(a), f.exp(b)));
    ASSERT_EQ(f.max(a, b), f.max(b, a));
    ASSERT_EQ(f.max(f.max(a, b), c), f.max(a, f.max(b, c)));
    ASSERT_EQ(f.max(a, f.max_identity()), a);
    ASSERT_EQ(f.sqrt(f.mul(a, b)), f.mul(f.sqrt(a), f.sqrt(b)));
    // Quotients by alternating divisors (div remembers the last divisor's inverses).
    if (b.p != 0 && b.q != 0 && c.p != 0 && c.q != 0) {
      ASSERT_EQ(f.div(f.mul(a, b), b), a);
      ASSERT_EQ(f.div(f.mul(a, c), c), a);
      ASSERT_EQ(f.div(f.mul(c, b), b), c);
    }
  }
  EXPECT_EQ(f.exp(f.zero()), (FieldValue{1, FieldArithmetic::kUnknownQ}));
  EXPECT_THROW(f.exp(f.exp(f.zero())), Error);
}

}  // namespace
}  // namespace yirage::verify
