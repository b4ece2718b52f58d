#include "search/loop_split.hpp"

#include <gtest/gtest.h>

#include "benchmark_ugraphs.hpp"
#include "ir/block_graph.hpp"
#include "ir/rebuild.hpp"
#include "ir/split_pair.hpp"
#include "serialize/graph_file.hpp"
#include "serialize/kernel_program.hpp"
#include "testing/test_support.hpp"
#include "verify/equivalence.hpp"

namespace yirage::search {
namespace {

const BlockGraph &block_graph_of(const KernelGraph &g, size_t op) {
  return *g.operators().at(op).block_graph;
}

size_t last_operator(const KernelGraph &g) {
  return g.operators().size() - 1;
}

// Attention (Q [2,64,64], K [2,64,1024], V [2,1024,64]; fused: grid 2x4, 16 iterations) split
// over 4 blocks: 16 blocks of 4 iterations write float32 partial sums of E·V and of E's rows, a
// second kernel adds the 4 parts and divides.
TEST(LoopSplit, AttentionWritesFloat32PartialSumsThatASecondKernelAddsUp) {
  const KernelGraph fused = bench::build_fused("gqa", 1, DType::kFloat16, 4);
  const BlockGraphConfig &before = block_graph_of(fused, last_operator(fused)).config();
  const std::optional<KernelGraph> split = split_loop(fused, last_operator(fused), 4);
  ASSERT_TRUE(split.has_value());
  ASSERT_EQ(split->operators().size(), fused.operators().size() + 1);

  const size_t chunks_op = last_operator(*split) - 1;
  const BlockGraph &chunks = block_graph_of(*split, chunks_op);
  EXPECT_EQ(chunks.config().grid[0], before.grid[0]);
  EXPECT_EQ(chunks.config().grid[1], before.grid[1]);
  EXPECT_EQ(chunks.config().grid[2], 4);
  EXPECT_EQ(chunks.config().forloop_range, before.forloop_range / 4);
  const Operator &chunks_op_value = split->operators()[chunks_op];
  ASSERT_EQ(chunks_op_value.outputs.size(), 2u);  // Σ E·V and Σ E over each chunk of keys
  for (TensorId partial : chunks_op_value.outputs) {
    EXPECT_EQ(split->tensor(partial).dtype, DType::kFloat32);
    EXPECT_EQ(split->tensor(partial).dims.back() % 4, 0);  // the parts along the last dim
  }
  // K and V: each block iterates over its quarter of the keys.
  for (int32_t i : chunks.operator_indices(OpKind::kInputIterator)) {
    const OpAttributes &at = chunks.operators()[static_cast<size_t>(i)].attributes;
    EXPECT_EQ(at.grid_map[2], at.forloop_dim);
  }

  const BlockGraph &total = block_graph_of(*split, last_operator(*split));
  // As many blocks as kernel 1: the fused grid with 4 times the blocks along the rows.
  EXPECT_EQ(total.config().grid, (std::array<int64_t, 3>{before.grid[0], 4 * before.grid[1], 1}));
  EXPECT_EQ(total.config().forloop_range, 4);
  EXPECT_EQ(total.operator_indices(OpKind::kAccumSum).size(), 2u);
  const TensorId out = split->outputs().at(0);
  EXPECT_EQ(split->tensor(out).dtype, DType::kFloat16);
  EXPECT_EQ(split->tensor(out).dims, fused.tensor(fused.outputs()[0]).dims);

  const KernelGraph unfused = bench::build_unfused("gqa", 1, DType::kFloat16, 4);
  EXPECT_TRUE(verify::check_equivalence(unfused, *split, {}).equivalent);
  const auto inputs = testing::random_inputs(unfused, 7);
  EXPECT_LT(testing::relative_error(reference::evaluate(*split, inputs)[0], reference::evaluate(unfused, inputs)[0]),
            1e-12);
}

// Kernel 2's grid is finer only as far as its tiles divide: 8 rows on 4 blocks split into 4
// parts leave 8 blocks of one row, not 16.
TEST(LoopSplit, TheSecondKernelsGridIsFinerWhereTheTilesDivide) {
  BlockGraphConfig config;
  config.grid = {4, 1, 1};
  config.forloop_range = 4;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId x = bg->new_input({8, 16}, DType::kFloat32, {0, -1, -1}, 1);
  bg->new_output(bg->accumulate(OpKind::kAccumSum, x), {0, -1, -1}, -1);
  KernelGraph g;
  g.mark_output(g.customized({g.new_input({8, 16}, DType::kFloat32)}, bg)[0]);
  const std::optional<KernelGraph> split = split_loop(g, 1, 4);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(block_graph_of(*split, last_operator(*split)).config().grid, (std::array<int64_t, 3>{8, 1, 1}));
  const auto inputs = testing::random_inputs(g, 3);
  EXPECT_LT(testing::relative_error(reference::evaluate(*split, inputs)[0], reference::evaluate(g, inputs)[0]), 1e-12);
}

// The gated MLP's output has rank 2 and its grid one split axis: the parts go along dim 0.
TEST(LoopSplit, GatedMlpSplitsAndStaysEquivalent) {
  const KernelGraph fused = bench::build_fused("gated_mlp", 1, DType::kBFloat16, 16);
  const std::optional<KernelGraph> split = split_loop(fused, last_operator(fused), 2);
  ASSERT_TRUE(split.has_value());
  EXPECT_TRUE(
      verify::check_equivalence(bench::build_unfused("gated_mlp", 1, DType::kBFloat16, 16), *split, {}).equivalent);
}

// The written graph records the partials' dtype and needs a reader of version 2; it loads back
// the same.
TEST(LoopSplit, SplitGraphsRoundTripThroughGraphFiles) {
  const KernelGraph fused = bench::build_fused("gqa", 1, DType::kFloat16, 4);
  const KernelGraph split = *split_loop(fused, last_operator(fused), 2);
  for (auto format : {serialize::GraphFormat::kBinary, serialize::GraphFormat::kJson}) {
    const std::vector<uint8_t> bytes = serialize::graph_to_bytes(split, format);
    const KernelGraph back = serialize::graph_from_bytes(bytes.data(), bytes.size());
    EXPECT_EQ(serialize::graph_to_bytes(back, format), bytes);
    EXPECT_EQ(back.tensor(back.operators()[last_operator(back) - 1].outputs[0]).dtype, DType::kFloat32);
  }
  const std::vector<uint8_t> json = serialize::graph_to_bytes(split, serialize::GraphFormat::kJson);
  EXPECT_NE(std::string(json.begin(), json.end()).find("\"schema_version\": 2"), std::string::npos);
  const std::vector<uint8_t> plain = serialize::graph_to_bytes(fused, serialize::GraphFormat::kJson);
  EXPECT_EQ(std::string(plain.begin(), plain.end()).find("schema_version"), std::string::npos);
}

TEST(LoopSplit, RefusesWhatItCannotSplit) {
  const KernelGraph gqa = bench::build_fused("gqa", 1, DType::kFloat16, 4);
  const int64_t range = block_graph_of(gqa, last_operator(gqa)).config().forloop_range;
  EXPECT_FALSE(split_loop(gqa, last_operator(gqa), 3));          // does not divide the loop
  EXPECT_FALSE(split_loop(gqa, last_operator(gqa), 1));          // not a split
  EXPECT_FALSE(split_loop(gqa, last_operator(gqa), 2 * range));  // more parts than iterations
  EXPECT_TRUE(split_loop(gqa, last_operator(gqa), range));       // one iteration per block
  EXPECT_FALSE(split_loop(gqa, 0, 2));                           // an input, not a customized operator
  // rms_norm's accumulator is not a sum of the chunks' values.
  const KernelGraph rms = bench::build_fused("rmsnorm_linear", 1, DType::kFloat16, 16);
  EXPECT_FALSE(split_loop(rms, last_operator(rms), 2));

  // Every grid axis in use: no axis left for the parts.
  BlockGraphConfig config;
  config.grid = {2, 2, 2};
  config.forloop_range = 4;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId x = bg->new_input({2, 2, 2, 16}, DType::kFloat32, {0, 1, 2}, 3);
  bg->new_output(bg->accumulate(OpKind::kAccumSum, x), {0, 1, 2}, -1);
  KernelGraph g;
  g.mark_output(g.customized({g.new_input({2, 2, 2, 16}, DType::kFloat32)}, bg)[0]);
  EXPECT_FALSE(split_loop(g, 1, 2));
}

}  // namespace
// What a backend running the split in one launch reads from its program (ir/split_pair.hpp): the
// parts' axis and count, the unsplit grid its counters are per tile of, the sum on that grid.
TEST(SplitPair, RecognizesTheSplitAsOneProgram) {
  const KernelGraph fused = bench::build_fused("gqa", 1, DType::kFloat16, 4);
  const BlockGraphConfig &before = block_graph_of(fused, last_operator(fused)).config();
  const std::optional<KernelGraph> split = split_loop(fused, last_operator(fused), 4);
  ASSERT_TRUE(split.has_value());
  const std::vector<size_t> ops = serialize::kernel_operators(*split);
  const serialize::GroupProgram group = serialize::make_group_program(*split, ops);
  const std::optional<SplitPair> pair = split_pair(group.program.graph);
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(pair->axis, 2);
  EXPECT_EQ(pair->parts, 4);
  EXPECT_EQ(pair->tiles, (std::array<int64_t, 3>{before.grid[0], before.grid[1], 1}));
  // The sum (on 4 times the blocks along the rows) runs on the unsplit grid, a tile a block.
  EXPECT_EQ(unsplit_sum(group.program.graph, *pair).config().grid, pair->tiles);
  // The program reads Q, K and V and writes the one output; the partial sums stay inside.
  EXPECT_EQ(group.inputs, split->operators()[ops[0]].inputs);
  EXPECT_EQ(group.outputs, split->outputs());

  // Partial sums written as float16 (not what split_loop writes): not taken, since a backend
  // sizes and reads them as float32. The same pair rebuilt with float32 partials is.
  const auto rebuilt_with = [&](DType partials) {
    const auto retyped = [partials](OpKind kind) {
      return [partials, kind](size_t, Operator &op) {
        if (op.kind == kind) op.attributes.dtype = partials;
        return true;
      };
    };
    const BlockGraph &chunks = block_graph_of(*split, ops[0]), &sum = block_graph_of(*split, ops[1]);
    auto new_chunks = std::make_shared<BlockGraph>(rebuild(chunks, chunks.config(), retyped(OpKind::kOutputSaver)));
    auto new_sum = std::make_shared<BlockGraph>(rebuild(sum, sum.config(), retyped(OpKind::kInputIterator)));
    KernelGraph pair_graph;
    std::vector<TensorId> in;
    for (TensorId t : split->operators()[ops[0]].inputs) {
      in.push_back(pair_graph.new_input(split->tensor(t).dims, split->tensor(t).dtype));
    }
    pair_graph.mark_output(pair_graph.customized(pair_graph.customized(in, new_chunks), new_sum).at(0));
    return pair_graph;
  };
  EXPECT_TRUE(split_pair(rebuilt_with(DType::kFloat32)).has_value());
  EXPECT_FALSE(split_pair(rebuilt_with(DType::kFloat16)).has_value());

  // Not a split: the unsplit graph, the two operators of an unfused graph.
  EXPECT_FALSE(split_pair(fused).has_value());
  const KernelGraph unfused = bench::build_unfused("gqa", 1, DType::kFloat16, 4);
  const std::vector<size_t> kernels = serialize::kernel_operators(unfused);
  EXPECT_FALSE(split_pair(serialize::make_group_program(unfused, {kernels[0], kernels[1]}).program.graph).has_value());
}

}  // namespace yirage::search
