#include "ir/block_graph.hpp"

#include <gtest/gtest.h>

#include "testing/test_support.hpp"

#include <cmath>
#include <random>

#include "ir/kernel_graph.hpp"
#include "reference/executor.hpp"
#include "util/error.hpp"
#include "verify/equivalence.hpp"

namespace yirage {
namespace {

#define EXPECT_INVALID YIRAGE_EXPECT_INVALID

BlockGraphConfig config(int64_t gx, int64_t gy, int64_t forloop) {
  BlockGraphConfig c;
  c.grid = {gx, gy, 1};
  c.block_threads = 128;
  c.forloop_range = forloop;
  return c;
}

TEST(BlockGraph, ConfigIsValidated) {
  BlockGraphConfig c = config(0, 1, 1);
  EXPECT_INVALID(BlockGraph{c}, "every grid dim must be >= 1");
  c = config(1, 1, 0);
  EXPECT_INVALID(BlockGraph{c}, "forloop_range 0");
  c = config(1, 1, 1);
  c.block_threads = 2048;
  c.max_threads_per_block = 1024;
  EXPECT_INVALID(BlockGraph{c}, "block_threads 2048 must be >= 1 and at most 1024");
}

TEST(BlockGraph, InputTilesFollowImapAndFmap) {
  BlockGraph bg(config(4, 2, 8));
  const TensorId t = bg.new_input({16, 64, 32}, DType::kFloat16, {0, 2, -1}, 1);
  EXPECT_EQ(bg.tensor(t).dims, (Dims{4, 8, 16}));
  EXPECT_EQ(bg.tensor(t).phase, LoopPhase::kPerIteration);
  const TensorId r = bg.new_input({16, 64}, DType::kFloat16, {-1, -1, -1}, -1);
  EXPECT_EQ(bg.tensor(r).dims, (Dims{16, 64}));
  EXPECT_EQ(bg.tensor(r).phase, LoopPhase::kInvariant);
  // The same dim split by the grid and then by the loop.
  const TensorId n = bg.new_input({64, 8}, DType::kFloat16, {0, -1, -1}, 0);
  EXPECT_EQ(bg.tensor(n).dims, (Dims{2, 8}));
}

TEST(BlockGraph, InputErrors) {
  BlockGraph bg(config(3, 1, 4));
  // Parts that do not divide a dim are ragged (below), but never empty.
  EXPECT_INVALID(bg.new_input({4, 64}, DType::kFloat16, {0, -1, -1}, -1),
                 "block new_input: dim 0 of [4,64] (4) cannot be split into 3 parts (grid.x = 3): parts of 2 would "
                 "leave the last ones empty");
  EXPECT_INVALID(bg.new_input({12, 6}, DType::kFloat16, {0, -1, -1}, 1),
                 "dim 1 of [12,6] (6) cannot be split into 4 parts (forloop_range 4): parts of 2");
  EXPECT_INVALID(bg.new_input({12, 10}, DType::kFloat16, {1, -1, -1}, 1),
                 "dim 1 of [12,10] (10) cannot be split into 12 parts (grid.x = 3 and forloop_range 4)");
  EXPECT_INVALID(bg.new_input({12, 8}, DType::kFloat16, {0, 1, -1}, -1), "imap.y = 1 but grid.y has one block");
  EXPECT_INVALID(bg.new_input({12, 8}, DType::kFloat16, {2, -1, -1}, -1), "imap.x = 2 is not -1 or a dim of [12,8]");
  EXPECT_INVALID(bg.new_input({12, 8}, DType::kFloat16, {0, -1, -1}, 5), "fmap 5");
  BlockGraph two(config(2, 2, 1));
  EXPECT_INVALID(two.new_input({4, 4}, DType::kFloat16, {1, 1, -1}, -1),
                 "imap maps grid axes x and y to the same dim 1");
  EXPECT_EQ(bg.num_tensors(), 0u);
}

TEST(BlockGraph, PhasesDoNotMix) {
  BlockGraph bg(config(1, 1, 4));
  const TensorId x = bg.new_input({8, 64}, DType::kFloat32, kReplicated, 1);
  const TensorId inv = bg.new_input({8, 16}, DType::kFloat32, kReplicated, -1);
  const TensorId acc = bg.accumulate(OpKind::kAccumSum, x);
  EXPECT_EQ(bg.tensor(acc).phase, LoopPhase::kAfterLoop);
  EXPECT_INVALID(bg.binary(OpKind::kAdd, x, acc),
                 "add: cannot combine a per-iteration tensor with an after-loop tensor");
  EXPECT_EQ(bg.tensor(bg.binary(OpKind::kAdd, acc, inv)).phase, LoopPhase::kAfterLoop);
  EXPECT_EQ(bg.tensor(bg.binary(OpKind::kAdd, x, inv)).phase, LoopPhase::kPerIteration);
  EXPECT_INVALID(bg.accumulate(OpKind::kAccumSum, acc), "X is an after-loop tensor");
  EXPECT_INVALID(bg.accumulate(OpKind::kAccumRescale, x), "not a single-input accumulator");
  EXPECT_EQ(bg.tensor(bg.accumulate(OpKind::kAccumReduceMean, x)).dims, (Dims{8, 1}));
}

TEST(BlockGraph, SumToDimxFoldsTheLastDim) {
  BlockGraph bg(config(1, 1, 4));
  const TensorId x = bg.new_input({8, 64}, DType::kFloat16, kReplicated, 1);  // tile [8, 16]
  const TensorId acc = bg.accumulate_to_dimx(x, 4);
  EXPECT_EQ(bg.tensor(acc).dims, (Dims{8, 4}));
  EXPECT_EQ(bg.tensor(acc).phase, LoopPhase::kAfterLoop);
  EXPECT_EQ(bg.operators().back().attributes.sizes, (Dims{4}));
  EXPECT_INVALID(bg.accumulate_to_dimx(x, 5), "accum_sum_todimx: X is [8,16]: dimx 5 must be >= 1 and divide");
  EXPECT_INVALID(bg.accumulate_to_dimx(x, 0), "dimx 0 must be >= 1");
  EXPECT_INVALID(bg.accumulate_to_dimx(acc, 4), "X is an after-loop tensor");
  EXPECT_INVALID(bg.accumulate(OpKind::kAccumSumToDimx, x), "needs its dimx: use accumulate_to_dimx");
  EXPECT_EQ(bg.operators().size(), 2u);
}

// The rms accumulator takes rms_norm's eps (sqrt(Σ x² / n + eps)); no other accumulator takes one,
// and a refused eps adds nothing.
TEST(BlockGraph, OnlyTheRmsAccumulatorTakesAnEps) {
  BlockGraph bg(config(1, 1, 4));
  const TensorId x = bg.new_input({8, 64}, DType::kFloat16, kReplicated, 1);
  const TensorId rms = bg.accumulate(OpKind::kAccumReduceRms, x, 1e-6);
  EXPECT_EQ(bg.tensor(rms).dims, (Dims{8, 1}));
  EXPECT_EQ(bg.operators().back().attributes.eps, 1e-6);
  EXPECT_INVALID(bg.accumulate(OpKind::kAccumReduceRms, x, -1e-6), "accum_reduce_rms: eps -0.000001 must be finite");
  EXPECT_INVALID(bg.accumulate(OpKind::kAccumReduceRms, x, std::nan("")), "must be finite and >= 0");
  EXPECT_INVALID(bg.accumulate(OpKind::kAccumSum, x, 1e-6), "accum_sum: only accum_reduce_rms takes an eps");
  EXPECT_EQ(bg.operators().size(), 2u);
}

// A loop that only adds up its input tiles (a split loop's sum of parts), and ones that do more.
TEST(BlockGraph, LoopsThatOnlySumTheirInputs) {
  BlockGraph sums(config(1, 1, 4));
  const TensorId o = sums.accumulate(OpKind::kAccumSum, sums.new_input({8, 64}, DType::kFloat32, kReplicated, 1));
  const TensorId l = sums.accumulate(OpKind::kAccumSum, sums.new_input({8, 4}, DType::kFloat32, kReplicated, 1));
  sums.new_output(sums.binary(OpKind::kDiv, o, sums.reduction(OpKind::kReduction, l, 1)), kReplicated, -1);
  EXPECT_TRUE(sums.loop_only_sums_inputs());

  BlockGraph computes(config(1, 1, 4));
  const TensorId x = computes.new_input({8, 64}, DType::kFloat32, kReplicated, 1);
  computes.new_output(computes.accumulate(OpKind::kAccumSum, computes.unary(OpKind::kExp, x)), kReplicated, -1);
  EXPECT_FALSE(computes.loop_only_sums_inputs()) << "exp in the loop";

  BlockGraph twice(config(1, 1, 4));
  const TensorId y = twice.new_input({8, 64}, DType::kFloat32, kReplicated, 1);
  twice.new_output(
      twice.binary(OpKind::kAdd, twice.accumulate(OpKind::kAccumSum, y), twice.accumulate(OpKind::kAccumMax, y)),
      kReplicated, -1);
  EXPECT_FALSE(twice.loop_only_sums_inputs()) << "a tile read by two accumulators, one a max";
}

TEST(BlockGraph, OutputErrors) {
  BlockGraph bg(config(4, 1, 2));
  const TensorId x = bg.new_input({8, 64}, DType::kFloat32, {0, -1, -1}, 1);
  const TensorId acc = bg.accumulate(OpKind::kAccumSum, x);
  EXPECT_INVALID(bg.new_output(acc, kReplicated, -1),
                 "grid.x has 4 blocks but omap.x is -1: the blocks would write overlapping tiles");
  EXPECT_INVALID(bg.new_output(acc, {0, -1, -1}, 1), "forloop_dim 1 must be -1");
  EXPECT_INVALID(bg.new_output(x, {0, -1, -1}, -1), "must name a dim of the per-iteration tile");
  EXPECT_INVALID(bg.new_output(x, {1, -1, -1}, 1), "omap.x and forloop_dim both name dim 1");
  bg.new_output(x, {0, -1, -1}, 1);
  bg.new_output(acc, {1, -1, -1}, -1);
  ASSERT_EQ(bg.operator_indices(OpKind::kOutputSaver).size(), 2u);
  EXPECT_EQ(bg.operators()[static_cast<size_t>(bg.operator_indices(OpKind::kOutputSaver)[0])].attributes.sizes,
            (Dims{8, 64}));
  EXPECT_EQ(bg.operators()[static_cast<size_t>(bg.operator_indices(OpKind::kOutputSaver)[1])].attributes.sizes,
            (Dims{2, 128}));
}

// A saver writes its tile's dtype unless told another; the customized operator's outputs take
// what the savers write, one dtype for all of them.
TEST(BlockGraph, OutputDTypes) {
  auto bg = std::make_shared<BlockGraph>(config(1, 1, 2));
  const TensorId x = bg->new_input({4, 8}, DType::kFloat16, kReplicated, 1);
  const TensorId sum = bg->accumulate(OpKind::kAccumSum, x);
  EXPECT_INVALID(bg->new_output(sum, kReplicated, -1, static_cast<DType>(7)), "dtype 7 is not a yirage_dtype");
  EXPECT_EQ(bg->operator_indices(OpKind::kOutputSaver).size(), 0u);
  bg->new_output(sum, kReplicated, -1, DType::kFloat32);
  KernelGraph g;
  const TensorId in = g.new_input({4, 8}, DType::kFloat16);
  EXPECT_EQ(g.tensor(g.customized({in}, bg)[0]).dtype, DType::kFloat32);
  bg->new_output(bg->accumulate(OpKind::kAccumReduceSum, x), kReplicated, -1);  // float16, its tile's
  EXPECT_INVALID(g.customized({in}, bg), "customized: the block graph's outputs are written in different dtypes");
}

TEST(BlockGraph, SharedMemoryLimit) {
  BlockGraphConfig c = config(1, 1, 1);
  c.shared_memory_limit = 4000;
  BlockGraph bg(c);
  const TensorId x = bg.new_input({32, 32}, DType::kFloat16, kReplicated, -1);  // 2048 bytes
  EXPECT_EQ(bg.shared_memory_bytes(), 2048);
  EXPECT_INVALID(bg.matmul(x, x),
                 "matmul: the block graph would use 4096 bytes of shared memory, over the limit "
                 "of 4000");
  EXPECT_EQ(bg.num_tensors(), 1u);
  EXPECT_INVALID(bg.accumulate(OpKind::kAccumSum, x), "over the limit");  // 4 bytes per element
}

TEST(KernelGraph, CustomizedChecksInputs) {
  auto bg = std::make_shared<BlockGraph>(config(1, 1, 1));
  const TensorId t = bg->new_input({4, 8}, DType::kFloat32, kReplicated, -1);
  KernelGraph g;
  const TensorId wrong = g.new_input({8, 4}, DType::kFloat32);
  const TensorId right = g.new_input({4, 8}, DType::kFloat32);
  EXPECT_INVALID(g.customized({right}, bg), "customized: the block graph has no outputs");
  bg->new_output(bg->unary(OpKind::kExp, t), kReplicated, -1);
  EXPECT_INVALID(g.customized({wrong}, bg),
                 "customized: input 0 is [8,4] float32; the block graph reads [4,8] float32");
  EXPECT_INVALID(g.customized({}, bg), "the block graph has 1 inputs, 0 tensors were given");
  const std::vector<TensorId> outs = g.customized({right}, bg);
  EXPECT_EQ(g.tensor(outs[0]).dims, (Dims{4, 8}));
}

// Reference checks of the accumulators the benchmark µGraphs do not use, each against an
// unfused kernel graph computing the same function.
void expect_same_function(const KernelGraph &a, const KernelGraph &b) {
  const auto inputs = testing::random_inputs(a, 99, -2, 2);
  const reference::Values x = reference::evaluate(a, inputs)[0];
  const reference::Values y = reference::evaluate(b, inputs)[0];
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], y[i], 1e-12 * (1 + std::fabs(x[i])));
  // The fingerprint must agree: these rewrites hold exactly in its arithmetic too.
  const verify::EquivalenceResult r = verify::check_equivalence(a, b, {3, 1, 1});
  EXPECT_TRUE(r.equivalent) << r.reason;
}

