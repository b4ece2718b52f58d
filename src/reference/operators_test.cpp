#include "reference/operators.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "reference/executor.hpp"
#include "reference/float64_arithmetic.hpp"
#include "util/error.hpp"

namespace yirage::reference {
namespace {

const Float64Arithmetic f64;

TEST(ReferenceOperators, UnaryValues) {
  const OpAttributes none;
  EXPECT_DOUBLE_EQ(f64.unary(OpKind::kGelu, none, 1.0), 0.8413447460685429);
  EXPECT_DOUBLE_EQ(f64.unary(OpKind::kSilu, none, 1.0), 0.7310585786300049);
  EXPECT_DOUBLE_EQ(f64.unary(OpKind::kSigmoid, none, 0.0), 0.5);
  EXPECT_EQ(f64.unary(OpKind::kRelu, none, -3.0), 0.0);
  EXPECT_EQ(f64.unary(OpKind::kSquare, none, -3.0), 9.0);
  EXPECT_EQ(f64.unary(OpKind::kNeg, none, 2.0), -2.0);
  EXPECT_TRUE(std::isnan(f64.unary(OpKind::kSqrt, none, -1.0)));
  EXPECT_EQ(f64.unary(OpKind::kLog, none, 0.0), -INFINITY);
  OpAttributes clamp;
  clamp.lo = -1;
  clamp.hi = 2;
  EXPECT_EQ(f64.unary(OpKind::kClamp, clamp, 5.0), 2.0);
  EXPECT_EQ(f64.unary(OpKind::kClamp, clamp, -5.0), -1.0);
  OpAttributes scale;
  scale.scalar = 0.5;
  EXPECT_EQ(f64.unary(OpKind::kMulScalar, scale, 3.0), 1.5);
  EXPECT_THROW(f64.unary(OpKind::kAdd, none, 1.0), Error);
  EXPECT_THROW(f64.binary(OpKind::kExp, 1.0, 1.0), Error);
}

TEST(ReferenceOperators, BinaryBroadcast) {
  // [2,1] op [1,3] -> [2,3]
  const Values a{1, 2}, b{10, 20, 30};
  EXPECT_EQ(broadcast_binary(f64, OpKind::kAdd, a, {2, 1}, b, {1, 3}, {2, 3}), (Values{11, 21, 31, 12, 22, 32}));
  EXPECT_EQ(broadcast_binary(f64, OpKind::kSub, a, {2, 1}, b, {1, 3}, {2, 3}), (Values{-9, -19, -29, -8, -18, -28}));
  EXPECT_EQ(broadcast_binary(f64, OpKind::kPow, Values{2, 3}, {2, 1}, Values{2}, {1, 1}, {2, 1}), (Values{4, 9}));
  EXPECT_EQ(broadcast_binary(f64, OpKind::kMax, Values{1, 5}, {2}, Values{3, 4}, {2}, {2}), (Values{3, 5}));
  EXPECT_TRUE(std::isnan(f64.binary(OpKind::kMax, NAN, 1.0)));
}

TEST(ReferenceOperators, MatmulWithBatchBroadcast) {
  // A [1,2,2] shared across B's batch of 2.
  const Values a{1, 2, 3, 4};
  const Values b{1, 0, 0, 1, /* identity */ 0, 1, 1, 0 /* swap */};
  EXPECT_EQ(matmul(f64, a, {1, 2, 2}, b, {2, 2, 2}, {2, 2, 2}), (Values{1, 2, 3, 4, 2, 1, 4, 3}));
  // [2,3]·[3,1]
  EXPECT_EQ(matmul(f64, Values{1, 2, 3, 4, 5, 6}, {2, 3}, Values{1, 1, 1}, {3, 1}, {2, 1}), (Values{6, 15}));
}

TEST(ReferenceOperators, Reductions) {
  const Values x{1, 7, 3, 4, 5, 2};  // [2,3]
  EXPECT_EQ(reduce(f64, OpKind::kReduction, x, {2, 3}, 0), (Values{5, 12, 5}));
  EXPECT_EQ(reduce(f64, OpKind::kReduction, x, {2, 3}, 1), (Values{11, 11}));
  EXPECT_EQ(reduce(f64, OpKind::kReductionMax, x, {2, 3}, 1), (Values{7, 5}));
  EXPECT_EQ(reduce(f64, OpKind::kReductionMax, Values{-3, -8}, {2}, 0), (Values{-3}));
}

TEST(ReferenceOperators, RmsNorm) {
  const Values x{3, 4, 0, 0};  // rows [3,4] and [0,0]
  const Values w{1, 2};
  const Values y = rms_norm(f64, x, {2, 2}, 1, 0.0, &w);
  const double rms = std::sqrt(12.5);
  EXPECT_DOUBLE_EQ(y[0], 3 / rms);
  EXPECT_DOUBLE_EQ(y[1], 2 * 4 / rms);
  EXPECT_TRUE(std::isnan(y[2]));  // 0 / sqrt(0 + eps) with eps = 0
  const Values z = rms_norm(f64, x, {2, 2}, 1, 1.0, static_cast<const Values *>(nullptr));
  EXPECT_DOUBLE_EQ(z[3], 0.0);
  // Normalizing over both dims: mean of squares over 4 values.
  EXPECT_DOUBLE_EQ(rms_norm(f64, x, {2, 2}, 2, 0.0, static_cast<const Values *>(nullptr))[0], 3 / std::sqrt(25.0 / 4));
}

TEST(ReferenceOperators, ConcatAndSplitAreInverse) {
  const Values a{1, 2, 3, 4};         // [2,2]
  const Values b{5, 6, 7, 8, 9, 10};  // [2,3]
  const Values c = concat(a, {2, 2}, b, {2, 3}, 1);
  EXPECT_EQ(c, (Values{1, 2, 5, 6, 7, 3, 4, 8, 9, 10}));
  const std::vector<Values> parts = split(c, {2, 5}, 1, {2, 3});
  EXPECT_EQ(parts[0], a);
  EXPECT_EQ(parts[1], b);
  EXPECT_EQ(concat(a, {2, 2}, a, {2, 2}, 0), (Values{1, 2, 3, 4, 1, 2, 3, 4}));
}

TEST(ReferenceOperators, PermuteReordersDims) {
  const Values x{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  // [2,3,2]: x[i][j][k] = 6i + 2j + k
  EXPECT_EQ(permute(x, {2, 3, 2}, {2, 0, 1}), (Values{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(permute(x, {2, 3, 2}, {1, 0, 2}), (Values{0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11}));
  EXPECT_EQ(permute(x, {2, 3, 2}, {0, 1, 2}), x);
}

// A [T, H·D] projection split into heads: reshape to [T, H, D], then [H, T, D].
TEST(ReferenceExecutor, ReshapeThenTransposeSplitsHeads) {
  KernelGraph g;
  const TensorId x = g.new_input({2, 4}, DType::kFloat32);  // T = 2, H = 2, D = 2
  g.mark_output(g.transpose(g.reshape(x, {2, 2, 2}), 0, 1));
  const std::vector<Values> out = evaluate(g, {Values{0, 1, 2, 3, 4, 5, 6, 7}});
  EXPECT_EQ(out[0], (Values{0, 1, 4, 5, 2, 3, 6, 7}));
}

TEST(ReferenceExecutor, EvaluatesSoftmaxGraph) {
  KernelGraph g;
  const TensorId x = g.new_input({2, 3}, DType::kFloat32);
  g.mark_output(g.softmax(x, 1));
  const std::vector<Values> out = evaluate(g, {Values{1, 2, 3, 1000, 1000, 1000}});
  ASSERT_EQ(out.size(), 1u);
  const double total = std::exp(1) + std::exp(2) + std::exp(3);
  EXPECT_DOUBLE_EQ(out[0][0], std::exp(1) / total);
  EXPECT_DOUBLE_EQ(out[0][4], 1.0 / 3);  // max-subtraction keeps large inputs finite
}

TEST(ReferenceExecutor, MultipleOutputsAndSplit) {
  KernelGraph g;
  const TensorId x = g.new_input({4}, DType::kFloat32);
  const auto parts = g.split(x, 0, {1, 3});
  g.mark_output(g.unary(OpKind::kNeg, parts[1]));
  g.mark_output(g.mul_scalar(parts[0], 2));
  const std::vector<Values> out = evaluate(g, {Values{1, 2, 3, 4}});
  EXPECT_EQ(out[0], (Values{-2, -3, -4}));
  EXPECT_EQ(out[1], (Values{2}));
}

TEST(ReferenceExecutor, RejectsWrongInputs) {
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.new_input({4}, DType::kFloat32)));
  EXPECT_THROW(evaluate(g, {}), Error);
  EXPECT_THROW(evaluate(g, {Values{1, 2}}), Error);
}

// exp(x)·x / Σ: exp(12) = 162755 is past float16's 65504, not bfloat16's or float32's.
TEST(ReferenceExecutor, FindsTheFirstTensorOutOfItsDtypesRange) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    KernelGraph g;
    const TensorId x = g.new_input({2, 2}, dtype);
    const TensorId e = g.unary(OpKind::kExp, x);
    const TensorId p = g.binary(OpKind::kMul, e, x);
    g.mark_output(p);
    g.mark_output(g.binary(OpKind::kDiv, p, g.reduction(OpKind::kReduction, p, 1)));
    std::vector<double> largest;
    (void)evaluate(g, {Values{1, 2, 3, 4}}, 0, &largest);
    ASSERT_EQ(largest.size(), g.num_tensors());
    EXPECT_DOUBLE_EQ(largest[static_cast<size_t>(e)], std::exp(4.0));
    EXPECT_FALSE(first_out_of_range(g, largest)) << dtype_name(dtype);
    (void)evaluate(g, {Values{1, 2, 3, 12}}, 0, &largest);
    const std::optional<OutOfRange> big = first_out_of_range(g, largest);
    if (dtype != DType::kFloat16) {
      EXPECT_FALSE(big) << dtype_name(dtype);
      continue;
    }
    ASSERT_TRUE(big);
    EXPECT_EQ(big->tensor, e);  // the first in operator order, not the output it feeds
    EXPECT_EQ(g.operators()[big->op].kind, OpKind::kExp);
    EXPECT_DOUBLE_EQ(big->magnitude, std::exp(12.0));
    EXPECT_EQ(big->largest, 65504.0);
  }
  // Infinities and NaNs are not magnitudes (the reference's own overflow of float64 is not what
  // this finds): log(0) = -inf in a float16 tensor leaves it in range.
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kLog, g.new_input({3}, DType::kFloat16)));
  std::vector<double> largest;
  (void)evaluate(g, {Values{0, 1, 0.5}}, 0, &largest);
  EXPECT_FALSE(first_out_of_range(g, largest));
}

