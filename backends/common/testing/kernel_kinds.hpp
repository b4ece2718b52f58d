// Every kernel kind of the conformance suite (conformance/tests_kernels.cpp) as kernel programs,
// for the generators' compile tests (hip/codegen/, level_zero/spirv_test.cpp): each kernel-level
// operator on odd shapes with broadcasts, the 16-byte and matmul layouts, the six fused benchmark
// µGraphs in all three dtypes, attention at half size and in blocks, split for-loops, weight
// products, block reductions, row chains, block-level rms_norm. Kind by kind the sources differ
// little between dtypes but in loads and stores, so each kernel-level kind comes in one dtype, the
// three taking turns, and the fused µGraphs in all three.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "benchmark_ugraphs.hpp"
#include "ir/block_graph.hpp"
#include "ragged_graphs.hpp"
#include "search/loop_split.hpp"
#include "serialize/kernel_program.hpp"

namespace yirage::testing {

struct KernelKind {
  std::string name;  // the kind, dtype and operator
  serialize::KernelProgram program;
};

inline void add_kind(std::vector<KernelKind> &out, const std::string &kind, DType dt, const KernelGraph &graph) {
  for (size_t op : serialize::kernel_operators(graph)) {
    out.push_back({kind + "." + dtype_name(dt) + "." + op_name(graph.operators()[op].kind) + "#" + std::to_string(op),
                   serialize::make_kernel_program(graph, op)});
  }
}

inline KernelGraph one_op(const std::function<void(KernelGraph &)> &build) {
  KernelGraph g;
  build(g);
  return g;
}

// conformance's rms_norm_limits.block: rows of 37 shared by a block's threads, with a weight,
// three blocks, no for-loop.
inline KernelGraph block_rms_norm(DType dt) {
  KernelGraph g;
  const TensorId x = g.new_input({6, 5, 37}, dt), w = g.new_input({37}, dt);
  BlockGraphConfig config;
  config.grid = {3, 1, 1};
  config.block_threads = 128;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId xt = bg->new_input({6, 5, 37}, dt, {0, -1, -1}, -1);
  const TensorId wt = bg->new_input({37}, dt, kReplicated, -1);
  bg->new_output(bg->rms_norm(xt, {37}, 1e-5, wt), {0, -1, -1}, -1);
  g.mark_output(g.customized({x, w}, bg)[0]);
  return g;
}

inline constexpr DType kKindDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

inline std::vector<KernelKind> conformance_kernel_kinds() {
  std::vector<KernelKind> out;
  size_t turn = 0;
  const auto next_dtype = [&turn] { return kKindDTypes[turn++ % 3]; };
  for (OpKind kind : {OpKind::kExp, OpKind::kSilu, OpKind::kGelu, OpKind::kRelu, OpKind::kSqrt, OpKind::kSquare,
                      OpKind::kSigmoid, OpKind::kLog, OpKind::kNeg}) {
    const DType dt = next_dtype();
    add_kind(out, op_name(kind), dt, one_op([&](KernelGraph &g) {
               g.mark_output(g.unary(kind, g.new_input({5, 7, 37}, dt)));
             }));
  }
  DType dt = next_dtype();
  add_kind(out, "clamp", dt, one_op([&](KernelGraph &g) {
             g.mark_output(g.clamp(g.new_input({5, 37}, dt), -0.25, 0.5));
           }));
  dt = next_dtype();
  add_kind(out, "mul_scalar", dt, one_op([&](KernelGraph &g) {
             g.mark_output(g.mul_scalar(g.new_input({5, 37}, dt), -1.375));
           }));
  for (OpKind kind : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow, OpKind::kMax}) {
    dt = next_dtype();
    add_kind(out, op_name(kind), dt, one_op([&](KernelGraph &g) {
               g.mark_output(g.binary(kind, g.new_input({5, 1, 37}, dt), g.new_input({1, 9, 37}, dt)));
             }));
  }
  dt = next_dtype();
  add_kind(out, "elementwise_16byte_vectors", dt, one_op([&](KernelGraph &g) {
             const TensorId a = g.new_input({9, 8 * 13}, dt), b = g.new_input({9, 8 * 13}, dt);
             g.mark_output(g.unary(OpKind::kGelu, a));
             g.mark_output(g.binary(OpKind::kMax, a, b));
           }));
  const std::pair<const char *, std::pair<Dims, Dims>> matmuls[] = {
      {"matmul", {{3, 17, 45}, {1, 45, 131}}},
      {"matmul_16byte_rows", {{3, 11, 301}, {1, 301, 8 * 13}}},
      {"matmul_long_k", {{13, 16 * 133}, {16 * 133, 32 * 5}}},
      {"matmul_many_rows", {{77, 8 * 13}, {8 * 13, 8 * 11}}}};
  for (const auto &[kind, shapes] : matmuls) {
    dt = next_dtype();
    add_kind(out, kind, dt, one_op([&, &shapes = shapes](KernelGraph &g) {
               g.mark_output(g.matmul(g.new_input(shapes.first, dt), g.new_input(shapes.second, dt)));
             }));
  }
  for (OpKind kind : {OpKind::kReduction, OpKind::kReductionMax}) {
    dt = next_dtype();
    add_kind(out, op_name(kind), dt, one_op([&](KernelGraph &g) {
               g.mark_output(g.reduction(kind, g.new_input({5, 7, 37}, dt), 1));
             }));
  }
  dt = next_dtype();
  add_kind(out, "rms_norm", dt, one_op([&](KernelGraph &g) {
             g.mark_output(g.rms_norm(g.new_input({7, 45}, dt), {45}, 1e-6, g.new_input({45}, dt)));
           }));
  dt = next_dtype();
  add_kind(out, "concat", dt, one_op([&](KernelGraph &g) {
             g.mark_output(g.concat(g.new_input({7, 13}, dt), g.new_input({7, 21}, dt), 1));
           }));
  dt = next_dtype();
  add_kind(out, "split", dt, one_op([&](KernelGraph &g) {
             for (TensorId part : g.split(g.new_input({7, 34}, dt), 1, {13, 21})) g.mark_output(part);
           }));
  dt = next_dtype();
  add_kind(out, "reshape", dt, one_op([&](KernelGraph &g) {
             g.mark_output(g.reshape(g.new_input({7, 34}, dt), {2, 17, 7}));
           }));
  dt = next_dtype();
  add_kind(out, "permute", dt, one_op([&](KernelGraph &g) {
             g.mark_output(g.permute(g.new_input({3, 7, 13}, dt), {2, 0, 1}));
           }));