TEST(BlockGraphSemantics, MaxAndMeanAccumulators) {
  // Row max and row mean of X [8, 64] over 4 iterations of 16 columns, as one output [8, 2].
  KernelGraph plain;
  {
    const TensorId x = plain.new_input({8, 64}, DType::kFloat32);
    const TensorId max = plain.reduction(OpKind::kReductionMax, x, 1);
    const TensorId mean = plain.mul_scalar(plain.reduction(OpKind::kReduction, x, 1), 1.0 / 64);
    plain.mark_output(plain.concat(max, mean, 1));
  }
  KernelGraph fused;
  {
    const TensorId x = fused.new_input({8, 64}, DType::kFloat32);
    auto bg = std::make_shared<BlockGraph>(config(1, 1, 4));
    const TensorId xt = bg->new_input({8, 64}, DType::kFloat32, kReplicated, 1);
    const TensorId max = bg->reduction(OpKind::kReductionMax, bg->accumulate(OpKind::kAccumMax, xt), 1);
    const TensorId mean = bg->accumulate(OpKind::kAccumReduceMean, xt);
    bg->new_output(bg->concat(max, mean, 1), kReplicated, -1);
    fused.mark_output(fused.customized({x}, bg)[0]);
  }
  expect_same_function(plain, fused);
}

