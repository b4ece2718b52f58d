#include "search/shards.hpp"

#include <gtest/gtest.h>

#include <optional>

#include "benchmark_ugraphs.hpp"
#include "decoder_layer.hpp"
#include "serialize/graph_file.hpp"
#include "target/target.hpp"
#include "util/error.hpp"

namespace yirage::search {
namespace {

SearchOptions options_for(int threads = 2) {
  SearchOptions o;
  o.target = targets::builtin_target("h100");
  o.time_budget_seconds = 300;
  o.threads = threads;
  return o;
}

std::vector<uint8_t> bytes_of(const KernelGraph &g) {
  return serialize::graph_to_bytes(g, serialize::GraphFormat::kBinary);
}

// Two answers hold the same graphs in the same order, with the same estimates and descriptions.
void expect_same_candidates(const SearchResult &a, const SearchResult &b) {
  ASSERT_EQ(a.candidates.size(), b.candidates.size());
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    EXPECT_EQ(bytes_of(a.candidates[i].graph), bytes_of(b.candidates[i].graph)) << "candidate " << i;
    EXPECT_EQ(a.candidates[i].estimated_seconds, b.candidates[i].estimated_seconds);
    EXPECT_EQ(a.candidates[i].description, b.candidates[i].description);
  }
}

std::vector<uint32_t> every(size_t n, size_t from = 0, size_t step = 1) {
  std::vector<uint32_t> u;
  for (size_t i = from; i < n; i += step) u.push_back(static_cast<uint32_t>(i));
  return u;
}

struct Case {
  std::string graph;
  uint32_t min_units;
};

class Sharded : public ::testing::TestWithParam<Case> {};

// Any split of the units over shards, through bytes, gives exactly one process's answer, and the
// units' counts add up to its counts.
TEST_P(Sharded, GivesTheOneProcessAnswer) {
  const KernelGraph g = bench::build_unfused(GetParam().graph, 1, DType::kFloat16, 16);
  const SearchOptions o = options_for();
  const SearchResult whole = superoptimize(g, o);
  ASSERT_EQ(whole.end, SearchEnd::kComplete);
  ASSERT_FALSE(whole.candidates.empty());

  const ShardedSearch plan(g, o, GetParam().min_units);
  ASSERT_GE(plan.num_units(), 1u);
  for (size_t i = 1; i < plan.num_units(); ++i) EXPECT_LT(plan.unit(i - 1), plan.unit(i));
  // Three shards: every third unit each, read back from their bytes by another plan.
  const ShardedSearch other(g, o, GetParam().min_units);
  EXPECT_EQ(other.request(), plan.request());
  std::vector<ShardResult> shards;
  for (size_t s = 0; s < 3; ++s) {
    const ShardResult shard = plan.run(every(plan.num_units(), s, 3));
    const std::vector<uint8_t> bytes = plan.to_bytes(shard);
    shards.push_back(other.from_bytes(bytes.data(), bytes.size()));
  }
  const SearchResult merged = other.merge(shards, o, std::chrono::steady_clock::now());
  EXPECT_EQ(merged.end, SearchEnd::kComplete);
  expect_same_candidates(whole, merged);
  EXPECT_EQ(merged.stats.states, whole.stats.states);
  EXPECT_EQ(merged.stats.structures, whole.stats.structures);
  EXPECT_EQ(merged.stats.pruned_abstract, whole.stats.pruned_abstract);
  EXPECT_EQ(merged.stats.candidates, whole.stats.candidates);

  // A unit found twice counts once; one shard of everything, on one thread, gives the same.
  shards.push_back(plan.run(every(plan.num_units()), nullptr));
  expect_same_candidates(whole, other.merge(shards, o, std::chrono::steady_clock::now()));
}

INSTANTIATE_TEST_SUITE_P(Graphs, Sharded,
                         ::testing::Values(Case{"rmsnorm_linear", 1}, Case{"rmsnorm_linear", 12}, Case{"gated_mlp", 1},
                                           Case{"gated_mlp", 24}),
                         [](const auto &info) {
                           return info.param.graph + "_" + std::to_string(info.param.min_units) + "_units";
                         });

TEST(Sharded, UnitsMissingLeaveTheSearchIncomplete) {
  const KernelGraph g = bench::build_unfused("rmsnorm_linear", 1, DType::kFloat16, 16);
  const ShardedSearch plan(g, options_for(), 16);
  ASSERT_GE(plan.num_units(), 2u);
  std::vector<uint32_t> some = every(plan.num_units());
  some.pop_back();
  const SearchResult r = plan.merge({plan.run(some)}, options_for(), std::chrono::steady_clock::now());
  EXPECT_EQ(r.end, SearchEnd::kTimeout);
  EXPECT_THROW(plan.run({static_cast<uint32_t>(plan.num_units())}), Error);
}

TEST(Sharded, RefusesForeignAndMalformedPartialResults) {
  const KernelGraph g = bench::build_unfused("rmsnorm_linear", 1, DType::kFloat16, 16);
  const SearchOptions o = options_for();
  const ShardedSearch plan(g, o, 8);
  const std::vector<uint8_t> bytes = plan.to_bytes(plan.run(every(plan.num_units())));
  // The error's code; nullopt: none.
  auto code_of = [](auto &&f) -> std::optional<ErrorCode> {
    try {
      f();
    } catch (const Error &e) {
      return e.code();
    }
    return std::nullopt;
  };
  // Another graph's plan, other options, other units.
  const ShardedSearch other_graph(bench::build_unfused("qknorm", 1, DType::kFloat16, 16), o, 8);
  EXPECT_EQ(code_of([&] { other_graph.from_bytes(bytes.data(), bytes.size()); }), ErrorCode::kInvalidArgument);
  SearchOptions deeper = o;
  deeper.max_block_ops = 9;
  const ShardedSearch other_options(g, deeper, 8);
  EXPECT_EQ(code_of([&] { other_options.from_bytes(bytes.data(), bytes.size()); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { plan.merge({}, deeper, std::chrono::steady_clock::now()); }), ErrorCode::kInvalidArgument);
  const ShardedSearch other_units(g, o, 9);
  EXPECT_EQ(code_of([&] { other_units.from_bytes(bytes.data(), bytes.size()); }), ErrorCode::kInvalidArgument);
  // Truncated, flipped and empty bytes.
  for (size_t cut : {size_t{0}, size_t{8}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_EQ(code_of([&] { plan.from_bytes(bytes.data(), cut); }), ErrorCode::kCorruptData) << cut;
  }
  for (size_t at = 0; at < bytes.size(); at += 7) {
    std::vector<uint8_t> flipped = bytes;
    flipped[at] ^= 0x5a;
    const std::optional<ErrorCode> code = code_of([&] { plan.from_bytes(flipped.data(), flipped.size()); });
    EXPECT_TRUE(!code || code == ErrorCode::kCorruptData || code == ErrorCode::kInvalidArgument ||
                code == ErrorCode::kVersionMismatch)
        << at;
  }
  // A unit the plan lacks.
  ShardResult bad = plan.run({0});
  bad.units[0].unit = static_cast<uint32_t>(plan.num_units());
  EXPECT_EQ(code_of([&] { plan.merge({bad}, o, std::chrono::steady_clock::now()); }), ErrorCode::kCorruptData);
}

TEST(Sharded, RefusesGraphsSearchedInSegments) {
  const KernelGraph layer = bench::build_decoder_layer(DType::kFloat16, bench::small_decoder_layer_shape());
  try {
    ShardedSearch plan(layer, options_for(), 8);
    FAIL() << "planned a graph searched in segments";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("segments"), std::string::npos);
  }
  EXPECT_THROW(ShardedSearch(layer, options_for(), 0), Error);
}

}  // namespace
}  // namespace yirage::search
