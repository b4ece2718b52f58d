// The CUDA generator's kernel-level code, read as text: matmuls stream their weights, and on
// sm_90 every kernel waits for the previous one before it touches memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include "benchmark_ugraphs.hpp"
#include "cuda/codegen/cuda_source.hpp"
#include "cuda/codegen/generator_test_support.hpp"
#include "ir/block_graph.hpp"
#include "ir/rebuild.hpp"
#include "search/loop_split.hpp"
#include "testing/test_support.hpp"

namespace yirage::cuda {
namespace {

using namespace generator_test;

// Weight products stream B past L1: rmsnorm_linear's 2 rows on the FMA units in batches of 2 B
// rows; gated_mlp's 8 rows on tensor cores from sm_80 (batches of 4), on the FMA units before;
// rmsnorm_linear's 16 rows at b = 8 in one row block (B read once), the mma's upper rows A's, in
// blocks of 8 warps that fit two per multiprocessor where the grid outnumbers them (192 column
// blocks on 132), else 16 (gated_mlp's 128). Before the dependent-launch wait (sm_90), the first
// 32 of each warp's rows of B are prefetched into L2.
TEST(CudaCodegenKernels, WeightProductsStreamTheirWeights) {
  const codegen::CudaKernel two_rows = unfused_matmul("rmsnorm_linear", 90);
  EXPECT_NE(two_rows.source.find("uint4 raw[2], next[2];"), std::string::npos);
  EXPECT_NE(two_rows.source.find("yr_stream16(pb + (q + u * 8)"), std::string::npos);
  EXPECT_EQ(two_rows.source.find("yr_mma16(pb"), std::string::npos);
  for (int cc : {80, 90}) {
    const codegen::CudaKernel eight_rows = unfused_matmul("gated_mlp", cc);
    EXPECT_NE(eight_rows.source.find("next[u] = yr_stream16(pbp + (base + 32 + 2 * u)"), std::string::npos) << cc;
    EXPECT_NE(eight_rows.source.find("yr_mma16(pb, tc[j], ar.x, au.x, ar.y, au.y"), std::string::npos) << cc;
    EXPECT_NE(eight_rows.source.find("const bool a_up = false;"), std::string::npos) << cc;  // rows 8-15: zeros
  }
  // 16 rows: A's operands of a batch are one 16-byte load per row, B's rows in the same k order.
  const codegen::CudaKernel sixteen_rows = unfused_matmul("rmsnorm_linear", 90, 8);
  EXPECT_NE(sixteen_rows.source.find("const bool a_up = i0 + g + 8 < 16;"), std::string::npos);
  EXPECT_NE(sixteen_rows.source.find("if (a_up) nu = yr_raw16(pau + base + 32);"), std::string::npos);
  EXPECT_NE(sixteen_rows.source.find("pb + (8 * (g >> 1) + (g & 1)) * 6144"), std::string::npos);
  EXPECT_NE(sixteen_rows.source.find("if (aligned && (reinterpret_cast<unsigned long long>(in0) & 15) == 0)"),
            std::string::npos);
  EXPECT_EQ(sixteen_rows.grid[0], 6144 / 32);
  EXPECT_EQ(unfused_matmul("rmsnorm_linear", 75, 8).grid[0], 2 * 6144 / 32);  // 8 rows per block on FMAs
  const codegen::CudaKernel one_wave = unfused_matmul("rmsnorm_linear", h100_device(), 8);
  EXPECT_EQ(one_wave.block_threads, 256);
  EXPECT_NE(one_wave.source.find("__launch_bounds__(256, 2)"), std::string::npos);
  // 8 warps, k slices of 4096 / 8 = 512 rows: 32 of each prefetched.
  EXPECT_NE(one_wave.source.find("const int64_t k0 = kw * 512;"), std::string::npos);
  EXPECT_NE(one_wave.source.find("k0 + 32 < p1"), std::string::npos);
  const codegen::CudaKernel two_rows_h100 = unfused_matmul("rmsnorm_linear", h100_device());
  const size_t prefetch = two_rows_h100.source.find("prefetch.global.L2");
  EXPECT_LT(prefetch, two_rows_h100.source.find("griddepcontrol.wait"));
  // 16 warps, k slices of 4096 / 16 = 256 rows.
  EXPECT_NE(two_rows_h100.source.find("const int64_t k0 = kw * 256;"), std::string::npos);
  EXPECT_NE(unfused_matmul("gated_mlp", h100_device()).source.find("prefetch.global.L2"), std::string::npos);
  // Before sm_90 no kernel waits for the previous one: nothing to prefetch during.
  EXPECT_EQ(unfused_matmul("gated_mlp", 80).source.find("prefetch.global.L2"), std::string::npos);
  EXPECT_EQ(sixteen_rows.block_threads, 512);  // the multiprocessors unknown
  EXPECT_EQ(unfused_matmul("gated_mlp", h100_device()).block_threads, 512);
  const codegen::CudaKernel turing = unfused_matmul("gated_mlp", 75);
  EXPECT_EQ(turing.source.find("yr_mma16(pb"), std::string::npos);
  EXPECT_NE(turing.source.find("uint4 raw[4], next[4];"), std::string::npos);
  EXPECT_EQ(turing.source.find("yr_raw16(pb"), std::string::npos);
}

// On the H100 (132 multiprocessors) a product of one row by k >= 2048 takes tiles of 8 lanes of
// columns (64 of 16-bit data), and its k is split over blocks until there are three blocks per
// multiprocessor, while the grid stays resident with 4 warps a block (8 blocks per
// multiprocessor) and each chunk keeps 128 rows; other products (more rows, a shorter k) keep
// tiles of 4 lanes (32) and k whole. Then the warps per block are the most with which the grid is
// resident (16, 8 or 4; on the tensor cores at one, two or four blocks per multiprocessor).
TEST(CudaCodegenKernels, WeightProductsSplitKOverBlocks) {
  struct Case {
    int64_t m, k, n, blocks, threads, per_sm, splits;
  };
  for (const Case &c :
       {Case{1, 4096, 6144, 768, 128, 8, 8}, Case{1, 8192, 10240, 640, 128, 8, 4}, Case{1, 3584, 18944, 592, 128, 8, 2},
        Case{1, 4096, 40960, 640, 128, 8, 1}, Case{8, 3584, 3584, 112, 512, 1, 1}, Case{8, 28672, 8192, 256, 256, 2, 1},
        Case{8, 5120, 10240, 320, 128, 4, 1}, Case{16, 4096, 6144, 192, 256, 2, 1}, Case{1, 1024, 4096, 128, 256, 2, 1},
        Case{1, 2048, 520, 144, 64, 2, 16}}) {
    KernelGraph g;
    g.mark_output(g.matmul(g.new_input({c.m, c.k}, DType::kBFloat16), g.new_input({c.k, c.n}, DType::kBFloat16)));
    const codegen::CudaKernel kernel =
        codegen::cuda_source(serialize::make_kernel_program(g, g.operators().size() - 1), h100_device());
    const std::string shape = std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n);
    EXPECT_EQ(kernel.grid[0], c.blocks) << shape;
    EXPECT_EQ(kernel.block_threads, c.threads) << shape;
    EXPECT_NE(
        kernel.source.find("__launch_bounds__(" + std::to_string(c.threads) + ", " + std::to_string(c.per_sm) + ")"),
        std::string::npos)
        << shape;
    // Each warp's slice of its block's chunk of k, in whole steps of the k lanes.
    const bool wide = c.m == 1 && c.k >= 2048;
    const int64_t warps = c.threads / 32, lanes = wide ? 4 : 8;
    const int64_t slice = (c.k / c.splits / warps + lanes - 1) / lanes * lanes;
    const int64_t tiles = c.blocks / c.splits, tile_cols = wide ? 64 : 32;
    EXPECT_EQ(tiles, (c.n + tile_cols - 1) / tile_cols * ((c.m + 15) / 16)) << shape;
    if (c.splits == 1) {
      EXPECT_NE(kernel.source.find("const int64_t k0 = kw * " + std::to_string(slice) + ";"), std::string::npos)
          << shape;
      EXPECT_EQ(kernel.workspace_bytes, 0) << shape;
      EXPECT_EQ(kernel.source.find("yr_ws"), std::string::npos) << shape;
      continue;
    }
    EXPECT_NE(kernel.source.find("const int64_t ks = blockIdx.x / " + std::to_string(tiles) + ";"), std::string::npos)
        << shape;
    EXPECT_NE(kernel.source.find("const int64_t k0 = (ks * " + std::to_string(warps) + " + kw) * " +
                                 std::to_string(slice) + ";"),
              std::string::npos)
        << shape;
    // The workspace: a counter per tile (in whole 256 bytes), then each tile's chunks' sums.
    EXPECT_EQ(kernel.workspace_bytes, (tiles * 4 + 255) / 256 * 256 + tiles * c.splits * tile_cols * 4) << shape;
    EXPECT_NE(kernel.source.find("unsigned char *__restrict__ yr_ws)"), std::string::npos) << shape;
    EXPECT_NE(kernel.source.find("last_block = atomicAdd(count, 1u) == " + std::to_string(c.splits) + "u - 1u;"),
              std::string::npos)
        << shape;
    EXPECT_NE(kernel.source.find("if (last_block) *count = 0u;"), std::string::npos) << shape;
    EXPECT_NE(kernel.source.find("for (int c = 0; c < " + std::to_string(c.splits) + "; ++c) sum0 += __ldcg(chunks"),
              std::string::npos)
        << shape;
  }
  // Without the multiprocessors (or with YIRAGE_CUDA_K_SPLIT=0, or in HIP) nothing is split.
  for (codegen::CudaTarget target : {h100_like(90), h100_device()}) {
    target.k_split = target.multiprocessors == 0;
    KernelGraph g;
    g.mark_output(g.matmul(g.new_input({1, 4096}, DType::kFloat16), g.new_input({4096, 6144}, DType::kFloat16)));
    const codegen::CudaKernel kernel =
        codegen::cuda_source(serialize::make_kernel_program(g, g.operators().size() - 1), target);
    EXPECT_EQ(kernel.workspace_bytes, 0);
    EXPECT_EQ(kernel.grid[0], 6144 / 32);
  }
}

// On sm_90 every kernel waits for the previous kernel in the stream before it reads or writes
// memory, so the plugin may launch it as a programmatic dependent; before the wait come only
// arithmetic and L2 prefetches of the weights (the weight product's); before sm_90 there is no
// such wait.
TEST(CudaCodegenKernels, KernelsWaitForThePreviousOneOnHopper) {
  const KernelGraph graph = bench::build_unfused("gated_mlp", 1, DType::kFloat16, 16);
  const std::vector<bool> live = live_operators(graph);
  for (size_t i = 0; i < graph.operators().size(); ++i) {
    if (!live[i] || graph.operators()[i].kind == OpKind::kInput) continue;
    const auto program = serialize::make_kernel_program(graph, i);
    const codegen::CudaKernel hopper = codegen::cuda_source(program, h100_like(90));
    EXPECT_TRUE(hopper.waits_for_previous);
    // The estimate's dependent launch: a share of the launch's overhead.
    EXPECT_DOUBLE_EQ(hopper.dependent_launch_seconds(2e-6), codegen::kCudaDependentLaunchShare * 2e-6);
    const size_t body = hopper.source.find(codegen::kCudaKernelSymbol);
    const size_t wait = hopper.source.find("griddepcontrol.wait;", body);
    ASSERT_NE(wait, std::string::npos) << op_name(graph.operators()[i].kind);
    // Nothing before the wait names a buffer (in0…, out0…) but an L2 prefetch and the choice
    // of the weights it prefetches (a pointer, not a load).
    std::istringstream before(hopper.source.substr(body, wait - body));
    int prefetches = 0;
    for (std::string line; std::getline(before, line);) {
      if (line.find("prefetch.global.L2") != std::string::npos) {
        ++prefetches;
      } else if (line.find(codegen::kCudaKernelSymbol) == std::string::npos &&
                 line.find("const auto *wb = ") == std::string::npos) {
        EXPECT_EQ(line.find("in0"), std::string::npos) << line;
        EXPECT_EQ(line.find("in1"), std::string::npos) << line;
        EXPECT_EQ(line.find("out0"), std::string::npos) << line;
      }
    }
    EXPECT_EQ(prefetches, graph.operators()[i].kind == OpKind::kMatmul ? 1 : 0)
        << op_name(graph.operators()[i].kind) << hopper.source.substr(body, wait - body);
    const codegen::CudaKernel ampere = codegen::cuda_source(program, h100_like(80));
    EXPECT_FALSE(ampere.waits_for_previous);
    EXPECT_EQ(ampere.dependent_launch_seconds(2e-6), -1);
    EXPECT_EQ(ampere.source.find("griddepcontrol"), std::string::npos);
  }
}

// Flat elementwise operators on whole 16-byte groups load and store vectors where every pointer
// is 16-byte aligned, and fall back to one element a thread where one is not; broadcasting
// operators and sizes that leave a partial vector take the one-element loop alone.
TEST(CudaCodegenKernels, ElementwiseOperatorsRunOnVectors) {
  const auto source_of = [](const KernelGraph &g) {
    return codegen::cuda_source(serialize::make_kernel_program(g, g.operators().size() - 1), h100_device());
  };
  KernelGraph flat;
  const TensorId a = flat.new_input({256, 14336}, DType::kFloat16);
  flat.mark_output(flat.binary(OpKind::kMul, a, flat.new_input({256, 14336}, DType::kFloat16)));
  const codegen::CudaKernel mul = source_of(flat);
  EXPECT_NE(mul.source.find("reinterpret_cast<const uint4 *>(in1)[v]"), std::string::npos) << mul.source;
  EXPECT_NE(mul.source.find("& 15) == 0)"), std::string::npos);
  EXPECT_NE(mul.source.find("yr_ld(in0 + e0) * yr_ld(in1 + e0)"), std::string::npos);  // the unaligned loop
  EXPECT_EQ(mul.grid[0], 256 * 14336 / 8 / 256);
  KernelGraph f32;
  f32.mark_output(f32.unary(OpKind::kSilu, f32.new_input({5, 12}, DType::kFloat32)));  // 4 lanes
  const std::string vector_load = "reinterpret_cast<const uint4 *>(in0)[v]";
  EXPECT_NE(source_of(f32).source.find(vector_load), std::string::npos);
  KernelGraph broadcast;
  broadcast.mark_output(broadcast.binary(OpKind::kAdd, broadcast.new_input({4, 1, 8}, DType::kFloat16),
                                         broadcast.new_input({1, 3, 8}, DType::kFloat16)));
  EXPECT_EQ(source_of(broadcast).source.find(vector_load), std::string::npos);
  KernelGraph partial;
  partial.mark_output(partial.unary(OpKind::kExp, partial.new_input({3, 5}, DType::kFloat16)));
  EXPECT_EQ(source_of(partial).source.find(vector_load), std::string::npos);
}

// A pre-defined rms_norm sums its row's squares as before (one reduction, two barriers per row);
// only where the mean square is out of float32's range (a row of 1e19s overflows it, one of
// 1e-23s underflows it; the block takes the branch together) does it reduce the row again: its
// largest magnitude, then its squares scaled by it, and stores (x · scale) · inv, never
// x · (1 / rms): a row held in registers is scaled in place, a streamed one (over 32 elements per
// thread) as it is stored.
TEST(CudaCodegenKernels, RmsNormScalesRowsOutOfRangeByTheirLargestMagnitude) {
  for (const int64_t n : {int64_t{4000}, int64_t{9000}}) {
    KernelGraph g;
    g.mark_output(g.rms_norm(g.new_input({3, n}, DType::kFloat32), {n}, 1e-6, std::nullopt));
    const std::string source =
        codegen::cuda_source(serialize::make_kernel_program(g, g.operators().size() - 1), h100_device()).source;
    const std::string at = "row of " + std::to_string(n);
    const size_t branch = source.find("if (!(yr_clamp(mean, 1.97215226e-31f, 3.40282347e+38f) == mean)) {");
    ASSERT_NE(branch, std::string::npos) << at << source;
    EXPECT_NE(source.find("scale = 1.0f / yr_clamp(peak, 0.001f, 8.50705917e+37f);", branch), std::string::npos) << at;
    EXPECT_NE(source.find("inv = yr_rsqrt(s / " + std::to_string(n) + ".0f + 1e-06f * scale * scale);", branch),
              std::string::npos)
        << at;
    EXPECT_NE(source.find(n == 4000 ? "v[e] *= scale;" : "yr_ld(row + c) * scale * inv);", branch), std::string::npos)
        << at;
    size_t barriers = 0;
    for (size_t i = source.find("__syncthreads();"); i < branch; i = source.find("__syncthreads();", i + 1)) ++barriers;
    EXPECT_EQ(barriers, 2u) << at << ": one reduction on ordinary rows, and the reuse of its slots";
  }
}

// A row held in registers is loaded with its weight before the sum of squares (one wait for
// both, not a second one at the stores), in 16-byte vectors where x, the weight and the output
// have one element size and the row is whole vectors (the pointers' alignment checked once),
// else element by element.
TEST(CudaCodegenKernels, RmsNormLoadsItsRowAndWeightTogetherInVectors) {
  for (const int64_t n : {int64_t{4096}, int64_t{4100}}) {
    KernelGraph g;
    g.mark_output(g.rms_norm(g.new_input({8, n}, DType::kFloat16), {n}, 1e-5, g.new_input({n}, DType::kFloat16)));
    const std::string source =
        codegen::cuda_source(serialize::make_kernel_program(g, g.operators().size() - 1), h100_device()).source;
    const std::string at = "row of " + std::to_string(n);
    const size_t sum = source.find("__syncthreads();");
    ASSERT_NE(sum, std::string::npos) << at;
    const size_t vector_load = source.find("yr_cvt16(row, k < 512 ? yr_raw16(row + k * 8) : uint4{}, v + q * 8);");
    if (n == 4096) {
      EXPECT_NE(source.find("const bool in_vectors = "), std::string::npos) << at;
      EXPECT_LT(vector_load, sum) << at;
      EXPECT_LT(source.find("yr_cvt16(in1, k < 512 ? yr_raw16(in1 + k * 8) : uint4{}, wv + q * 8);"), sum) << at;
      EXPECT_NE(source.find("ys[l] = v[q * 8 + l] * inv * wv[q * 8 + l];"), std::string::npos) << at;
      EXPECT_NE(source.find("*reinterpret_cast<uint4 *>(out_row + k * 8) = yr_pack16(out_row, ys);"), std::string::npos)
          << at;
    } else {
      EXPECT_EQ(vector_load, std::string::npos) << at;
      EXPECT_EQ(source.find("in_vectors"), std::string::npos) << at;
    }
    EXPECT_LT(source.find("wv[e] = c < " + std::to_string(n) + " ? yr_ld(in1 + c) : 0.0f;"), sum) << at;
    EXPECT_NE(source.find("yr_st(out_row + c, v[e] * inv * wv[e]);"), std::string::npos) << at;
  }
}

}  // namespace
}  // namespace yirage::cuda