// Mirage's sum_todimx adds the last dim's slices of dimx (not groups of neighbours): X [8, 64]
// over 2 iterations of 32 columns, folded to 8, is the sum of X's eight column slices of 8.
TEST(BlockGraphSemantics, SumToDimxAddsSlices) {
  KernelGraph plain;
  {
    const TensorId x = plain.new_input({8, 64}, DType::kFloat32);
    const std::vector<TensorId> parts = plain.split(x, 1, Dims(8, 8));
    TensorId sum = parts[0];
    for (size_t k = 1; k < parts.size(); ++k) sum = plain.binary(OpKind::kAdd, sum, parts[k]);
    plain.mark_output(sum);
  }
  KernelGraph fused;
  {
    const TensorId x = fused.new_input({8, 64}, DType::kFloat32);
    auto bg = std::make_shared<BlockGraph>(config(2, 1, 2));
    const TensorId xt = bg->new_input({8, 64}, DType::kFloat32, {0, -1, -1}, 1);
    bg->new_output(bg->accumulate_to_dimx(xt, 8), {0, -1, -1}, -1);
    fused.mark_output(fused.customized({x}, bg)[0]);
  }
  expect_same_function(plain, fused);
}

TEST(BlockGraphSemantics, PerIterationOutputsTileTheLoop) {
  // exp(X) written tile by tile from inside the loop, blocks over rows.
  KernelGraph plain;
  plain.mark_output(plain.unary(OpKind::kExp, plain.new_input({4, 32}, DType::kFloat32)));
  KernelGraph fused;
  {
    const TensorId x = fused.new_input({4, 32}, DType::kFloat32);
    auto bg = std::make_shared<BlockGraph>(config(2, 1, 4));
    const TensorId xt = bg->new_input({4, 32}, DType::kFloat32, {0, -1, -1}, 1);
    bg->new_output(bg->unary(OpKind::kExp, xt), {0, -1, -1}, 1);
    fused.mark_output(fused.customized({x}, bg)[0]);
  }
  expect_same_function(plain, fused);
}

