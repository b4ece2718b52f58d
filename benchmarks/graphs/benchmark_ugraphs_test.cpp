// Each hand-written fused µGraph computes what its unfused kernel graph computes: both run on
// the reference executor (float64) on the same random inputs, at reduced and at benchmark shapes.
#include "benchmark_ugraphs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/block_graph.hpp"
#include "reference/executor.hpp"
#include "util/error.hpp"

namespace yirage::bench {
namespace {

using reference::Values;

std::vector<Values> random_inputs(const KernelGraph &g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<Values> inputs;
  for (TensorId id : g.inputs()) {
    Values v(static_cast<size_t>(num_elements(g.tensor(id).dims)));
    for (double &x : v) x = uniform(rng);
    inputs.push_back(std::move(v));
  }
  return inputs;
}

double relative_error(const Values &got, const Values &want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff / norm);
}

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
  const std::vector<Values> inputs = random_inputs(unfused, 1234 + scale);
  const Values want = reference::evaluate(unfused, inputs)[0];
  const Values got = reference::evaluate(fused, inputs)[0];
  EXPECT_LT(relative_error(got, want), 1e-12) << name << " at scale " << scale;
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

INSTANTIATE_TEST_SUITE_P(Benchmarks, FusedBenchmark, ::testing::ValuesIn(benchmark_names()),
                         [](const auto &info) { return info.param; });

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
