#include "search/cost_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include <cstdio>

#include "benchmark_ugraphs.hpp"
#include "ir/block_graph.hpp"
#include "search/cpu_matmul_cost.hpp"
#include "search/loop_split.hpp"

namespace yirage::search {
namespace {

// The fused µGraphs move far fewer bytes and launch one kernel: on the targets they were shaped
// for (H100, A100) the model must rank them first.
TEST(CostModel, FusedBenchmarksBeatUnfusedOnNvidiaTargets) {
  for (const char *target_name : {"h100", "a100"}) {
    const targets::TargetProperties target = targets::builtin_target(target_name);
    for (const std::string &name : bench::benchmark_names()) {
      const CostEstimate unfused = estimate_cost(bench::build_unfused(name, 1, DType::kFloat16), target);
      const CostEstimate fused = estimate_cost(bench::build_fused(name, 1, DType::kFloat16), target);
      ASSERT_TRUE(unfused.feasible);
      ASSERT_TRUE(fused.feasible) << fused.infeasible_reason;
      EXPECT_EQ(fused.kernels.size(), 1u);
      EXPECT_LT(fused.seconds, unfused.seconds) << name << " on " << target_name;
      std::printf("%-7s %-15s unfused %8.2f us (%zu kernels)  fused %8.2f us\n", target_name, name.c_str(),
                  unfused.seconds * 1e6, unfused.kernels.size(), fused.seconds * 1e6);
    }
  }
}

// On MI300X (304 compute units, 64 KiB per work-group) the same µGraphs are a poor fit, and the
// model says why: the attention ones exceed its shared memory (a search would pick longer loops),
// and the 64- and 96-block grids leave most of the device idle (it would pick narrower tiles).
TEST(CostModel, NvidiaShapedMuGraphsOnMi300x) {
  const targets::TargetProperties mi300x = targets::builtin_target("mi300x");
  for (const std::string &name : bench::benchmark_names()) {
    const CostEstimate fused = estimate_cost(bench::build_fused(name, 1, DType::kFloat16), mi300x);
    if (name == "gqa" || name == "qknorm") {
      EXPECT_FALSE(fused.feasible) << name;
      EXPECT_NE(fused.infeasible_reason.find("bytes of shared memory per block; mi300x has 65536"), std::string::npos);
    } else {
      ASSERT_TRUE(fused.feasible) << name;
      if (name == "gated_mlp" || name == "rmsnorm_linear") {
        EXPECT_LT(3 * fused.kernels[0].blocks, mi300x.compute_units) << name;
        EXPECT_LT(fused.kernels[0].utilization, 0.7) << name;
      }
    }
  }
}

// exp over a [blocks·128, 256] float16 tensor, one 128-row tile (64 KiB) per block.
KernelGraph elementwise_kernel(int64_t blocks) {
  KernelGraph g;
  const TensorId x = g.new_input({blocks * 128, 256}, DType::kFloat16);
  BlockGraphConfig config;
  config.grid = {blocks, 1, 1};
  config.block_threads = 1024;  // one resident block per H100 SM
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId t = bg->new_input({blocks * 128, 256}, DType::kFloat16, {0, -1, -1}, -1);
  bg->new_output(bg->unary(OpKind::kExp, t), {0, -1, -1}, -1);
  g.mark_output(g.customized({x}, bg)[0]);
  return g;
}

// A reshape the runtime aliases costs nothing; one written as a graph output is a copy kernel, and
// a permute always is one (a read and a write of the tensor).
TEST(CostModel, AliasedReshapesAreFree) {
  const targets::TargetProperties h100 = targets::builtin_target("h100");
  auto cost = [&](bool reshaped, bool permuted, bool output) {
    KernelGraph g;
    TensorId x = g.unary(OpKind::kExp, g.new_input({64, 256}, DType::kFloat16));
    if (reshaped) x = g.reshape(x, {64, 16, 16});
    if (permuted) x = g.transpose(x, 0, 1);
    if (output) g.mark_output(x);
    if (!output || reshaped || permuted) g.mark_output(g.unary(OpKind::kNeg, x));
    return estimate_cost(g, h100);
  };
  EXPECT_EQ(cost(true, false, false).kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(cost(true, false, false).seconds, cost(false, false, false).seconds);
  EXPECT_EQ(cost(true, false, true).kernels.size(), 3u);
  EXPECT_GT(cost(true, true, false).seconds, cost(false, false, false).seconds);
}

TEST(CostModel, WaveQuantization) {
  targets::TargetProperties h100 = targets::builtin_target("h100");
  h100.max_blocks_per_compute_unit = 1;
  const CostEstimate full = estimate_cost(elementwise_kernel(132), h100);
  const CostEstimate spill = estimate_cost(elementwise_kernel(133), h100);
  ASSERT_TRUE(full.feasible && spill.feasible) << full.infeasible_reason;
  ASSERT_EQ(full.kernels.size(), 1u);
  ASSERT_EQ(spill.kernels.size(), 1u);
  EXPECT_EQ(full.kernels[0].waves, 1);
  EXPECT_EQ(spill.kernels[0].waves, 2);
  EXPECT_NEAR(full.kernels[0].utilization, 1.0, 1e-12);
  EXPECT_LT(spill.kernels[0].utilization, 0.7);
  // One block more runs alone in a second wave, unable to pull the device's bandwidth.
  const double launch = h100.launch_overhead_seconds;
  EXPECT_GT(spill.seconds - launch, 1.4 * (full.seconds - launch));
}

// A loop that only adds up its input tiles (the sum of a split loop's parts) waits once, not once
// per iteration: its loads do not depend on each other.
TEST(CostModel, LoopsThatOnlySumTheirTilesWaitOnce) {
  targets::TargetProperties h100 = targets::builtin_target("h100");
  h100.loop_iteration_seconds = 1e-6;
  const KernelGraph fused = bench::build_fused("gqa", 1, DType::kFloat16);
  const std::optional<KernelGraph> split = split_loop(fused, fused.operators().size() - 1, 4);
  ASSERT_TRUE(split.has_value());
  const CostEstimate e = estimate_cost(*split, h100);
  ASSERT_EQ(e.kernels.size(), 2u);
  const KernelCost &chunks = e.kernels[0], &total = e.kernels[1];
  const size_t last = split->operators().size() - 1;
  ASSERT_EQ(split->operators()[last].block_graph->config().forloop_range, 4);
  EXPECT_NEAR(total.serial_seconds, 1e-6 * static_cast<double>(total.waves), 1e-15);
  const double chunk_iterations = static_cast<double>(split->operators()[last - 1].block_graph->config().forloop_range);
  ASSERT_GT(chunk_iterations, 1);
  EXPECT_NEAR(chunks.serial_seconds, 1e-6 * static_cast<double>(chunks.waves) * chunk_iterations, 1e-15)
      << "the chunks' loop computes: one wait per iteration";
}

// A split loop's chunks write float32 partial sums of float16 products: their matrix work runs at
// float16's rate, the operands', not at float32's.
TEST(CostModel, MatrixWorkRunsAtTheOperandsRate) {
  targets::TargetProperties h100 = targets::builtin_target("h100");
  const KernelGraph fused = bench::build_fused("gqa", 1, DType::kFloat16);
  const std::optional<KernelGraph> split = split_loop(fused, fused.operators().size() - 1, 4);
  ASSERT_TRUE(split.has_value());
  const double before = estimate_cost(*split, h100).kernels.at(0).seconds;
  h100.peak_flops_float32 = 1e6;  // float32 matrix work would now take seconds
  const CostEstimate e = estimate_cost(*split, h100);
  ASSERT_EQ(e.kernels.size(), 2u);
  EXPECT_GT(e.kernels[0].matrix_flops, 0);
  EXPECT_DOUBLE_EQ(e.kernels[0].seconds, before);
}

// L2 re-reads scale with the blocks that issue them (each compute unit takes in at most its share
// of the L2 bandwidth): attention's fused µGraph, whose blocks each read their batch's K and V,
// fills half of an H100 and reads its re-reads at half the L2 bandwidth.
TEST(CostModel, FewBlocksReadL2AtTheirShare) {
  targets::TargetProperties h100 = targets::builtin_target("h100");
  h100.memory_bandwidth = h100.peak_flops_float16 = h100.peak_flops_bfloat16 = 1e30;
  h100.peak_flops_float32 = h100.vector_flops_float32 = 1e30;
  const CostEstimate e = estimate_cost(bench::build_fused("gqa", 1, DType::kFloat16), h100);
  ASSERT_EQ(e.kernels.size(), 1u);
  const KernelCost &k = e.kernels[0];
  ASSERT_LT(k.blocks, h100.compute_units);
  ASSERT_GT(k.l2_bytes, 0);
  EXPECT_NEAR(
      (k.seconds - h100.launch_overhead_seconds) * 1e6,
      k.l2_bytes / h100.l2_bandwidth * static_cast<double>(h100.compute_units) / static_cast<double>(k.blocks) * 1e6,
      1e-9);
}

TEST(CostModel, LoopIterationLatencyBoundsLongLoops) {
  // The rmsnorm_linear µGraph loops 64 times per block; with a backend that needs 1 µs per
  // iteration it cannot take less than 64 µs, whatever its bytes and FLOPs say.
  targets::TargetProperties h100 = targets::builtin_target("h100");
  const KernelGraph fused = bench::build_fused("rmsnorm_linear", 1, DType::kFloat16);
  const double modeled = estimate_cost(fused, h100).seconds;
  h100.loop_iteration_seconds = 1e-6;
  const CostEstimate slow = estimate_cost(fused, h100);
  ASSERT_EQ(slow.kernels.size(), 1u);
  EXPECT_GT(slow.kernels[0].serial_seconds, modeled);
  // A block waiting moves no data and computes nothing: the waits add to the rest.
  EXPECT_NEAR(slow.seconds, modeled + slow.kernels[0].serial_seconds, 1e-12);
  EXPECT_NEAR(slow.kernels[0].serial_seconds,
              1e-6 * static_cast<double>(slow.kernels[0].waves) *
                  static_cast<double>(fused.operators().back().block_graph->config().forloop_range),
              1e-12);
}

// The backend's count of a loop's waits replaces the model's: gated_mlp's µGraph (32 iterations),
// which the CUDA backend streams with one wait in all, and a backend without an opinion.
TEST(CostModel, TheBackendsLoopWaitsReplaceTheModelsCount) {
  targets::TargetProperties h100 = targets::builtin_target("h100");
  h100.loop_iteration_seconds = 1e-6;
  const KernelGraph fused = bench::build_fused("gated_mlp", 1, DType::kFloat16);
  const size_t customized = fused.operators().size() - 1;
  const double iterations = static_cast<double>(fused.operators()[customized].block_graph->config().forloop_range);
  ASSERT_GT(iterations, 1);
  std::vector<size_t> asked;
  const BackendEstimates once = [&](const KernelGraph &g, size_t op) {
    EXPECT_EQ(&g, &fused);
    asked.push_back(op);
    return BackendKernelEstimate{1, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  };
  const BackendEstimates no_opinion = [](const KernelGraph &, size_t) { return BackendKernelEstimate{}; };
  const CostEstimate model = estimate_cost(fused, h100), streamed = estimate_cost(fused, h100, once),
                     unchanged = estimate_cost(fused, h100, no_opinion);
  ASSERT_EQ(streamed.kernels.size(), 1u);
  EXPECT_EQ(asked, std::vector<size_t>{customized}) << "asked once, for the customized operator only";
  const double waves = static_cast<double>(streamed.kernels[0].waves);
  EXPECT_NEAR(model.kernels.at(0).serial_seconds, 1e-6 * waves * iterations, 1e-15);
  EXPECT_NEAR(streamed.kernels[0].serial_seconds, 1e-6 * waves, 1e-15);
  EXPECT_LT(streamed.seconds, model.seconds);
  EXPECT_DOUBLE_EQ(unchanged.seconds, model.seconds);
}

// The backend's shared-memory time per block is added to the kernel's, once per block a compute
// unit takes in turn: gated_mlp's µGraph at b = 8 (its grid over and under the compute units).
TEST(CostModel, TheBackendsSharedMemoryTimeIsTakenInTurnsPerComputeUnit) {
  const targets::TargetProperties h100 = targets::builtin_target("h100");
  const KernelGraph fused = bench::build_fused("gated_mlp", 8, DType::kFloat16);
  const size_t customized = fused.operators().size() - 1;
  const BackendEstimates shared = [](const KernelGraph &, size_t) {
    return BackendKernelEstimate{std::nullopt, 2e-6, std::nullopt, std::nullopt, std::nullopt};
  };
  const CostEstimate model = estimate_cost(fused, h100), charged = estimate_cost(fused, h100, shared);
  ASSERT_EQ(charged.kernels.size(), 1u);
  const int64_t blocks = charged.kernels[0].blocks;
  const auto turns = static_cast<double>((blocks + h100.compute_units - 1) / h100.compute_units);
  EXPECT_EQ(model.kernels.at(0).shared_memory_seconds, 0);
  EXPECT_NEAR(charged.kernels[0].shared_memory_seconds, 2e-6 * turns, 1e-15) << blocks << " blocks";
  EXPECT_NEAR(charged.seconds - model.seconds, 2e-6 * turns, 1e-12);
  EXPECT_EQ(fused.operators()[customized].kind, OpKind::kCustomized);
}

// The backend's limit on resident blocks (its registers) counts the waves: gqa's µGraph split over
// 16 times its blocks, held one a compute unit, takes more waves and more time than the target's
// figures alone give.
TEST(CostModel, TheBackendsResidentBlocksCountTheWaves) {
  targets::TargetProperties h100 = targets::builtin_target("h100");
  h100.loop_iteration_seconds = 1e-6;
  const KernelGraph fused = bench::build_fused("gqa", 8, DType::kFloat16);
  const std::optional<KernelGraph> split = split_loop(fused, fused.operators().size() - 1, 16);
  ASSERT_TRUE(split);
  const BackendEstimates one = [](const KernelGraph &, size_t) {
    return BackendKernelEstimate{std::nullopt, std::nullopt, std::nullopt, 1, std::nullopt};
  };
  const CostEstimate model = estimate_cost(*split, h100), held = estimate_cost(*split, h100, one);
  const KernelCost &chunks = held.kernels.at(0);
  EXPECT_EQ(chunks.slots, h100.compute_units);
  EXPECT_EQ(chunks.waves, (chunks.blocks + h100.compute_units - 1) / h100.compute_units);
  EXPECT_GT(chunks.waves, model.kernels.at(0).waves) << chunks.blocks << " blocks";
  EXPECT_GT(held.seconds, model.seconds);
}

// The backend's dependent launch replaces the launch overhead of a customized kernel behind
// another customized kernel only: a split gated_mlp (its chunks, then their sum) charges it for
// the sum, not for the chunks, which follow a pre-defined kernel or nothing.
TEST(CostModel, TheBackendsDependentLaunchIsChargedBehindACustomizedKernel) {
  const targets::TargetProperties h100 = targets::builtin_target("h100");
  const KernelGraph fused = bench::build_fused("gqa", 1, DType::kFloat16);
  const std::optional<KernelGraph> split = split_loop(fused, fused.operators().size() - 1, 4);
  ASSERT_TRUE(split);
  const BackendEstimates overlapped = [](const KernelGraph &, size_t) {
    return BackendKernelEstimate{std::nullopt, std::nullopt, 0.5e-6, std::nullopt, std::nullopt};
  };
  const CostEstimate plain = estimate_cost(*split, h100), dependent = estimate_cost(*split, h100, overlapped);
  ASSERT_EQ(dependent.kernels.size(), 2u);
  EXPECT_EQ(dependent.kernels[0].launch_seconds, h100.launch_overhead_seconds) << "the first kernel";
  EXPECT_EQ(dependent.kernels[1].launch_seconds, 0.5e-6) << "the sum behind the chunks";
  EXPECT_NEAR(plain.seconds - dependent.seconds, h100.launch_overhead_seconds - 0.5e-6, 1e-12);
  const CostEstimate alone = estimate_cost(fused, h100, overlapped);
  ASSERT_EQ(alone.kernels.size(), 1u);
  EXPECT_EQ(alone.kernels[0].launch_seconds, h100.launch_overhead_seconds);
}

// exp over a [1024, 2048] float16 tensor by 64 blocks, each a slice of rows (4 KiB rows) or of
// columns (32 columns: 64-byte rows).
KernelGraph sliced_exp(bool columns) {
  KernelGraph g;
  const TensorId x = g.new_input({1024, 2048}, DType::kFloat16);
  BlockGraphConfig config;
  config.grid = {64, 1, 1};
  auto bg = std::make_shared<BlockGraph>(config);
  const std::array<int, 3> imap = {columns ? 1 : 0, -1, -1};
  const TensorId t = bg->new_input({1024, 2048}, DType::kFloat16, imap, -1);
  bg->new_output(bg->unary(OpKind::kExp, t), imap, -1);
  g.mark_output(g.customized({x}, bg)[0]);
  return g;
}

// Memory reaches the cores in whole cache lines: slices of 64-byte rows on a GPU of 128-byte lines
// move twice their bytes, whole rows their own; with 64-byte lines both move the same. Device
// memory moves its access units (64 bytes on the H100): the 64-byte rows take their own bytes from
// it and the rest of their lines from L2, and twice their bytes from it where its unit is the line.
TEST(CostModel, ShortRowsMoveWholeCacheLines) {
  targets::TargetProperties h100 = targets::builtin_target("h100");
  const double bytes = 1024.0 * 2048 * 2;
  const KernelCost rows = estimate_cost(sliced_exp(false), h100).kernels.at(0),
                   columns = estimate_cost(sliced_exp(true), h100).kernels.at(0);
  EXPECT_DOUBLE_EQ(rows.dram_bytes + rows.l2_bytes, 2 * bytes);
  EXPECT_DOUBLE_EQ(columns.dram_bytes + columns.l2_bytes, 3 * bytes);  // reads twice over
  EXPECT_DOUBLE_EQ(columns.dram_bytes, 2 * bytes);                     // its input once, its output
  EXPECT_GT(columns.seconds, rows.seconds);
  h100.memory_access_bytes = 128;
  EXPECT_DOUBLE_EQ(estimate_cost(sliced_exp(true), h100).kernels.at(0).dram_bytes, 3 * bytes);
  h100.cache_line_bytes = 64;
  h100.memory_access_bytes = 0;
  EXPECT_DOUBLE_EQ(estimate_cost(sliced_exp(true), h100).seconds, estimate_cost(sliced_exp(false), h100).seconds);
}

TEST(CostModel, SharedMemoryMakesAKernelInfeasible) {
  // A 128x384 float16 tile (96 KiB) twice: fits an H100 block, not an MI300X work-group.
  KernelGraph g;
  const TensorId x = g.new_input({128, 384}, DType::kFloat16);
  auto bg = std::make_shared<BlockGraph>(BlockGraphConfig{});
  const TensorId t = bg->new_input({128, 384}, DType::kFloat16, kReplicated, -1);
  bg->new_output(bg->unary(OpKind::kNeg, t), kReplicated, -1);
  g.mark_output(g.customized({x}, bg)[0]);
  EXPECT_TRUE(estimate_cost(g, targets::builtin_target("h100")).feasible);
  const CostEstimate mi300x = estimate_cost(g, targets::builtin_target("mi300x"));
  EXPECT_FALSE(mi300x.feasible);
  EXPECT_EQ(mi300x.infeasible_reason,
            "customized 1x1x1 loop 1 needs 196608 bytes of shared memory per block; mi300x has "
            "65536");
}

TEST(CostModel, BytesAndFlopsOfAPredefinedMatmul) {
  KernelGraph g;
  const TensorId a = g.new_input({64, 128}, DType::kFloat16);
  const TensorId b = g.new_input({128, 32}, DType::kFloat16);
  g.mark_output(g.matmul(a, b));
  const CostEstimate e = estimate_cost(g, targets::builtin_target("h100"));
  ASSERT_EQ(e.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(e.kernels[0].dram_bytes, 2.0 * (64 * 128 + 128 * 32 + 64 * 32));
  EXPECT_DOUBLE_EQ(e.kernels[0].matrix_flops, 2.0 * 64 * 128 * 32);
}

// A 2-core AVX-512 host with fixed figures (the detected host's vary from machine to machine).
targets::TargetProperties test_cpu() {
  targets::TargetProperties cpu = targets::host_cpu_target();
  cpu.compute_units = 2;
  cpu.warp_width = 16;
  cpu.memory_bandwidth = 10e9;
  cpu.l2_bandwidth = 40e9;
  cpu.shared_memory_per_block = cpu.shared_memory_per_compute_unit = 2 << 20;
  cpu.peak_flops_float32 = cpu.peak_flops_float16 = cpu.peak_flops_bfloat16 = cpu.vector_flops_float32 =
      2 * 2.5e9 * 16 * 4;
  return cpu;
}

// x[rows, k] · W[k, n] in `dt` on a grid of `grid` column blocks; the loop takes k in `loop`
// steps (sums accumulated), or with `split_rows` x's rows in `loop` steps, each step reading the
// block's whole W.
KernelGraph weight_product(int64_t rows, int64_t k, int64_t n, DType dt, int64_t grid, int64_t loop, bool split_rows) {
  KernelGraph g;
  const TensorId x = g.new_input({rows, k}, dt), w = g.new_input({k, n}, dt);
  BlockGraphConfig config;
  config.grid = {grid, 1, 1};
  config.forloop_range = loop;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId xt = bg->new_input({rows, k}, dt, kReplicated, split_rows ? 0 : 1);
  const GridMap columns = grid > 1 ? GridMap{1, -1, -1} : kReplicated;
  const TensorId wt = bg->new_input({k, n}, dt, columns, split_rows ? -1 : 0);
  const TensorId product = bg->matmul(xt, wt);
  if (split_rows) {
    bg->new_output(product, columns, 0);
  } else {
    bg->new_output(bg->accumulate(OpKind::kAccumSum, product), columns, -1);
  }
  g.mark_output(g.customized({x, w}, bg)[0]);
  return g;
}

// LoRA's product X[16,256] · W[256,4096] in float16.
KernelGraph lora_product(int64_t grid, int64_t loop, bool split_rows) {
  return weight_product(16, 256, 4096, DType::kFloat16, grid, loop, split_rows);
}

// x · W of a decode step (8 rows; 3584 = 7 · 512, as Qwen2.5-7B's hidden size) in bfloat16.
KernelGraph decode_product(int64_t grid, int64_t loop) {
  return weight_product(8, 3584, 3584, DType::kBFloat16, grid, loop, false);
}

// A GPU's matrix units take a block's product only in whole tiles of their n columns: 3584
// columns over 128 blocks leave each 28 (not a multiple of the H100's 8), and the product runs as
// scalar code (benchmarks/models/RESULTS.md, "products the tensor cores cannot take"). Over 112
// blocks, 32 columns each, it stays on the matrix units; a CPU has none to miss.
TEST(CostModel, ProductsOfTilesTheMatrixUnitsCannotTakeRunAsScalarCode) {
  targets::TargetProperties h100 = targets::builtin_target("h100");
  h100.memory_bandwidth = h100.l2_bandwidth = 1e30;  // the arithmetic alone
  h100.loop_iteration_seconds = 0;
  const KernelCost odd = estimate_cost(decode_product(128, 16), h100).kernels.at(0);
  const KernelCost even = estimate_cost(decode_product(112, 16), h100).kernels.at(0);
  const double flops = 2.0 * 8 * 3584 * 3584;
  EXPECT_DOUBLE_EQ(odd.matrix_flops, 0);
  EXPECT_DOUBLE_EQ(odd.scalar_matmul_flops, flops);
  EXPECT_DOUBLE_EQ(even.matrix_flops, flops);
  EXPECT_DOUBLE_EQ(even.scalar_matmul_flops, 0);
  EXPECT_GT(odd.seconds, 10 * even.seconds);
  // float32 has no matrix rate above the vector one here: every product is priced so already.
  const KernelCost f32 =
      estimate_cost(weight_product(8, 3584, 3584, DType::kFloat32, 128, 16, false), h100).kernels.at(0);
  EXPECT_DOUBLE_EQ(f32.scalar_matmul_flops, 0);
  EXPECT_DOUBLE_EQ(f32.matrix_flops, flops);
  const targets::TargetProperties cpu = test_cpu();
  EXPECT_DOUBLE_EQ(estimate_cost(decode_product(128, 16), cpu).kernels.at(0).scalar_matmul_flops, 0);
}

// A block's product in scalar code sums each output over k in a chain of dependent steps: a
// thread an output (four where the tile's rows hold whole float4s), in rounds of the block's
// threads, once per wave (benchmarks/models/RESULTS.md, "Scalar products wait on their sums").
// Products on the matrix units wait on no such chain in the model.
TEST(CostModel, ScalarProductsWaitOnTheirSumsChain) {
  targets::TargetProperties h100 = targets::builtin_target("h100");
  h100.loop_iteration_seconds = 0;
  const double clock = h100.vector_flops_float32 / (static_cast<double>(h100.compute_units) * 128 * 2);
  // 28 columns a block: float4s, 8 · 28 / 4 outputs' sums on the test graph's one thread.
  const KernelCost float4s = estimate_cost(decode_product(128, 16), h100).kernels.at(0);
  EXPECT_NEAR(float4s.serial_seconds, static_cast<double>(float4s.waves) * 56 * 3584 * 66 / clock, 1e-12);
  // 14 columns: a sum an output, 8 · 14 of them.
  const KernelCost scalar = estimate_cost(decode_product(256, 16), h100).kernels.at(0);
  EXPECT_NEAR(scalar.serial_seconds, static_cast<double>(scalar.waves) * 112 * 3584 * 36 / clock, 1e-12);
  EXPECT_DOUBLE_EQ(estimate_cost(decode_product(112, 16), h100).kernels.at(0).serial_seconds, 0);
}

// A µGraph its backend runs as one product of its whole inputs (whole_product: the CUDA plugin's
// GEMM of a prefill product) is priced as that product on the whole device, whatever its grid
// and loop: candidates that differ only there are twins, as they measure.
TEST(CostModel, WholeProductsArePricedAsTheProductOfTheirInputs) {
  const targets::TargetProperties h200 = targets::builtin_target("h200");
  const BackendEstimates whole = [](const KernelGraph &, size_t) {
    BackendKernelEstimate e;
    e.whole_product = true;
    return e;
  };
  const KernelCost a =
      estimate_cost(weight_product(256, 4096, 4096, DType::kFloat16, 64, 32, false), h200, whole).kernels.at(0);
  const KernelCost b =
      estimate_cost(weight_product(256, 4096, 4096, DType::kFloat16, 128, 64, false), h200, whole).kernels.at(0);
  EXPECT_EQ(a.slots, 0);
  EXPECT_DOUBLE_EQ(a.dram_bytes, (256.0 * 4096 + 4096.0 * 4096 + 256.0 * 4096) * 2);
  EXPECT_DOUBLE_EQ(a.l2_bytes, 0);
  EXPECT_DOUBLE_EQ(a.matrix_flops, 2.0 * 256 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(a.seconds, b.seconds);
  // By its tiles, the same two µGraphs are priced apart.
  EXPECT_NE(estimate_cost(weight_product(256, 4096, 4096, DType::kFloat16, 64, 32, false), h200).seconds,
            estimate_cost(weight_product(256, 4096, 4096, DType::kFloat16, 128, 64, false), h200).seconds);
}

// X[16, 2048] · W[2048, 65536] in float16 on 2 × 1024 blocks, 2 waves: W is larger than L2, but
// the two blocks that read each of its tiles are neighbours (W replicated along x) and run in the
// same wave, so the second read finds the tile in L2; replicated along y (1024 blocks apart) most
// second reads come from DRAM again.
TEST(CostModel, ReReadsByBlocksOfTheSameWaveComeFromL2) {
  const targets::TargetProperties h200 = targets::builtin_target("h200");
  const auto product = [&h200](bool w_along_x) {
    KernelGraph g;
    const TensorId x = g.new_input({16, 2048}, DType::kFloat16), w = g.new_input({2048, 65536}, DType::kFloat16);
    BlockGraphConfig config;
    config.grid = w_along_x ? std::array<int64_t, 3>{1024, 2, 1} : std::array<int64_t, 3>{2, 1024, 1};
    config.block_threads = 128;
    config.forloop_range = 16;
    auto bg = std::make_shared<BlockGraph>(config);
    const GridMap rows = w_along_x ? GridMap{-1, 0, -1} : GridMap{0, -1, -1};
    const GridMap columns = w_along_x ? GridMap{1, -1, -1} : GridMap{-1, 1, -1};
    const GridMap out = w_along_x ? GridMap{1, 0, -1} : GridMap{0, 1, -1};
    const TensorId xt = bg->new_input({16, 2048}, DType::kFloat16, rows, 1);
    const TensorId wt = bg->new_input({2048, 65536}, DType::kFloat16, columns, 0);
    bg->new_output(bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, wt)), out, -1);
    g.mark_output(g.customized({x, w}, bg)[0]);
    return estimate_cost(g, h200).kernels.at(0);
  };
  const double w_bytes = 2048.0 * 65536 * 2;
  const KernelCost neighbours = product(false), apart = product(true);
  ASSERT_EQ(neighbours.waves, 2);
  ASSERT_EQ(apart.waves, 2);
  EXPECT_LT(neighbours.dram_bytes, 1.01 * w_bytes);
  EXPECT_GT(apart.dram_bytes, 1.5 * w_bytes);
  EXPECT_GT(neighbours.l2_bytes, apart.l2_bytes + 0.5 * w_bytes);
}

// The CPU plugin's micro-kernel makes a product's tile shape matter (the estimates of such
// candidates were within 1% of each other, all bound by W's bytes): short steps of k pay each
// block of sums' set-up and store again and again; 8-row steps read W twice, in narrow blocks.
TEST(CostModel, CpuTileShapesAndLoopsRankApart) {
  const targets::TargetProperties cpu = test_cpu();
  const double whole = estimate_cost(lora_product(2, 1, false), cpu).seconds;
  const double k_steps = estimate_cost(lora_product(2, 16, false), cpu).seconds;
  const double row_steps = estimate_cost(lora_product(2, 2, true), cpu).seconds;
  EXPECT_GT(k_steps, 1.05 * whole);
  EXPECT_GT(row_steps, 1.05 * whole);
  // One block leaves a core idle.
  EXPECT_GT(estimate_cost(lora_product(1, 1, false), cpu).seconds, 1.5 * whole);
}

TEST(CostModel, CpuMatmulCostFollowsThePrintersBlocks) {
  // 8 rows of a 16-bit B: 32 columns a block, 16 sums' vectors in registers (half a cycle per FMA).
  const CpuMatmulCost decode = cpu_matmul_cost(1, 8, 4096, 4096, 2, 2, 2, 16);
  EXPECT_DOUBLE_EQ(decode.cycles, 128.0 * (4096 * (2 * 2 + 8 * (2 + 2 * 0.5)) + 8 * 2 * 3));
  EXPECT_DOUBLE_EQ(decode.b_bytes, 4096.0 * 4096 * 2);
  // A float32 B keeps 128 columns: 8 × 8 vectors of sums spill (a cycle per FMA).
  const CpuMatmulCost wide = cpu_matmul_cost(1, 8, 4096, 4096, 4, 4, 4, 16);
  EXPECT_DOUBLE_EQ(wide.cycles, 32.0 * (4096 * (8 + 8 * (1 + 8 * 1.0)) + 8 * 8 * 2));
  // 32 rows: two blocks of rows, B read twice.
  EXPECT_DOUBLE_EQ(cpu_matmul_cost(1, 32, 4096, 4096, 4, 4, 4, 16).b_bytes, 2 * 4096.0 * 4096 * 4);
}

TEST(CostModel, CpuKernelLevelMatmulReadsBOncePerBlockOfRows) {
  KernelGraph g;
  const TensorId a = g.new_input({32, 256}, DType::kFloat32);
  const TensorId b = g.new_input({256, 512}, DType::kFloat32);
  g.mark_output(g.matmul(a, b));
  const CostEstimate e = estimate_cost(g, test_cpu());
  ASSERT_EQ(e.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(e.kernels[0].dram_bytes, 4.0 * (32 * 256 + 256 * 512 + 32 * 512));
  EXPECT_DOUBLE_EQ(e.kernels[0].l2_bytes, 4.0 * 256 * 512);  // the second block of 16 rows, from cache
  EXPECT_GT(e.kernels[0].core_cycles, 0);
}

// Products the plugin sends to libxsmm are counted at its rate: two vector FMAs a cycle at 3/4,
// a call's set-up per block, and a vector a cycle to convert 16-bit operands and results.
TEST(CostModel, CpuGemmProductsAtTheSmallGemmsRate) {
  const CpuMatmulCost loop = cpu_matmul_cost(2, 256, 4096, 64, 2, 2, 2, 16);
  const CpuMatmulCost gemm = cpu_matmul_cost(2, 256, 4096, 64, 2, 2, 2, 16, true);
  EXPECT_DOUBLE_EQ(gemm.cycles, 2.0 * 256 * 4096 * 64 / 16 / 1.5 + 2 * 16 * 32 * 50 +
                                    2.0 * (256 * 64 + 64 * 4096 + 256 * 4096) / 16);
  EXPECT_LT(gemm.cycles, loop.cycles / 2);
  EXPECT_DOUBLE_EQ(gemm.b_bytes, loop.b_bytes);
  // A kernel-level product of 8 rows keeps the loop; of 16, it goes to the small-GEMM.
  for (const int64_t rows : {8, 16}) {
    KernelGraph g;
    g.mark_output(g.matmul(g.new_input({rows, 256}, DType::kFloat16), g.new_input({256, 512}, DType::kFloat16)));
    const double cycles = estimate_cost(g, test_cpu()).kernels.at(0).core_cycles;
    EXPECT_DOUBLE_EQ(cycles, cpu_matmul_cost(1, rows, 512, 256, 2, 2, 2, 16, rows >= 16).cycles) << rows;
  }
}

// A CPU block runs its operators one after another over whole tiles in its arena: each tile
// computed is written once and read by each reader, elementwise chains computed in their
// reader's loop take none. A row softmax over tiles of 16 × 4096 floats: x's tile written, read
// by exp; exp's written, read by the sum and the division; the sums written and read; the
// quotients written and read by the saver.
TEST(CostModel, CpuCountsPassesOverTheArena) {
  KernelGraph g;
  const TensorId x = g.new_input({32, 4096}, DType::kFloat32);
  BlockGraphConfig config;
  config.grid = {2, 1, 1};
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId xt = bg->new_input({32, 4096}, DType::kFloat32, GridMap{0, -1, -1}, -1);
  const TensorId e = bg->unary(OpKind::kExp, xt);
  bg->new_output(bg->binary(OpKind::kDiv, e, bg->reduction(OpKind::kReduction, e, 1)), GridMap{0, -1, -1}, -1);
  g.mark_output(g.customized({x}, bg)[0]);
  const double tile = 2 * 4.0 * 16 * 4096, sums = 2 * 4.0 * 16;
  EXPECT_DOUBLE_EQ(estimate_cost(g, test_cpu()).kernels.at(0).l2_bytes, 7 * tile + 2 * sums);
}

// A decode product whose weight tile is read in place walks its rows side by side: 128 rows an
// iteration are charged more DRAM time than 16 (the same bytes in 8 times the iterations).
TEST(CostModel, CpuInPlaceTilesOfManyRowsWaitOnMemory) {
  const auto product = [](int64_t loop) {
    KernelGraph g;
    const TensorId x = g.new_input({8, 4096}, DType::kFloat32), w = g.new_input({4096, 4096}, DType::kFloat32);
    BlockGraphConfig config;
    config.grid = {4, 1, 1};
    config.forloop_range = loop;
    auto bg = std::make_shared<BlockGraph>(config);
    const TensorId xt = bg->new_input({8, 4096}, DType::kFloat32, kReplicated, 1);
    const TensorId wt = bg->new_input({4096, 4096}, DType::kFloat32, GridMap{1, -1, -1}, 0);
    bg->new_output(bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, wt)), GridMap{1, -1, -1}, -1);
    g.mark_output(g.customized({x, w}, bg)[0]);
    return estimate_cost(g, test_cpu()).kernels.at(0).dram_bytes;
  };
  const double weights = 4.0 * 4096 * 4096;
  EXPECT_NEAR(product(32) - product(256), weights * (std::pow(4.0, 0.4) - 1), 1.0);
}

// A kernel-level decode product (fewer rows than a block's: the generated loop, not the
// small-GEMM) walks all k rows of B's column blocks side by side, as an in-place tile of k rows;
// one of a block's rows or more goes to the small-GEMM and is charged B once.
TEST(CostModel, CpuKernelLevelDecodeProductsWaitOnMemory) {
  const auto product = [](int64_t rows) {
    KernelGraph g;
    g.mark_output(g.matmul(g.new_input({rows, 4096}, DType::kFloat32), g.new_input({4096, 1024}, DType::kFloat32)));
    return estimate_cost(g, test_cpu()).kernels.at(0).dram_bytes;
  };
  const double weights = 4.0 * 4096 * 1024;
  EXPECT_NEAR(product(8), weights * std::pow(4096.0 / 32, 0.4) + 4.0 * 8 * (4096 + 1024), 1.0);
  EXPECT_NEAR(product(16), weights + 4.0 * 16 * (4096 + 1024), 1.0);
}

}  // namespace
}  // namespace yirage::search