// Ragged tiles: what they compute is tested on benchmarks/graphs/ragged_graphs.hpp's graphs
// (benchmark_ugraphs_test.cpp and the conformance suite); here, what they refuse.
TEST(BlockGraph, RaggedTilesAreWholeGroupsWhereThePartsAllowIt) {
  EXPECT_EQ(ragged_tile_length(4096, 16), 256);  // parts that divide: unchanged
  EXPECT_EQ(ragged_tile_length(100, 4), 25);
  EXPECT_EQ(ragged_tile_length(4097, 16), 272);  // 257 → 272: the last of 16 keeps 17
  EXPECT_EQ(ragged_tile_length(1001, 16), 64);
  EXPECT_EQ(ragged_tile_length(61, 4), 16);
  EXPECT_EQ(ragged_tile_length(13, 2), 8);      // 16 would leave the second part empty
  EXPECT_EQ(ragged_tile_length(3583, 64), 56);  // 64 would too, and 56 is whole eights
  EXPECT_EQ(ragged_tile_length(15, 2), 8);
  EXPECT_EQ(ragged_tile_length(7, 2), 4);  // no multiple of 8 leaves a second part
  BlockGraph bg(config(2, 1, 1));
  EXPECT_EQ(bg.tensor(bg.new_input({3, 4097}, DType::kFloat16, {1, -1, -1}, -1)).dims, (Dims{3, 2064}));
  BlockGraph looped(config(1, 1, 16));
  EXPECT_EQ(looped.tensor(looped.new_input({4097, 8}, DType::kFloat16, kReplicated, 0)).dims, (Dims{272, 8}));
}

