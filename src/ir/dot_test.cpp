#include "ir/dot.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "ir/block_graph.hpp"

namespace yirage {
namespace {

// The for-loop cluster of customized operator k: from its opening line to its closing brace.
std::string loop_cluster(const std::string &dot, int k) {
  const size_t begin = dot.find("subgraph cluster_k" + std::to_string(k) + "_loop {");
  return begin == std::string::npos ? "" : dot.substr(begin, dot.find("\n    }\n", begin) - begin);
}

// A split loop's chunk: each iteration saves its per-iteration tile, laid along dim 1, in float32.
TEST(Dot, PerIterationSaversSitInTheLoop) {
  KernelGraph g;
  const TensorId x = g.new_input({4, 64}, DType::kFloat16);
  BlockGraphConfig c;
  c.forloop_range = 4;
  auto bg = std::make_shared<BlockGraph>(c);
  const TensorId tile = bg->new_input({4, 64}, DType::kFloat16, kReplicated, 1);
  bg->new_output(bg->unary(OpKind::kExp, tile), kReplicated, 1, DType::kFloat32);
  g.mark_output(g.customized({x}, bg).at(0));
  const std::string dot = to_dot(g);
  const std::string loop = loop_cluster(dot, 1);
  EXPECT_NE(loop.find("k1_op0 [label=\"input_iterator\\nreads [4,64] float16\\nimap={} fmap=1\""), std::string::npos)
      << dot;
  EXPECT_NE(loop.find("k1_op1 [label=\"exp\""), std::string::npos) << dot;
  EXPECT_NE(loop.find("k1_op2 [label=\"output_saver\\nwrites [4,64] float32\\nomap={} loop dim=1\""), std::string::npos)
      << dot;
  EXPECT_NE(dot.find("t1 [label=\"t1: output 0\\n[4,64] float32\""), std::string::npos) << dot;
  EXPECT_EQ(dot, to_dot(g));
}

// Without per-iteration tiles there is no loop cluster; kernel operators sit between tensors.
TEST(Dot, InvariantGraphsHaveNoLoopCluster) {
  KernelGraph g;
  const TensorId x = g.new_input({8, 16}, DType::kBFloat16);
  const std::vector<TensorId> parts = g.split(x, 1, {4, 12});
  g.mark_output(parts[1]);
  BlockGraphConfig c;
  c.grid = {2, 1, 1};
  auto bg = std::make_shared<BlockGraph>(c);
  bg->new_output(bg->reduction(OpKind::kReduction, bg->new_input({8, 4}, DType::kBFloat16, {0, -1, -1}, -1), 1),
                 {0, -1, -1}, -1);
  g.mark_output(g.customized({parts[0]}, bg).at(0));
  const std::string dot = to_dot(g);
  EXPECT_NE(dot.find("k1 [label=\"split\\ndim=1 sizes=[4,12]\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("  t0 -> k1;\n  k1 -> t1;\n  k1 -> t2;\n"), std::string::npos) << dot;
  EXPECT_NE(dot.find("t2 [label=\"t2: output 0\\n[8,12] bfloat16\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"customized -> t3: grid 2x1x1, 1 threads per block\\lfor-loop 1,"), std::string::npos)
      << dot;
  EXPECT_NE(dot.find("k2_op1 [label=\"reduction\\ndim=1\""), std::string::npos) << dot;
  EXPECT_EQ(loop_cluster(dot, 2), "") << dot;
}

}  // namespace
}  // namespace yirage