  for (const std::string &benchmark : bench::benchmark_names()) {
    for (DType each : kKindDTypes)
      add_kind(out, "fused." + benchmark, each, bench::build_fused(benchmark, 2, each, 16));
  }
  dt = next_dtype();
  add_kind(out, "fused_half.gqa", dt, bench::build_fused("gqa", 1, dt, 2));
  for (const auto &[benchmark, scale, parts] :
       {std::tuple<const char *, int64_t, int64_t>{"gqa", 2, 4}, {"gated_mlp", 16, 2}}) {
    dt = next_dtype();
    const KernelGraph fused = bench::build_fused(benchmark, 1, dt, scale);
    const std::optional<KernelGraph> split = search::split_loop(fused, fused.operators().size() - 1, parts);
    if (!split) throw std::runtime_error(std::string(benchmark) + "'s µGraph does not split");
    add_kind(out, std::string("split_loop.") + benchmark, dt, *split);
  }
  dt = next_dtype();
  {
    const KernelGraph fused = bench::build_fused("gated_mlp", 1, dt, 16);
    BlockGraphConfig config = fused.operators().back().block_graph->config();
    config.grid = {fused.tensor(fused.inputs()[1]).dims[1] * static_cast<int64_t>(dtype_size(dt)) / 64, 1, 1};
    add_kind(out, "weight_product_ugraph", dt, bench::with_config(fused, config));
  }
  for (const std::string graph : {"gqa", "qknorm"}) {
    dt = next_dtype();
    const KernelGraph full = bench::build_fused(graph, 1, dt, 1);
    for (const auto &[blocks, parts] : {std::pair<int64_t, int64_t>{2, 1}, {4, 16}}) {
      BlockGraphConfig config = full.operators().back().block_graph->config();
      config.grid = {2, blocks, 1};
      config.forloop_range = 32;
      KernelGraph fused = bench::with_config(full, config);
      if (parts > 1) fused = *search::split_loop(fused, fused.operators().size() - 1, parts);
      add_kind(out, "attention_blocks." + graph + "." + std::to_string(blocks), dt, fused);
    }
  }
  dt = next_dtype();
  add_kind(out, "block_reductions", dt, bench::build_block_reductions(true, dt));
  dt = next_dtype();
  add_kind(out, "row_chain", dt, bench::build_row_chain(true, dt));
  dt = next_dtype();
  add_kind(out, "sum_to_dimx", dt, bench::build_sum_to_dimx(true, dt));
  dt = next_dtype();
  add_kind(out, "rms_norm_limits.block", dt, block_rms_norm(dt));
  return out;
}

// conformance's ragged_tiles (benchmarks/graphs/ragged_graphs.hpp), each graph in one dtype, the
// three taking turns: for the generators that build ragged tiles (not CUDA's and HIP's).
inline std::vector<KernelKind> ragged_kernel_kinds() {
  std::vector<KernelKind> out;
  size_t turn = 0;
  for (const std::string &graph : bench::ragged_names()) {
    const DType dt = kKindDTypes[turn++ % 3];
    add_kind(out, "ragged_tiles." + graph, dt, bench::build_ragged(graph, true, dt));
  }
  return out;
}

}  // namespace yirage::testing