TEST(BlockGraph, RaggedTilesRefuseWhatTheyCannotDo) {
  {  // a norm over a ragged dim: its count would differ between tiles
    BlockGraph bg(config(1, 1, 4));
    const TensorId xt = bg.new_input({4, 61}, DType::kFloat32, kReplicated, 1);
    EXPECT_INVALID(bg.new_output(bg.rms_norm(xt, {16}, 0, std::nullopt), kReplicated, 1),
                   "rms_norm: it normalizes over dim 1, which is ragged (tiles of 16 over 61 elements)");
  }
  {  // a norm's weight split raggedly (its absent elements would reach present results)
    BlockGraph bg(config(2, 1, 2));
    const TensorId wt = bg.new_input({7}, DType::kFloat32, {0, -1, -1}, -1);
    const TensorId xt = bg.new_input({2, 8}, DType::kFloat32, {0, -1, -1}, 1);
    EXPECT_INVALID(bg.new_output(bg.rms_norm(xt, {4}, 0, wt), {0, -1, -1}, 1),
                   "rms_norm: its weight is ragged (tiles of 4 over 7 elements)");
  }
  {  // a mean over a last dim the blocks split raggedly
    BlockGraph bg(config(2, 1, 1));
    const TensorId xt = bg.new_input({4, 61}, DType::kFloat32, {1, -1, -1}, -1);
    EXPECT_INVALID(bg.new_output(bg.accumulate(OpKind::kAccumReduceMean, xt), {1, -1, -1}, -1),
                   "accum_reduce_mean: its last dim is ragged across the blocks");
  }
  {  // an after-loop tile of a dim both the grid and the loop split, saved block by block
    BlockGraph bg(config(2, 1, 4));
    const TensorId xt = bg.new_input({4, 61}, DType::kFloat32, {1, -1, -1}, 1);
    EXPECT_INVALID(bg.new_output(bg.accumulate(OpKind::kAccumSum, xt), {1, -1, -1}, -1),
                   "block new_output: dim 1 of the tile [4,8] is ragged (tiles of 8 over 61)");
  }
}

}  // namespace
}  // namespace yirage
