// The shared lowering as a target sees it: expressions print in C with their precedence, a
// pre-defined operator becomes loops a printer shares, and a µGraph becomes steps in four phases
// with barriers only where a thread reads what another wrote. The numbers these produce are
// checked through the backends that print them (runtime and conformance tests).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "benchmark_ugraphs.hpp"
#include "codegen/lower_operator.hpp"
#include "codegen/ugraph_walker.hpp"
#include "util/error.hpp"

namespace yirage::codegen {
namespace {

// A C printer for tests: shared loops print as "for threads (...)", barriers as "BARRIER;".
class TestPrinter : public CPrinter {
 public:
  using CPrinter::CPrinter;
  void print_barrier() override { p_.line("BARRIER;"); }

 protected:
  void print_shared_loop(const Loop &l) override {
    const char *who = l.sharing == Sharing::kGrid ? "grid" : l.sharing == Sharing::kThreads ? "threads" : "lanes";
    std::string head = std::string("for ") + who + " (";
    for (size_t d = 0; d < l.dims.size(); ++d) head += (d ? ", " : "") + l.vars[d] + " < " + std::to_string(l.dims[d]);
    p_.open(head + ")");
    print(l.body);
    p_.close();
  }
  std::string pointer(const BufferRef &b) const override {
    return b.space == MemorySpace::kShared ? "smem" + std::to_string(b.offset) : b.name;
  }
};

std::string printed(const Block &block) {
  Printer p;
  TestPrinter printer(p);
  printer.print(block);
  return p.str();
}

TEST(CodegenExpressions, PrintWithCsPrecedenceAndFoldIndexArithmetic) {
  const Expr a = var("a"), b = var("b"), c = var("c");
  EXPECT_EQ(c_text((a + b) * c), "(a + b) * c");
  EXPECT_EQ(c_text(a - (b - c)), "a - (b - c)");
  EXPECT_EQ(c_text(a + (b + c)), "a + b + c") << "integer sums are one chain";
  EXPECT_EQ(c_text(int_const(0) + a * int_const(1)), "a");
  EXPECT_EQ(c_text(a * int_const(0) + int_const(3) * int_const(4)), "12");
  EXPECT_EQ(c_text(a % int_const(1)), "0");
  EXPECT_EQ(c_text(float_const(-1.5) * a), "-1.5f * a");
  EXPECT_EQ(c_text(a - float_const(-1.5)), "a - -1.5f");
  EXPECT_EQ(c_text(float_const(INFINITY)), "INFINITY");
  EXPECT_EQ(c_text(select(binary("<", a, b), a + c, b)), "a < b ? a + c : b");
  EXPECT_EQ(c_text(load(global_buffer("in0", DType::kFloat16), a + b)), "yr_ld(in0 + (a + b))");
  EXPECT_EQ(c_text(unary_value(OpKind::kSilu, {}, var("v"))), "v * yr_sigmoid(v)");
  EXPECT_EQ(index_expr({"i0", "i1"}, {8, 1}), "(i0 * 8 + i1)");
  EXPECT_EQ(index_expr({"i0", "i1"}, {0, 0}), "0");
}

// An add with a broadcast operand: one loop over the output's index space, shared by the grid at
// kernel level and by the block's threads inside one; without a broadcast, one flat loop.
TEST(CodegenOperators, ElementwiseOperatorsAreLoopsOverTheirOutput) {
  KernelGraph g;
  const TensorId x = g.new_input({3, 4}, DType::kFloat32), b = g.new_input({1, 4}, DType::kFloat32);
  g.mark_output(g.binary(OpKind::kAdd, x, b));
  const Operator &add = g.operators().back();
  const std::vector<TensorRef> in = {{global_buffer("in0", DType::kFloat32), {3, 4}, {}},
                                     {global_buffer("in1", DType::kFloat32), {1, 4}, {}}};
  const std::vector<TensorRef> out = {{global_buffer("out0", DType::kFloat32), {3, 4}, {}}};
  EXPECT_EQ(printed(lower_operator(add, in, out, Sharing::kGrid)),
            "for grid (i0 < 3, i1 < 4) {\n"
            "  yr_st(out0 + (i0 * 4 + i1), yr_ld(in0 + (i0 * 4 + i1)) + yr_ld(in1 + i1));\n"
            "}\n");
  const std::vector<TensorRef> same = {in[0], {global_buffer("in1", DType::kFloat32), {3, 4}, {}}};
  EXPECT_EQ(printed(lower_operator(add, same, out, Sharing::kThreads)),
            "for threads (e0 < 12) {\n  yr_st(out0 + e0, yr_ld(in0 + e0) + yr_ld(in1 + e0));\n}\n");
}

// Inside a block, an rms_norm is a row reduction whose finish shares the row; its plain expansion
// gives each row to one thread. Where the row's mean square is not a normal float32 of full
// precision (a row of 1e19s overflows, one of 1e-23s underflows), the row is done again, scaled by
// its largest magnitude (held within [sqrt(eps), 2^126]) and divided, never multiplied by 1 / rms,
// which may exceed float32.
TEST(CodegenOperators, BlockNormsAreRowReductions) {
  KernelGraph g;
  g.mark_output(g.rms_norm(g.new_input({2, 8}, DType::kFloat32), {8}, 1e-6, std::nullopt));
  const std::vector<TensorRef> in = {{shared_buffer(0), {2, 8}, {}}}, out = {{shared_buffer(16), {2, 8}, {}}};
  const Block block = lower_operator(g.operators().back(), in, out, Sharing::kThreads);
  ASSERT_EQ(block.size(), 1u);
  const RowReduce &rr = std::get<RowReduce>(block[0].node);
  EXPECT_EQ(rr.rows, 2);
  EXPECT_EQ(rr.cols, 8);
  EXPECT_EQ(printed(expand(rr)),
            "for threads (r < 2) {\n"
            "  float total = 0.0f;\n"
            "  for (int64_t c = 0; c < 8; ++c) {\n"
            "    total = total + smem0[(r * 8 + c)] * smem0[(r * 8 + c)];\n"
            "  }\n"
            "  const float mean = total / 8.0f + 1e-06f;\n"
            "  if (yr_clamp(mean, 1.97215226e-31f, 3.40282347e+38f) == mean) {\n"
            "    const float inv = yr_rsqrt(mean);\n"
            "    for (int64_t c = 0; c < 8; ++c) {\n"
            "      smem16[(r * 8 + c)] = smem0[(r * 8 + c)] * inv;\n"
            "    }\n"
            "  }\n"
            "  else {\n"
            "    float peak = 0.0f;\n"
            "    for (int64_t c = 0; c < 8; ++c) {\n"
            "      peak = yr_max(peak, yr_max(smem0[(r * 8 + c)], -smem0[(r * 8 + c)]));\n"
            "    }\n"
            "    const float scale = 1.0f / yr_clamp(peak, 0.001f, 8.50705917e+37f);\n"
            "    float squares = 0.0f;\n"
            "    for (int64_t c = 0; c < 8; ++c) {\n"
            "      const float v = smem0[(r * 8 + c)] * scale;\n"
            "      squares = squares + v * v;\n"
            "    }\n"
            "    const float norm = yr_sqrt(squares / 8.0f + 1e-06f * scale * scale);\n"
            "    for (int64_t c = 0; c < 8; ++c) {\n"
            "      smem16[(r * 8 + c)] = smem0[(r * 8 + c)] * scale / norm;\n"
            "    }\n"
            "  }\n"
            "}\n");
  // Without eps the floor is float32's smallest normal, and no eps term is added.
  KernelGraph g0;
  g0.mark_output(g0.rms_norm(g0.new_input({2, 8}, DType::kFloat32), {8}, 0.0, std::nullopt));
  const Block b0 = lower_operator(g0.operators().back(), in, out, Sharing::kThreads);
  const std::string text = printed(expand(std::get<RowReduce>(b0.at(0).node)));
  EXPECT_NE(text.find("const float mean = total / 8.0f;"), std::string::npos) << text;
  EXPECT_NE(text.find("1.0f / yr_clamp(peak, 1.17549435e-38f, 8.50705917e+37f)"), std::string::npos) << text;
  EXPECT_NE(text.find("yr_sqrt(squares / 8.0f);"), std::string::npos) << text;
}

// What each step of a lowered µGraph is, in order: "phase kind op".
std::vector<std::string> step_list(const BlockGraph &bg, const LoweredUGraph &l) {
  static const char *kinds[] = {"start", "load", "compute", "update", "finish", "save"};
  std::vector<std::string> list;
  const std::pair<const char *, const std::vector<Step> *> phases[] = {
      {"start", &l.start}, {"invariant", &l.invariant}, {"loop", &l.loop}, {"after", &l.after}};
  for (const auto &[phase, steps] : phases) {
    for (const Step &s : *steps) {
      list.push_back(std::string(phase) + " " + kinds[static_cast<int>(s.kind)] + " " +
                     op_name(bg.operators()[s.op].kind));
    }
  }
  return list;
}

// rmsnorm_linear's µGraph: tiles of X and W in each iteration, X·W summed and Σ x² kept over the
// loop (scaled, see below), then the rms of each row and the division after it. The walker puts a
// barrier where a step reads what another thread wrote since the last one: before the matmul (it
// reads whole rows and columns of the tiles just loaded), at the end of each iteration (the next
// one's loads overwrite tiles still being read), before the division (it reads the rows' rms,
// written by the row reduction's threads) and before the save (16-byte groups of float16 span
// threads' elements); none between the matmul and its sum, which reads each element where its
// thread wrote it.
TEST(CodegenUGraphs, RmsNormLinearLowersToStepsInFourPhases) {
  const KernelGraph fused = bench::build_fused("rmsnorm_linear", 1, DType::kFloat16, 16);
  const BlockGraph &bg = *fused.operators().back().block_graph;
  UGraphLowering lowering;
  lowering.inlined = inlined_tensors(bg);
  lowering.layout = plan_block_layout(bg, 4, {}, lowering.inlined);
  lowering.output_dtypes = {DType::kFloat16};
  const LoweredUGraph lowered = lower_ugraph(bg, lowering);
  const std::vector<std::string> steps = step_list(bg, lowered);
  const std::vector<std::string> expected = {
      "start start accum_sum",        "start start accum_reduce_rms",  "loop load input_iterator",
      "loop load input_iterator",     "loop compute matmul",           "loop update accum_sum",
      "loop update accum_reduce_rms", "after finish accum_reduce_rms", "after compute div",
      "after save output_saver"};
  EXPECT_EQ(steps, expected);

  Printer p;
  TestPrinter printer(p);
  UGraphWalker(printer, bg, lowered).walk();
  const std::string code = p.str();
  const size_t loop = code.find("for (int64_t it = 0; it < 4; ++it)"), matmul = code.find("float acc = 0.0f;");
  const size_t sum = code.find("for threads (e < 128)", matmul), division = code.find("] / smem4480[");
  const size_t save = code.find("yr_st(out0");
  ASSERT_NE(loop, std::string::npos) << code;
  std::vector<size_t> barriers;
  for (size_t at = code.find("BARRIER;"); at != std::string::npos; at = code.find("BARRIER;", at + 1))
    barriers.push_back(at);
  ASSERT_EQ(barriers.size(), 4u) << code;
  EXPECT_LT(loop, barriers[0]);
  EXPECT_LT(barriers[0], matmul);
  EXPECT_LT(sum, barriers[1]) << "no barrier between the matmul and its sum";
  EXPECT_LT(barriers[2], division);
  EXPECT_LT(barriers[3], save);
  EXPECT_LT(division, barriers[3]);
  // The rms accumulator keeps, per element, Σ (x · R)² with R = 1 / a magnitude the element had,
  // changed (and the sum rescaled) only where a term would pass 2^96, so that X's squares never
  // leave float32; its result sums sum / R² over the row, again scaled by the row's largest 1 / R
  // where that leaves float32.
  EXPECT_NE(code.find("const float rms_x = smem0[e] * smem4740[e];\n    if (rms_x * rms_x > 7.92281625e+28f) {"),
            std::string::npos)
      << code;
  EXPECT_NE(code.find("smem4612[e] = smem4612[e] * (rms_b * rms_b) + rms_a * rms_a;"), std::string::npos) << code;
  EXPECT_NE(code.find("smem4612[e] = smem4612[e] + rms_x * rms_x;"), std::string::npos) << code;
  EXPECT_NE(code.find("if (yr_clamp(mean, 1.97215226e-31f, 3.40282347e+38f) == mean) {"), std::string::npos) << code;
  EXPECT_NE(code.find("total = yr_sqrt(squares / 256.0f) / scale;"), std::string::npos) << code;

  // A device whose shared memory the layout exceeds refuses the µGraph.
  lowering.max_shared_bytes = lowering.layout.floats * 4 - 4;
  try {
    lower_ugraph(bg, lowering);
    ADD_FAILURE() << "a layout over the device's shared memory was lowered";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("bytes of shared memory per block, the device has"), std::string::npos);
  }
  lowering.max_shared_bytes = lowering.layout.floats * 4;
  EXPECT_NO_THROW(lower_ugraph(bg, lowering));
}

// Narrow tiles: the input iterators' tiles of float16 tensors take half the floats and keep their
// dtype, so their loads and stores convert; every other tile stays float32.
TEST(CodegenUGraphs, NarrowInputTilesTakeHalfTheArena) {
  const KernelGraph fused = bench::build_fused("rmsnorm_linear", 1, DType::kFloat16, 16);
  const BlockGraph &bg = *fused.operators().back().block_graph;
  const std::vector<bool> narrow = narrow_input_tiles(bg);
  const BlockLayout wide = plan_block_layout(bg, 4), halved = plan_block_layout(bg, 4, {}, {}, {}, narrow);
  std::set<std::string> input_tiles;
  int64_t saved = 0;
  for (const Operator &op : bg.operators()) {
    if (op.outputs.empty()) continue;
    const auto t = static_cast<size_t>(op.outputs[0]);
    if (op.kind != OpKind::kInputIterator) {
      EXPECT_EQ(halved.stored[t], DType::kFloat32);
      continue;
    }
    input_tiles.insert("smem" + std::to_string(halved.tile[t]));
    EXPECT_TRUE(narrow[t]);
    EXPECT_EQ(halved.stored[t], DType::kFloat16);
    saved += num_elements(bg.tensor(op.outputs[0]).dims) / 2;
  }
  EXPECT_EQ(input_tiles.size(), 2u);
  EXPECT_EQ(halved.floats, wide.floats - saved);

  // The tiles' loads and stores name the dtype they hold: X's tile (at 0) is written by its copy
  // and read by the matmul and Σ x², as float16.
  struct DTypePrinter : TestPrinter {
    using TestPrinter::TestPrinter;
    std::string load_text(const BufferRef &b, const std::string &index) const override {
      return b.space == MemorySpace::kShared && b.element != DType::kFloat32
                 ? dtype_name(b.element) + std::string(":") + pointer(b) + "[" + index + "]"
                 : TestPrinter::load_text(b, index);
    }
  };
  UGraphLowering lowering;
  lowering.layout = halved;
  lowering.output_dtypes = {DType::kFloat16};
  Printer p;
  DTypePrinter printer(p);
  UGraphWalker(printer, bg, lower_ugraph(bg, lowering)).walk();
  const std::string code = p.str();
  EXPECT_NE(code.find("float16:smem0["), std::string::npos) << code;
  for (size_t at = code.find("float16:"); at != std::string::npos; at = code.find("float16:", at + 1)) {
    const std::string tile = code.substr(at + 8, code.find('[', at) - at - 8);
    EXPECT_TRUE(input_tiles.count(tile)) << tile << " is no input's tile:\n" << code;
  }
}

}  // namespace
}  // namespace yirage::codegen