// evaluate_stored rounds every operator's outputs to their dtype before the next reads them:
// (x + y) − x in float16 with x = 1, y = 2^-12 loses y (1 + 2^-12 rounds to 1; ties to even),
// in float32 keeps it; evaluate keeps it in both. Arithmetic within one operator stays float64
// (the sum of 2^-12 sixteen times, 2^-8, is exact in one reduction).
TEST(ReferenceExecutor, StoredEvaluationRoundsEachTensorToItsDtype) {
  for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
    KernelGraph g;
    const TensorId x = g.new_input({1}, dtype), y = g.new_input({1}, dtype);
    g.mark_output(g.binary(OpKind::kSub, g.binary(OpKind::kAdd, x, y), x));
    const std::vector<Values> inputs{Values{1.0}, Values{0x1p-12}};
    EXPECT_EQ(evaluate(g, inputs)[0], Values{0x1p-12});
    EXPECT_EQ(evaluate_stored(g, inputs)[0], Values{dtype == DType::kFloat16 ? 0.0 : 0x1p-12}) << dtype_name(dtype);
  }
  KernelGraph g;
  g.mark_output(g.reduction(OpKind::kReduction, g.mul_scalar(g.new_input({16}, DType::kFloat16), 0x1p-12), 0));
  EXPECT_EQ(evaluate_stored(g, {Values(16, 1.0)})[0], Values{0x1p-8});
}

}  // namespace
}  // namespace yirage::reference
