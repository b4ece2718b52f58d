// Each hand-written fused µGraph computes what its unfused kernel graph computes: both run on
// the reference executor (float64) on the same random inputs, at reduced and at benchmark shapes.
#include "benchmark_ugraphs.hpp"
#include "ragged_graphs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/block_graph.hpp"
#include "ir/ragged_tiles.hpp"
#include "reference/executor.hpp"
#include "testing/test_support.hpp"
#include "util/error.hpp"
#include "verify/equivalence.hpp"

namespace yirage::bench {
namespace {

using reference::Values;

void expect_fused_matches(const std::string &name, int64_t b, int64_t scale) {
  const KernelGraph unfused = build_unfused(name, b, DType::kFloat16, scale);
  const KernelGraph fused = build_fused(name, b, DType::kFloat16, scale);
  // Fully fused: one customized operator besides the inputs.
  size_t customized = 0;
  for (const Operator &op : fused.operators()) {
    if (op.kind == OpKind::kCustomized) ++customized;
    EXPECT_TRUE(op.kind == OpKind::kInput || op.kind == OpKind::kCustomized) << name;
  }
  EXPECT_EQ(customized, 1u) << name;
  ASSERT_EQ(unfused.tensor(unfused.outputs()[0]).dims, fused.tensor(fused.outputs()[0]).dims);
  const std::vector<Values> inputs = testing::random_inputs(unfused, 1234 + static_cast<uint64_t>(scale));
  const Values want = reference::evaluate(unfused, inputs)[0];
  const Values got = reference::evaluate(fused, inputs)[0];
  EXPECT_LT(testing::relative_error(got, want), 1e-12) << name << " at scale " << scale;
}

class FusedBenchmark : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedBenchmark, MatchesUnfusedAtReducedShapes) {
  expect_fused_matches(GetParam(), 1, 16);
}

TEST_P(FusedBenchmark, MatchesUnfusedAtReducedShapesWithBatch2) {
  expect_fused_matches(GetParam(), 2, 8);
}

TEST_P(FusedBenchmark, MatchesUnfusedAtBenchmarkShapes) {
  expect_fused_matches(GetParam(), 1, 1);
}

// The fingerprint agrees (at benchmark shapes: build/benchmarks/verify/fingerprint_times).
TEST_P(FusedBenchmark, FingerprintEquivalentToUnfused) {
  for (int64_t b : {1, 2}) {
    const KernelGraph unfused = build_unfused(GetParam(), b, DType::kFloat16, 16);
    const KernelGraph fused = build_fused(GetParam(), b, DType::kFloat16, 16);
    const verify::EquivalenceResult r = verify::check_equivalence(unfused, fused, {3, 17, 0});
    EXPECT_TRUE(r.equivalent) << GetParam() << " b=" << b << ": " << r.reason;
    EXPECT_EQ(r.trials, 3);
  }
}

INSTANTIATE_TEST_SUITE_P(Benchmarks, FusedBenchmark, ::testing::ValuesIn(benchmark_names()),
                         [](const auto &info) { return info.param; });

// µGraphs with ragged tiles (ragged_graphs.hpp) against their unfused graphs: on the float64
// reference, and by fingerprint where the unfused graph has no constant the fingerprint's
// arithmetic cannot take exactly (row_statistics multiplies by 1/61).
class RaggedGraph : public ::testing::TestWithParam<std::string> {};

TEST_P(RaggedGraph, MatchesUnfused) {
  const KernelGraph unfused = build_ragged(GetParam(), false, DType::kFloat32);
  const KernelGraph fused = build_ragged(GetParam(), true, DType::kFloat32);
  ASSERT_EQ(unfused.tensor(unfused.outputs()[0]).dims, fused.tensor(fused.outputs()[0]).dims);
  const std::vector<Values> inputs = testing::random_inputs(unfused, 99, -2, 2);
  EXPECT_LT(testing::relative_error(reference::evaluate(fused, inputs)[0], reference::evaluate(unfused, inputs)[0]),
            1e-12);
  if (GetParam() != "row_statistics") {
    const verify::EquivalenceResult r = verify::check_equivalence(unfused, fused, {3, 1, 1});
    EXPECT_TRUE(r.equivalent) << r.reason;
  }
}

INSTANTIATE_TEST_SUITE_P(All, RaggedGraph, ::testing::ValuesIn(ragged_names()));

// The same online softmax where the blocks and the loop divide the dims.
TEST(RaggedGraph, OnlineSoftmaxWithoutRaggedTiles) {
  const KernelGraph unfused = build_online_softmax(16, 64, false, DType::kFloat32);
  const KernelGraph fused = build_online_softmax(16, 64, true, DType::kFloat32);
  EXPECT_FALSE(has_ragged_tiles(*fused.operators().back().block_graph));
  const std::vector<Values> inputs = testing::random_inputs(unfused, 99, -2, 2);
  EXPECT_LT(testing::relative_error(reference::evaluate(fused, inputs)[0], reference::evaluate(unfused, inputs)[0]),
            1e-12);
  EXPECT_TRUE(verify::check_equivalence(unfused, fused, {3, 1, 1}).equivalent);
}

TEST(RaggedGraph, UnknownName) {
  EXPECT_THROW(build_ragged("nothing", true, DType::kFloat32), Error);
}

TEST(FusedBenchmark, SharedMemoryFootprintsAreModest) {
  for (const std::string &name : benchmark_names()) {
    const KernelGraph fused = build_fused(name, 1, DType::kFloat16, 1);
    for (const Operator &op : fused.operators()) {
      if (op.kind != OpKind::kCustomized) continue;
      // All six fit the 227 KiB an H100 block may use.
      EXPECT_LE(op.block_graph->shared_memory_bytes(), 227 * 1024) << name;
    }
  }
}

TEST(FusedBenchmark, UnknownNameAndBadScale) {
  EXPECT_THROW(build_fused("nope", 1, DType::kFloat16), Error);
  EXPECT_THROW(build_unfused("gqa", 1, DType::kFloat16, 3), Error);
}

}  // namespace
}  // namespace yirage::bench
