#include "ir/kernel_graph.hpp"

#include <gtest/gtest.h>

#include "testing/test_support.hpp"

#include <cmath>

#include "util/error.hpp"

namespace yirage {
namespace {

// Expects `statement` to throw yirage::Error(kInvalidArgument) whose message contains `text`.
#define EXPECT_INVALID YIRAGE_EXPECT_INVALID

TEST(KernelGraph, MatmulBroadcastsBatchDims) {
  KernelGraph g;
  const TensorId a = g.new_input({1, 4, 8, 16}, DType::kFloat16);
  const TensorId b = g.new_input({3, 1, 16, 5}, DType::kFloat16);
  const TensorId c = g.matmul(a, b);
  EXPECT_EQ(g.tensor(c).dims, (Dims{3, 4, 8, 5}));
  EXPECT_EQ(g.tensor(c).dtype, DType::kFloat16);
  EXPECT_EQ(g.operators()[static_cast<size_t>(g.tensor(c).producer)].kind, OpKind::kMatmul);
}

TEST(KernelGraph, MatmulErrorsNameTheShapes) {
  KernelGraph g;
  const TensorId a = g.new_input({16, 4096}, DType::kFloat16);
  const TensorId b = g.new_input({406, 4096}, DType::kFloat16);
  const TensorId v = g.new_input({4096}, DType::kFloat16);
  const TensorId c = g.new_input({2, 16, 4096}, DType::kFloat16);
  EXPECT_INVALID(g.matmul(a, b), "matmul: A is [16,4096], B is [406,4096]: inner dimensions 4096 and 406 differ");
  EXPECT_INVALID(g.matmul(v, v), "operands need equal rank of at least 2");
  EXPECT_INVALID(g.matmul(a, c), "operands need equal rank");
  EXPECT_INVALID(g.matmul(a, 99), "matmul: B is not a tensor of this graph");
}

TEST(KernelGraph, ElementwiseAndReductionShapes) {
  KernelGraph g;
  const TensorId x = g.new_input({4, 1, 6}, DType::kFloat32);
  const TensorId y = g.new_input({1, 5, 6}, DType::kFloat32);
  EXPECT_EQ(g.tensor(g.binary(OpKind::kPow, x, y)).dims, (Dims{4, 5, 6}));
  EXPECT_EQ(g.tensor(g.reduction(OpKind::kReduction, x, -1)).dims, (Dims{4, 1, 1}));
  EXPECT_EQ(g.tensor(g.reduction(OpKind::kReductionMax, y, 1)).dims, (Dims{1, 1, 6}));
  EXPECT_EQ(g.tensor(g.unary(OpKind::kGelu, x)).dims, (Dims{4, 1, 6}));
  EXPECT_INVALID(g.unary(OpKind::kClamp, x), "not a parameterless unary op");
  EXPECT_INVALID(g.binary(OpKind::kExp, x, y), "not a binary op");
}

TEST(KernelGraph, SoftmaxRecordsFiveOperators) {
  KernelGraph g;
  const TensorId x = g.new_input({2, 8}, DType::kFloat32);
  const TensorId s = g.softmax(x, 1);
  ASSERT_EQ(g.operators().size(), 6u);
  const OpKind expected[] = {OpKind::kInput, OpKind::kReductionMax, OpKind::kSub,
                             OpKind::kExp,   OpKind::kReduction,    OpKind::kDiv};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(g.operators()[i].kind, expected[i]);
  EXPECT_EQ(g.tensor(s).dims, (Dims{2, 8}));
}

TEST(KernelGraph, RmsNormChecksNormalizedShapeAndWeight) {
  KernelGraph g;
  const TensorId x = g.new_input({2, 3, 8}, DType::kFloat16);
  const TensorId w = g.new_input({3, 8}, DType::kFloat16);
  const TensorId wf = g.new_input({3, 8}, DType::kFloat32);
  EXPECT_EQ(g.tensor(g.rms_norm(x, {3, 8}, 1e-6, w)).dims, (Dims{2, 3, 8}));
  EXPECT_INVALID(g.rms_norm(x, {8, 3}, 0, std::nullopt), "must be non-empty and equal X's");
  EXPECT_INVALID(g.rms_norm(x, {}, 0, std::nullopt), "must be non-empty");
  EXPECT_INVALID(g.rms_norm(x, {1, 2, 3, 8}, 0, std::nullopt), "trailing dims");
  EXPECT_INVALID(g.rms_norm(x, {8}, 0, w), "weight is [3,8], normalized_shape is [8]");
  EXPECT_INVALID(g.rms_norm(x, {3, 8}, 0, wf), "X is float16, weight is float32");
}

TEST(KernelGraph, ConcatAndSplit) {
  KernelGraph g;
  const TensorId a = g.new_input({2, 3}, DType::kFloat32);
  const TensorId b = g.new_input({2, 5}, DType::kFloat32);
  const TensorId c = g.concat(a, b, -1);
  EXPECT_EQ(g.tensor(c).dims, (Dims{2, 8}));
  const std::vector<TensorId> parts = g.split(c, 1, {1, 7});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(g.tensor(parts[1]).dims, (Dims{2, 7}));
  EXPECT_EQ(g.tensor(parts[0]).producer, g.tensor(parts[1]).producer);
  EXPECT_INVALID(g.concat(a, b, 0), "every dim except 0 must be equal");
  EXPECT_INVALID(g.split(c, 1, {4, 5}), "sizes must be >= 1 and sum to 8");
  EXPECT_INVALID(g.split(c, 1, {8, 0}), "sizes must be >= 1");
}

TEST(KernelGraph, ReshapeKeepsTheElementCount) {
  KernelGraph g;
  const TensorId x = g.new_input({4, 6}, DType::kFloat16);
  EXPECT_EQ(g.tensor(g.reshape(x, {2, 3, 4})).dims, (Dims{2, 3, 4}));
  const TensorId inferred = g.reshape(x, {3, -1});
  EXPECT_EQ(g.tensor(inferred).dims, (Dims{3, 8}));
  EXPECT_EQ(g.operators().back().kind, OpKind::kReshape);
  EXPECT_EQ(g.operators().back().attributes.sizes, (Dims{3, 8}));
  const size_t ops = g.operators().size();
  EXPECT_INVALID(g.reshape(x, {5, 5}), "reshape: X is [4,6] (24 elements), shape [5,5]: it holds more than 24");
  EXPECT_INVALID(g.reshape(x, {5, 4}), "shape [5,4]: it holds 20 elements");
  EXPECT_INVALID(g.reshape(x, {5, -1}), "shape [5,-1]: no size of dim 1 makes 24 elements");
  EXPECT_INVALID(g.reshape(x, {-1, -1}), "dim 1 is -1 (dims must be >= 1; one may be -1)");
  EXPECT_INVALID(g.reshape(x, {24, 0}), "dim 1 is 0");
  EXPECT_INVALID(g.reshape(x, {}), "rank 0 is outside 1..6");
  EXPECT_EQ(g.operators().size(), ops);
}

TEST(KernelGraph, PermuteAndTranspose) {
  KernelGraph g;
  const TensorId x = g.new_input({2, 3, 4}, DType::kBFloat16);
  const TensorId p = g.permute(x, {2, 0, -2});
  EXPECT_EQ(g.tensor(p).dims, (Dims{4, 2, 3}));
  EXPECT_EQ(g.operators().back().attributes.sizes, (Dims{2, 0, 1}));
  const TensorId t = g.transpose(x, -1, 0);
  EXPECT_EQ(g.tensor(t).dims, (Dims{4, 3, 2}));
  EXPECT_EQ(g.operators().back().kind, OpKind::kPermute);
  EXPECT_EQ(g.operators().back().attributes.sizes, (Dims{2, 1, 0}));
  const size_t ops = g.operators().size();
  EXPECT_INVALID(g.permute(x, {0, 0, 1}),
                 "permute: X is [2,3,4], dims [0,0,1]: dim 0 appears twice: not a permutation");
  EXPECT_INVALID(g.permute(x, {0, 1}), "dims [0,1]: need one entry per dim of X (3)");
  EXPECT_INVALID(g.permute(x, {0, 1, 3}), "entry 2 (3) is outside -3..2");
  EXPECT_INVALID(g.transpose(x, 0, 3), "transpose: dim 3 is out of range");
  EXPECT_EQ(g.operators().size(), ops);
}

TEST(KernelGraph, FailedBuildsLeaveTheGraphUnchanged) {
  KernelGraph g;
  const TensorId x = g.new_input({4, 4}, DType::kFloat32);
  const size_t ops = g.operators().size(), tensors = g.num_tensors();
  EXPECT_INVALID(g.softmax(x, 3), "softmax: dim 3 is out of range");
  EXPECT_INVALID(g.new_input({4, 0}, DType::kFloat32), "dim 1 is 0");
  EXPECT_INVALID(g.new_input({1 << 20, 1 << 20, 1 << 20}, DType::kFloat32), "2^56");
  EXPECT_INVALID(g.new_input({1, 1, 1, 1, 1, 1, 1}, DType::kFloat32), "rank 7 is outside 1..6");
  EXPECT_INVALID(g.new_input({4}, static_cast<DType>(42)), "dtype 42");
  EXPECT_INVALID(g.clamp(x, 2, 1), "clamp: bounds");
  EXPECT_INVALID(g.mul_scalar(x, NAN), "mul_scalar: scalar");
  EXPECT_INVALID(g.mark_output(x), "is a graph input");
  EXPECT_EQ(g.operators().size(), ops);
  EXPECT_EQ(g.num_tensors(), tensors);
  EXPECT_EQ(g.inputs().size(), 1u);
}

TEST(KernelGraph, CheckpointRollback) {
  KernelGraph g;
  const TensorId x = g.new_input({4}, DType::kFloat32);
  const auto checkpoint = g.checkpoint();
  g.mark_output(g.softmax(x, 0));
  g.new_input({2}, DType::kFloat32);
  g.rollback(checkpoint);
  EXPECT_EQ(g.operators().size(), 1u);
  EXPECT_EQ(g.num_tensors(), 1u);
  EXPECT_TRUE(g.outputs().empty());
  EXPECT_EQ(g.inputs().size(), 1u);
}

TEST(KernelGraph, MarkOutputOnce) {
  KernelGraph g;
  const TensorId y = g.unary(OpKind::kExp, g.new_input({3}, DType::kFloat32));
  g.mark_output(y);
  EXPECT_INVALID(g.mark_output(y), "already an output");
  EXPECT_EQ(g.outputs(), (std::vector<TensorId>{y}));
}

}  // namespace
}  // namespace yirage
