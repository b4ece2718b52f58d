#include "search/segments.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "decoder_layer.hpp"
#include "ir/rebuild.hpp"
#include "target/target.hpp"
#include "util/error.hpp"
#include "verify/equivalence.hpp"

namespace yirage::search {
namespace {

// The decoder layer at small sizes: the same operators, quick to fingerprint.
KernelGraph small_layer() {
  return bench::build_decoder_layer(DType::kFloat16, bench::small_decoder_layer_shape());
}

size_t compute_ops(const KernelGraph &g) {
  size_t n = 0;
  for (const Operator &op : g.operators()) n += op.kind != OpKind::kInput;
  return n;
}

TEST(Segments, CoverEveryOperatorOnceInOrder) {
  const KernelGraph g = small_layer();
  const std::vector<Segment> segments = plan_segments(g, 12, 6);
  ASSERT_GT(segments.size(), 2u);
  std::vector<size_t> seen;
  for (const Segment &s : segments) {
    ASSERT_FALSE(s.empty());
    int counted = 0;
    for (size_t i : s) counted += is_view(g.operators()[i].kind) ? 0 : 1;
    EXPECT_LE(counted, 6);
    seen.insert(seen.end(), s.begin(), s.end());
  }
  std::vector<size_t> expected;
  for (size_t i = 0; i < g.operators().size(); ++i) {
    if (g.operators()[i].kind != OpKind::kInput) expected.push_back(i);
  }
  EXPECT_EQ(seen, expected);
  // At most the threshold, or no threshold: one segment.
  EXPECT_EQ(plan_segments(g, 100, 6).size(), 1u);
  EXPECT_EQ(plan_segments(g, 0, 6).size(), 1u);
  EXPECT_THROW(plan_segments(g, 12, 0), Error);
}

// Each segment reads what crosses into it and returns what later operators read or the graph
// returns; the segments joined back are the graph's function.
TEST(Segments, JoinedBackAreTheGraph) {
  const KernelGraph g = small_layer();
  const std::vector<Segment> segments = plan_segments(g, 12, 6);
  std::vector<SegmentGraph> parts;
  std::vector<const KernelGraph *> own;
  size_t ops = 0;
  for (const Segment &s : segments) parts.push_back(segment_graph(g, s));
  for (const SegmentGraph &p : parts) {
    ASSERT_FALSE(p.outputs.empty());
    EXPECT_EQ(p.graph.inputs().size(), p.inputs.size());
    EXPECT_EQ(p.graph.outputs().size(), p.outputs.size());
    ops += compute_ops(p.graph);
    own.push_back(&p.graph);
  }
  EXPECT_EQ(ops, compute_ops(g));
  const KernelGraph joined = join_segments(g, parts, own);
  EXPECT_EQ(compute_ops(joined), compute_ops(g));
  const verify::EquivalenceResult same = verify::check_equivalence(g, joined, {});
  EXPECT_TRUE(same.equivalent) << same.reason;
  // A graph for a segment with other inputs or outputs is refused.
  std::vector<const KernelGraph *> wrong = own;
  std::swap(wrong[0], wrong[1]);
  EXPECT_THROW(join_segments(g, parts, wrong), Error);
  EXPECT_THROW(join_segments(g, parts, {own[0]}), Error);
}

// A small hand-made chain: the segment's inputs and outputs by name.
TEST(Segments, ReadWhatCrossesAndReturnWhatIsReadLater) {
  KernelGraph g;
  const TensorId x = g.new_input({4, 8}, DType::kFloat32);
  const TensorId w = g.new_input({8, 8}, DType::kFloat32);
  const TensorId a = g.matmul(x, w);                // op 2
  const TensorId b = g.unary(OpKind::kExp, a);      // op 3
  const TensorId c = g.binary(OpKind::kAdd, b, x);  // op 4
  g.mark_output(g.binary(OpKind::kMul, c, a));      // op 5: reads a again
  const SegmentGraph first = segment_graph(g, {2, 3});
  EXPECT_EQ(first.inputs, (std::vector<TensorId>{x, w}));
  EXPECT_EQ(first.outputs, (std::vector<TensorId>{a, b}));  // a is read by op 5
  const SegmentGraph second = segment_graph(g, {4, 5});
  EXPECT_EQ(second.inputs, (std::vector<TensorId>{b, x, a}));
  EXPECT_EQ(second.outputs, (std::vector<TensorId>{g.outputs()[0]}));
  EXPECT_THROW(segment_graph(g, {}), Error);
  EXPECT_THROW(segment_graph(g, {0}), Error);  // an input is no operator to search
}

// The whole layer searched (no device): the answer is verified against the whole graph, and a
// segment the search fused is in it.
TEST(Segments, SuperoptimizeALayer) {
  const KernelGraph g = small_layer();
  SearchOptions options;
  options.target = targets::builtin_target("h100");
  options.time_budget_seconds = 60;
  const SearchResult r = superoptimize(g, options);
  ASSERT_FALSE(r.candidates.empty());
  const SearchCandidate &best = r.candidates.front();
  EXPECT_EQ(best.description.rfind("in ", 0), 0u) << best.description;
  EXPECT_NE(best.description.find("customized"), std::string::npos) << best.description;
  EXPECT_LT(best.estimated_seconds, r.candidates.back().estimated_seconds);
  const verify::EquivalenceResult same = verify::check_equivalence(g, best.graph, {});
  EXPECT_TRUE(same.equivalent) << same.reason;
  EXPECT_GT(r.stats.fingerprint_checks, 1);
  EXPECT_EQ(r.candidates.back().description, "the input graph, unchanged");
}

// With a device: each segment measured against itself, the joined graph and the input graph
// against the whole graph; the fewest kernels measure fastest here, so the joined graph wins.
TEST(Segments, ProfilesEachSegmentAndTheJoinedGraph) {
  const KernelGraph g = small_layer();
  SearchOptions options;
  options.target = targets::builtin_target("h100");
  options.time_budget_seconds = 60;
  int references = 0, measured = 0;
  options.measure_for = [&](const KernelGraph &) -> SearchOptions::Measure {
    ++references;
    return [&](const KernelGraph &candidate, std::chrono::steady_clock::time_point) {
      ++measured;
      return Measured{true, 1e-6 * static_cast<double>(compute_ops(candidate)), 0, ""};
    };
  };
  options.measure = options.measure_for(g);
  const SearchResult r = superoptimize(g, options);
  EXPECT_EQ(static_cast<size_t>(references), 1 + plan_segments(g, 12, 6).size());
  ASSERT_GE(r.candidates.size(), 2u);
  EXPECT_EQ(r.candidates.front().description.rfind("in ", 0), 0u) << r.candidates.front().description;
  EXPECT_LT(r.candidates.front().measured_seconds, r.candidates.back().measured_seconds);
  EXPECT_EQ(r.candidates.back().description, "the input graph, unchanged");
  EXPECT_EQ(r.profiled.front().description.rfind("segment 1: ", 0), 0u) << r.profiled.front().description;
  EXPECT_EQ(static_cast<size_t>(measured), r.profiled.size());
}

// A graph of more than segment_above_ops operators, some of which no output depends on (a
// chain over its second input): the search leaves them out (a segment of only them had nothing
// to return), keeps the unread input, and answers with the graph's function.
TEST(Segments, OperatorsNoOutputDependsOnAreLeftOut) {
  KernelGraph g;
  const TensorId x = g.new_input({2, 200}, DType::kFloat32), y = g.new_input({2, 200}, DType::kFloat32);
  const TensorId live = g.rms_norm(g.mul_scalar(g.softmax(x, 1), 2), {200}, 1e-6, std::nullopt);
  TensorId dead = g.softmax(y, 1);
  for (int i = 0; i < 4; ++i) dead = g.unary(OpKind::kExp, g.mul_scalar(dead, 0.5));
  g.mark_output(live);
  ASSERT_GT(plan_segments(g, 12, 6).size(), 1u);

  const KernelGraph pruned = without_dead_operators(g);
  EXPECT_EQ(pruned.inputs().size(), 2u);
  EXPECT_EQ(compute_ops(pruned), 7u);  // softmax's five, the scale and the norm
  EXPECT_TRUE(verify::check_equivalence(g, pruned, {}).equivalent);

  SearchOptions options;
  options.target = targets::builtin_target("h100");
  options.time_budget_seconds = 30;
  const SearchResult r = superoptimize(g, options);
  ASSERT_FALSE(r.candidates.empty());
  for (const SearchCandidate &c : r.candidates) {
    EXPECT_EQ(c.graph.inputs().size(), 2u) << c.description;
    const verify::EquivalenceResult same = verify::check_equivalence(g, c.graph, {});
    EXPECT_TRUE(same.equivalent) << c.description << ": " << same.reason;
  }
}

}  // namespace
}  // namespace yirage::search
