// The CUDA generator's µGraph code, read as text: the load pipeline follows shared memory, matmuls
// take the tensor cores, attention runs in registers, row chains stay in registers, and tiles
// over the device's shared memory are refused.
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
#include "ragged_graphs.hpp"
#include "search/loop_split.hpp"
#include "testing/test_support.hpp"

namespace yirage::cuda {
namespace {

using namespace generator_test;

// Per-iteration tiles go through a cp.async ring as deep as shared memory allows (4 stages on an
// H100), shallower under a tighter limit, and are read directly when not even 2 stages fit.
TEST(CudaCodegenPipeline, StagesFollowSharedMemory) {
  const KernelGraph fused = bench::build_fused("rmsnorm_linear", 1, DType::kFloat16, 1);
  codegen::CudaKernel kernel = customized_source(fused, kH100SharedBytes);
  // With depth d the loop waits until d − 2 iterations' copies are pending (then issues one more).
  EXPECT_NE(kernel.source.find("yr_cp_wait<2>();"), std::string::npos) << "4 stages fit an H100";
  EXPECT_NE(customized_source(fused, 0).source.find("yr_cp_wait<2>();"), std::string::npos) << "no limit";
  for (int depth = 3; depth >= 2; --depth) {
    const int64_t limit = kernel.shared_bytes - 1;
    kernel = customized_source(fused, limit);
    EXPECT_LE(kernel.shared_bytes, limit);
    EXPECT_NE(kernel.source.find("yr_cp_wait<" + std::to_string(depth - 2) + ">();"), std::string::npos)
        << depth << " stages under " << limit << " bytes";
  }
  const int64_t limit = kernel.shared_bytes - 1;
  kernel = customized_source(fused, limit);
  EXPECT_LE(kernel.shared_bytes, limit);
  EXPECT_EQ(kernel.source.find("yr_cp_commit();"), std::string::npos) << "2 stages do not fit " << limit;
}
// A float16 B tile read only by mma is read from its cp.async stage (no float copy) while the
// stages fit, and converted into a float tile as before when they do not.
TEST(CudaCodegenPipeline, MmaReadsSixteenBitStagesWhileTheyFit) {
  const KernelGraph fused = bench::build_fused("rmsnorm_linear", 1, DType::kFloat16, 1);
  const std::string from_stage = "const auto *pb = reinterpret_cast<yr_f16 *>(smem";
  EXPECT_NE(customized_source(fused, kH100SharedBytes).source.find(from_stage), std::string::npos);
  codegen::CudaKernel kernel = customized_source(fused, kH100SharedBytes);
  while (kernel.source.find("yr_cp_commit();") != std::string::npos) {
    kernel = customized_source(fused, kernel.shared_bytes - 1);
  }
  EXPECT_EQ(kernel.source.find(from_stage), std::string::npos);
  EXPECT_NE(kernel.source.find("const auto *bp = (smem"), std::string::npos) << "the float tile";
  // float32 graphs keep FMA loops: no mma, nothing read from stages by it.
  const KernelGraph fp32 = bench::build_fused("rmsnorm_linear", 1, DType::kFloat32, 1);
  EXPECT_EQ(kernel_body(customized_source(fp32, kH100SharedBytes)).find("yr_mma"), std::string::npos);
}

// Matmuls of at most 32 rows against a 16-bit stage run transposed (B's columns as the mma's
// rows, each 8 of A's rows one mma tile), their fragments read by ldmatrix. In attention at 32
// query rows per block against 64 keys, with sigmoid in place of exp (which attention in
// registers does not take, and which is computed as exp is): Q·K on float16
// mma (Q's values are float16, exact; Q does not change in the loop, so its operands are packed
// into registers once, before it, for each of the 4 tiles), E·V on TF32 (E = exp(Q·K) is
// computed, and read in every iteration), each adding its results to the for-loop sum that
// reads them (the sum after the loop is only there before sm_80).
TEST(CudaCodegenBlocks, FewRowMatmulsRunTransposedOnTensorCores) {
  const auto sigmoid = [](size_t, Operator &op) {
    if (op.kind == OpKind::kExp) op.kind = OpKind::kSigmoid;
    return true;
  };
  const std::string body = kernel_body(customized_source(attention_at("gqa", 8, 64, sigmoid), kH100SharedBytes));
  EXPECT_EQ(body.find("att_q"), std::string::npos) << "not attention in registers";
  EXPECT_NE(body.find("yr_ldmatrix_t4(pb + (kk) * "), std::string::npos);
  EXPECT_LT(body.find("a_fragments3[24 + j] = yr_pack2(static_cast<const yr_f16 *>(nullptr), x.x, x.y);"),
            body.find("for (int it = 0;"));
  EXPECT_NE(body.find("yr_mma16(pb, acc[3], t[0], t[1], t[2], t[3], a_fragments3[24 + (kk) / 8], a_fragments3[24 + "
                      "(kk) / 8 + 1]);"),
            std::string::npos);
  // E (32×64 floats) is read as A by E·V only: the tensor-core code keeps it in a copy with rows
  // of 72 floats, rounded to TF32 once by its writer.
  EXPECT_NE(body.find("const float r0 = __uint_as_float(yr_tf32(v0))"), std::string::npos);
  EXPECT_NE(body.find(" * 72] = r0;"), std::string::npos);
  EXPECT_NE(body.find("yr_mma_tf32(acc[7], lo[2], lo[3], hi[2], hi[3], __float_as_uint(y3.x), __float_as_uint(y3.y));"),
            std::string::npos);
  EXPECT_NE(body.find("] += v0 + v2;"), std::string::npos) << "Σ E only matters row by row";
  EXPECT_EQ(body.find("(w1 * 8) + grp"), std::string::npos) << "TF32 tiles are not dealt out: B would be widened twice";
  // E·V's 4 column blocks leave 4 of the 8 warps without work: those issue the next copies.
  EXPECT_NE(body.find("if (copier < 128)"), std::string::npos);
  EXPECT_NE(body.find("] += v0;"), std::string::npos) << "a sum updated in the epilogue";
  EXPECT_NE(body.find("#if __CUDA_ARCH__ < 800"), std::string::npos) << "the sums' own loops, before sm_80";
  // gated_mlp's X (8 rows) changes every iteration: read and repacked in the loop.
  const std::string gated =
      kernel_body(customized_source(bench::build_fused("gated_mlp", 1, DType::kFloat16, 1), kH100SharedBytes));
  EXPECT_NE(gated.find("yr_mma16(pb, acc[0], t[0], t[1], t[2], t[3], yr_pack2(pb, x0.x, x0.y)"), std::string::npos);
  // lora's X (16 rows, float16) against 64 columns of W: 4 blocks of 16 columns for 8 warps, so
  // each block's two 8-row tiles go to two warps.
  const std::string lora =
      kernel_body(customized_source(bench::build_fused("lora", 1, DType::kFloat16, 1), kH100SharedBytes));
  EXPECT_NE(lora.find("const float *pa0 = (smem + 0) + (0 * 64 + 0) + ((w0 * 8) + grp) * 64 + 2 * tig;"),
            std::string::npos);
  EXPECT_NE(lora.find("if (((w0 * 8) + 2 * tig) < 16)"), std::string::npos);
}

// A weighted norm before a product (x ⊙ w)·W / rms(x), in blocks of 32 weight columns, is the
// weight-product kernel: its warps stream W with A's columns scaled by w as they are read, each
// row's rms comes from x itself (the block's threads share its squares; a row out of float32's
// range is taken again, scaled by its largest magnitude), and the sums are divided by it as they
// are stored. No tile of W goes through shared memory.
TEST(CudaCodegenBlocks, WeightedNormProductsStreamTheirWeights) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const std::string body =
        kernel_body(customized_source(bench::build_weighted_norm_product(true, dt), kH100SharedBytes));
    EXPECT_EQ(body.find("yr_cp16"), std::string::npos) << dtype_name(dt);
    EXPECT_NE(body.find("const float gq = yr_ld(in1 + (q));"), std::string::npos);
    EXPECT_NE(body.find(" * gq;"), std::string::npos);
    EXPECT_NE(body.find("const float mean = total / 256.0f + 1e-05f;"), std::string::npos);
    EXPECT_NE(body.find("rms_row[r] = sqrtf(scaled / 256.0f + 1e-05f * scale * scale) / scale;"), std::string::npos);
    EXPECT_NE(body.find("rms_row[ii - i0]"), std::string::npos);
    // 8 rows: on tensor cores, A's words scaled as they are loaded.
    const std::string mma =
        kernel_body(customized_source(bench::build_weighted_norm_product(true, dt, 8), kH100SharedBytes));
    EXPECT_NE(mma.find("yr_mma16("), std::string::npos);
    EXPECT_NE(mma.find("yr_cvt16(pb, yr_raw16(in1 + 8 * t + base + 32), vg);"), std::string::npos);
    EXPECT_NE(mma.find("yr_pack2(pb, yr_ld(arow + base + 2 * t) * yr_ld(in1 + base + 2 * t)"), std::string::npos);
  }
}

// The search orders a norm's µGraph by its terms, so the rms accumulator may come before the
// product (rmsnorm_linear: no weight, eps 0); the weight-product kernel takes it either way.
TEST(CudaCodegenBlocks, NormProductsStreamWithTheRmsAccumulatorFirst) {
  KernelGraph g;
  const TensorId x = g.new_input({2, 256}, DType::kFloat16), w = g.new_input({256, 96}, DType::kFloat16);
  BlockGraphConfig config;
  config.grid = {3, 1, 1};
  config.block_threads = 128;
  config.forloop_range = 8;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId xt = bg->new_input({2, 256}, DType::kFloat16, kReplicated, 1);
  const TensorId wt = bg->new_input({256, 96}, DType::kFloat16, {1, -1, -1}, 0);
  const TensorId rms = bg->accumulate(OpKind::kAccumReduceRms, xt);
  const TensorId product = bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, wt));
  bg->new_output(bg->binary(OpKind::kDiv, product, rms), {1, -1, -1}, -1);
  g.mark_output(g.customized({x, w}, bg)[0]);
  const std::string body = kernel_body(customized_source(g, kH100SharedBytes));
  EXPECT_EQ(body.find("yr_cp16"), std::string::npos);
  EXPECT_NE(body.find("const float mean = total / 256.0f;"), std::string::npos);
  EXPECT_NE(body.find("sum0 / rms_row[ii - i0]"), std::string::npos);
}

// Where attention on warpgroup mma is all a loop iteration does (sm_90a), its warps compute and
// a warpgroup of producers (added to a block whose warps all compute) issues the copies; they
// meet at two mbarriers per stage, not at a barrier of the block per iteration. The computing
// warps wait for their stage to be announced before its first mma and give it back after the
// iteration's last wait; the producers wait for a slot to be given back before refilling it,
// and announce a stage once its own copies landed and were fenced for the async proxy.
TEST(CudaCodegenBlocks, WarpgroupAttentionSpecializesItsWarps) {
  for (const std::string name : {"gqa", "qknorm"}) {
    SCOPED_TRACE(name);
    // 128 rows: 8 computing warps and a warpgroup more; 64 rows: 4 computing, 4 producing.
    for (const auto &[blocks, threads, computing] :
         {std::tuple<int64_t, int64_t, int64_t>{2, 384, 256}, {4, 256, 128}}) {
      const codegen::CudaKernel kernel = customized_source(attention_at(name, blocks, 32), kH100SharedBytes);
      const std::string body = kernel_body(kernel), C = std::to_string(computing),
                        P = std::to_string(threads - computing);
      EXPECT_EQ(kernel.block_threads, threads);
      EXPECT_NE(kernel.source.find("__launch_bounds__(" + std::to_string(threads) + ")"), std::string::npos);
      EXPECT_NE(body.find("yr_mbar_init(stage_full + s, " + P + ");"), std::string::npos) << "one arrival per producer";
      EXPECT_NE(body.find("yr_mbar_init(stage_empty + s, " + C + ");"), std::string::npos)
          << "one per computing thread";
      // Stage 0 before the loop, by the producers alone.
      const size_t first = body.find("if (threadIdx.x >= " + C + ")");
      ASSERT_NE(first, std::string::npos);
      EXPECT_LT(first, body.find("yr_mbar_init"));
      EXPECT_NE(body.find("(static_cast<int64_t>(threadIdx.x) - " + C + ")"), std::string::npos) << "renumbered from 0";
      // The producers' loop.
      const size_t producer = body.find("if (threadIdx.x >= " + C + ")", first + 1);
      ASSERT_NE(producer, std::string::npos);
      const size_t consumer = body.find("else {", producer);
      const std::string produce = body.substr(producer, consumer - producer);
      const size_t refill = produce.find("yr_mbar_wait(stage_empty + next % 4, (next / 4 - 1) & 1);");
      ASSERT_NE(refill, std::string::npos);
      EXPECT_LT(refill, produce.find("yr_cp16(stage"));
      const size_t landed = produce.find("yr_cp_wait<1>();");
      EXPECT_LT(produce.find("yr_cp16(stage"), landed);
      EXPECT_LT(landed, produce.find("yr_fence_proxy_async();"));
      EXPECT_LT(produce.find("yr_fence_proxy_async();"), produce.find("yr_mbar_arrive(stage_full + it % 4);"));
      EXPECT_EQ(produce.find("wgmma"), std::string::npos);
      // The computing warps' loop: no barrier of the block, no copies.
      const std::string give_back = "yr_mbar_arrive(stage_empty + it % 4);";
      const size_t end = body.find(give_back, consumer);
      ASSERT_NE(end, std::string::npos);
      const std::string compute = body.substr(consumer, end + give_back.size() - consumer);
      const size_t wait = compute.find("yr_mbar_wait(stage_full + it % 4, (it / 4) & 1);");
      ASSERT_NE(wait, std::string::npos);
      EXPECT_LT(wait, compute.find("wgmma.mma_async"));
      EXPECT_GT(compute.find("yr_mbar_arrive(stage_empty + it % 4);"), compute.rfind("yr_wgmma_wait<0>();"));
      EXPECT_EQ(compute.find("__syncthreads"), std::string::npos);
      EXPECT_EQ(compute.find("yr_cp"), std::string::npos);
      // Two warpgroups issue their Q·K in turn: each waits at its named barrier before its
      // first mma and lets the other go once both halves' Q·K are issued (the second's last
      // iteration, the 32nd, lets none go); one warpgroup has no turns.
      if (computing == 128) {
        EXPECT_EQ(body.find("bar.sync"), std::string::npos);
        continue;
      }
      const size_t first_turn = body.find("if (att_wg == 1) asm volatile(\"bar.arrive 2, 256;\" ::: \"memory\");");
      ASSERT_NE(first_turn, std::string::npos);
      EXPECT_GT(first_turn, consumer);
      EXPECT_LT(first_turn, consumer + compute.find("for (int it = 0;"));
      const size_t turn = compute.find("asm volatile(\"bar.sync %0, 256;\" :: \"r\"(2 + att_wg) : \"memory\");");
      ASSERT_NE(turn, std::string::npos);
      EXPECT_LT(turn, compute.find("wgmma.mma_async"));
      const size_t next = compute.find(
          "if (att_wg != 1 || it != 31) asm volatile(\"bar.arrive %0, 256;\" :: \"r\"(2 + (att_wg + 1) % 2)");
      ASSERT_NE(next, std::string::npos);
      const size_t second_commit = compute.find("yr_wgmma_commit();", compute.find("yr_wgmma_commit();") + 1);
      EXPECT_LT(second_commit, next);
      EXPECT_LT(next, compute.find("yr_wgmma_wait<1>();"));
    }
  }
  // mma.sync (sm_80): every thread copies, a barrier per iteration, the µGraph's 256 threads.
  const codegen::CudaKernel ampere = customized_source(attention_at("gqa", 2, 32), kH100SharedBytes, true, 80);
  EXPECT_EQ(ampere.block_threads, 256);
  EXPECT_EQ(ampere.source.find("stage_full"), std::string::npos);
}

// Attention of at most 16 query rows per block runs in registers on sm_80 and newer
// (cuda_attention.hpp): Q's fragments packed once before the loop, Q·K and E·V on float16 mma
// with the 16-bit E relative to an offset per row, the warps' sums meeting after the
// loop in the load pipeline's stages, which are free then. Its per-iteration tiles get no room.
// Keys that no loop divides (4,093 of them, K laid out [depth, keys] without 16-byte rows):
// attention still runs in registers, K's stage filled by plain copies with zeros past the end,
// V's by cp.async with a source size of 0 there, and the scores of absent keys set to −∞.
TEST(CudaCodegenBlocks, RaggedKeysRunAttentionInRegisters) {
  const KernelGraph attention = ragged_variant(attention_at("gqa", 16, 32));
  for (const codegen::CudaTarget &target : {h100_like(80), h100_device()}) {
    const std::string body = kernel_body(
        codegen::cuda_source(serialize::make_kernel_program(attention, attention.operators().size() - 1), target));
    const size_t loop = body.find("for (int it = 0;");
    EXPECT_LT(body.find("unsigned att_q[4][4];"), loop);
    EXPECT_NE(body.find("const int att_kin = ((4093 - it * 128)) - att_share * "), std::string::npos);
    EXPECT_NE(body.find("if (8 * j >= att_kin) att_s[j][0] = att_s[j][2] = -INFINITY;"), std::string::npos);
    // K's plain stage: a chunk of its rows read into registers (past the end from the tile's
    // start, no branch around the read), then stored.
    EXPECT_NE(body.find("held[u] = yr_select(t2 < (4093 - (it) * 128), src[t2 < (4093 - (it) * 128) ? (t0 * 261952 + "
                        "t1 * 4093 + t2) : 0], yr_f16{0});"),
              std::string::npos)
        << "K's plain stage";
    EXPECT_NE(body.find("] = held[u];"), std::string::npos);
    EXPECT_NE(body.find("t1 < (4093 - (it + "), std::string::npos) << "V's zero-filled cp.async";
    EXPECT_EQ(body.find("yr_mma_tf32"), std::string::npos) << "no TF32 E·V";
  }
}

// 4,097 keys over a loop of 64 (an H200's pick for decode attention): tiles of 65 keys, which
// attention in registers rounds up to 80, the scores past the tile masked like absent keys and
// V's stage rows past it zeros.
TEST(CudaCodegenBlocks, AttentionRoundsItsKeysUpToWholeSixteens) {
  const KernelGraph attention = ragged_variant(attention_at("gqa", 16, 64), 1024, -1);
  const std::string body = kernel_body(
      codegen::cuda_source(serialize::make_kernel_program(attention, attention.operators().size() - 1), h100_device()));
  EXPECT_NE(body.find("unsigned att_q[4][4];"), std::string::npos);
  EXPECT_NE(body.find("const int att_kin = (((4097 - it * 65) < 65 ? (4097 - it * 65) : 65)) - att_share * "),
            std::string::npos);
  EXPECT_NE(body.find("if (t1 >= 65) stage[(t0 * 5760 + t1 * 72 + t2)] = yr_f16{0};"), std::string::npos)
      << "V's rows past the tile";
  EXPECT_NE(body.find("if (t2 >= 65) stage[(t0 * 5632 + t1 * 88 + t2)] = yr_f16{0};"), std::string::npos)
      << "K's columns past it, in rows of 80 + 8";
  EXPECT_EQ(body.find("yr_mma_tf32"), std::string::npos) << "no TF32 E·V";
  // What the conformance suite's kernels.ragged_tiles checks on the device: the same path.
  const KernelGraph small = bench::build_ragged("exp_attention", true, DType::kBFloat16);
  const std::string checked = kernel_body(customized_source(small, kH100SharedBytes));
  EXPECT_NE(checked.find("unsigned att_q[1][4];"), std::string::npos);
  EXPECT_NE(checked.find(" < 65 ? "), std::string::npos);
}

TEST(CudaCodegenBlocks, AttentionRunsInRegisters) {
  const KernelGraph attention = attention_at("gqa", 16, 32);
  const codegen::CudaKernel kernel = customized_source(attention, kH100SharedBytes);
  const std::string body = kernel_body(kernel);
  const size_t loop = body.find("for (int it = 0;");
  EXPECT_LT(body.find("unsigned att_q[4][4];"), loop);
  EXPECT_LT(body.find("float att_o[8][4] = {};"), loop);
  EXPECT_NE(body.find("yr_mma16(att_k, att_s[2 * j], att_q[s][0], att_q[s][1], att_q[s][2], att_q[s][3], t[0], t[1]);"),
            std::string::npos);
  // The offsets move only where a lane's maximum (a tree of fmaxf) passes its row's by more than
  // 2^15; on mma.sync the exps follow that test.
  const std::string moves =
      "if (__any_sync(0xffffffffu, att_x0[0] * 1.4426950408889634f > att_m0 + 15.0f || "
      "att_x1[0] * 1.4426950408889634f > att_m1 + 15.0f))";
  const std::string exps = "yr_exp2(fmaf(att_s[2 * j + h][0], 1.4426950408889634f, -att_b0))";
  EXPECT_NE(body.find("att_x0[j] = fmaxf(att_x0[j], att_x0[j + w]);"), std::string::npos);
  EXPECT_NE(body.find(moves), std::string::npos);
  EXPECT_LT(body.find(moves), body.find(exps));
  EXPECT_EQ(body.find("att_l0 = att_t0"), std::string::npos) << "no exps taken again on mma.sync";
  EXPECT_NE(body.find("const float att_f0 = yr_exp2(att_m0), att_f1 = yr_exp2(att_m1);"), std::string::npos);
  EXPECT_NE(body.find("yr_mma16(att_v, att_o[2 * c], a[0], a[1], a[2], a[3], t[0], t[1]);"), std::string::npos);
  EXPECT_EQ(body.find("yr_mma_tf32"), std::string::npos) << "no TF32 E·V";
  EXPECT_EQ(body.find("atomicAdd"), std::string::npos) << "shared-memory float atomics are compare-and-swap loops";
  // The sums meet in the stages after a barrier (warps may still read the last ones).
  const size_t part = body.find("float *att_part = ");
  ASSERT_NE(part, std::string::npos);
  EXPECT_NE(body.rfind("__syncthreads();", part), std::string::npos);
  EXPECT_GT(body.rfind("__syncthreads();", part), body.rfind("yr_mma16(att_v", part));
  // No room for A, E, E·V (16 × 128, 16 × 128, 16 × 64 floats): less shared memory than the
  // generic code on sm_75 with the same stages.
  const codegen::CudaKernel turing = codegen::cuda_source(
      serialize::make_kernel_program(attention, attention.operators().size() - 1), {75, kH100SharedBytes});
  EXPECT_EQ(turing.source.find("att_q"), std::string::npos) << "sm_75: the generic code";
  EXPECT_LE(kernel.shared_bytes + (2 * 16 * 128 + 16 * 64) * 4, turing.shared_bytes);
  // Σ E's row sums are the warps': no rows × keys state is cleared or reduced.
  EXPECT_EQ(body.find("r * 128 + c]"), std::string::npos);
  // 16 rows: one row tile, 8 shares of the keys; shares 1-7 leave their sums for share 0, which
  // writes the totals (nothing clears the accumulators first: they are written once).
  EXPECT_NE(body.find("for (int w = 0; w < 7; ++w) total += "), std::string::npos) << "the shares' row sums added";
  EXPECT_NE(body.find("if (att_warp < 1)"), std::string::npos);
  EXPECT_EQ(body.find("] = 0.0f;"), std::string::npos) << body;
  // 64 rows on sm_80: a row tile of 16 per warp, 4 of them, the 8 warps in 2 shares of 64 keys.
  const std::string rows64 = kernel_body(customized_source(attention_at("gqa", 4, 32), kH100SharedBytes, true, 80));
  EXPECT_NE(rows64.find("const int att_row = att_warp % 4 * 16, att_share = att_warp / 4;"), std::string::npos);
  EXPECT_NE(rows64.find("if (att_warp >= 4 && att_warp < 8)"), std::string::npos);
  EXPECT_NE(rows64.find("for (int w = 0; w < 1; ++w)"), std::string::npos);
  // On sm_90a one warpgroup takes all 128 keys on wgmma (the keys are not split between
  // warpgroups: that gave wrong sums), and the other 4 warps are its producers
  // (WarpgroupAttentionSpecializesItsWarps).
  const std::string rows64_wgmma = kernel_body(customized_source(attention_at("gqa", 4, 32), kH100SharedBytes));
  EXPECT_NE(rows64_wgmma.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"), std::string::npos);
  EXPECT_NE(rows64_wgmma.find("if (att_warp < 4) {"), std::string::npos);
  EXPECT_EQ(rows64_wgmma.find("total += "), std::string::npos) << "one share: no scratch";
  EXPECT_NE(rows64_wgmma.find("if (threadIdx.x >= 128)"), std::string::npos);
  // 128 rows: one share; each warp writes its own rows' sums to the accumulators.
  const std::string rows128 = kernel_body(customized_source(attention_at("gqa", 2, 32), kH100SharedBytes));
  EXPECT_NE(rows128.find("const int att_row = att_warp % 8 * 16, att_share = att_warp / 8;"), std::string::npos);
  EXPECT_NE(rows128.find(" + (att_row + att_grp) * 64 + c * 8 + 2 * att_tig) = make_float2(x, y);"), std::string::npos)
      << rows128;
  EXPECT_EQ(rows128.find("total += "), std::string::npos) << "no scratch";
  // There (4 warps per 64 rows, 128 keys) sm_90a runs Q·K and E·V as warpgroup mma in two
  // halves of 64 keys: one m64n64k16 per 16 of Q's columns and half, one per 16 keys, B from
  // the stages, which are swizzled (compact, 1024-byte aligned) and made visible to the async
  // proxy by their producers; the first half's softmax starts once its own Q·K is done (one
  // group still in flight), the second half rescales the sums only after E·V of the first. Each
  // half's exps are taken before the test of its offsets, and again where the test moves one.
  // mma.sync before sm_90 (and on 10.x: cuda_arch gives sm_90a to 9.0 alone).
  EXPECT_EQ(rows128.find("yr_ldmatrix_t4(att_k"), std::string::npos);
  EXPECT_NE(rows128.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"), std::string::npos);
  // The stages' descriptors once per iteration, an operand's offset in 16-byte units added.
  EXPECT_NE(rows128.find(", 8192, 1024), att_vd = yr_wgmma_desc("), std::string::npos);
  EXPECT_NE(rows128.find(", 16384, 1024);"), std::string::npos);
  EXPECT_NE(rows128.find("\"l\"(att_kd + 896)"), std::string::npos) << "the second half's K (7168 elements on)";
  const size_t first_wait = rows128.find("yr_wgmma_wait<1>();"), drain = rows128.find("yr_wgmma_wait<0>();");
  ASSERT_NE(first_wait, std::string::npos);
  const size_t first_max = rows128.find("att_x0[j] = fmaxf(att_s[0 + j][0], att_s[0 + j][1]);");
  ASSERT_NE(first_max, std::string::npos);
  EXPECT_LT(first_wait, first_max);
  const size_t second_max = rows128.find("att_x0[j] = fmaxf(att_s[8 + j][0], att_s[8 + j][1]);");
  ASSERT_NE(second_max, std::string::npos) << "the second half's maxima";
  std::vector<size_t> tests, exps128;
  for (size_t at = rows128.find(moves); at != std::string::npos; at = rows128.find(moves, at + 1)) {
    tests.push_back(at);
  }
  for (size_t at = rows128.find(exps); at != std::string::npos; at = rows128.find(exps, at + 1)) {
    exps128.push_back(at);
  }
  ASSERT_EQ(tests.size(), 2u);
  ASSERT_EQ(exps128.size(), 4u) << "each half's exps before its test and in it";
  for (int h = 0; h < 2; ++h) {
    EXPECT_LT(exps128[2 * h], tests[h]);
    EXPECT_GT(exps128[2 * h + 1], tests[h]);
    EXPECT_GT(rows128.find("att_l0 = att_t0, att_l1 = att_t1;", tests[h]), tests[h]) << "the row sums put back";
    EXPECT_LT(rows128.find("att_l0 = att_t0, att_l1 = att_t1;", tests[h]), exps128[2 * h + 1]);
  }
  EXPECT_LT(first_max, tests[0]);
  EXPECT_LT(second_max, tests[1]);
  ASSERT_NE(drain, std::string::npos);
  EXPECT_GT(drain, tests[1]) << "a drain in the second half's rescale only";
  EXPECT_LT(drain, rows128.find("att_o[c][0] *= att_r0;", drain));
  EXPECT_LT(drain, exps128[3]);
  EXPECT_NE(rows128.find("\"l\"(att_kd + 384)"), std::string::npos) << "48 rows of K on";
  EXPECT_NE(rows128.find("\"l\"(att_vd + 896)"), std::string::npos) << "112 keys on";
  EXPECT_NE(rows128.find("\"r\"(att_q[0][3]), \"l\"(att_kd + 0), \"r\"(0));"), std::string::npos)
      << "the first Q·K overwrites the scores";
  EXPECT_NE(rows128.find("yr_cp16(stage + (t0 * 8192 + yr_swizzled128(t1, t2 * 8, 64))"), std::string::npos);
  EXPECT_NE(rows128.find("extern __shared__ __align__(1024) float smem[];"), std::string::npos);
  EXPECT_NE(rows128.find("& 1023u) != 0) __trap();"), std::string::npos) << "a misplaced base fails the launch";
  const size_t fence = rows128.find("yr_fence_proxy_async();");
  ASSERT_NE(fence, std::string::npos);
  EXPECT_LT(rows128.rfind("yr_cp_wait<1>();", fence), fence);
  EXPECT_EQ(rows128.find("yr_mbar_arrive(stage_full + it % 4);", fence), rows128.find("\n", fence) + 7)
      << "the copies landed, the fence, then the announcement";
  const codegen::CudaKernel rows128_sm90 = customized_source(attention_at("gqa", 2, 32), kH100SharedBytes);
  for (const char *stage : {"smem + 24832 + ", "smem + 41216 + "}) {  // multiples of 256 floats
    EXPECT_NE(rows128_sm90.source.find(stage), std::string::npos) << "1024-byte aligned stages";
  }
  EXPECT_EQ(codegen::cuda_arch(90), "sm_90a");
  EXPECT_EQ(codegen::cuda_arch(100), "sm_100");
  const KernelGraph g128 = attention_at("gqa", 2, 32);
  const std::string ampere =
      codegen::cuda_source(serialize::make_kernel_program(g128, g128.operators().size() - 1), {80, kH100SharedBytes})
          .source;
  EXPECT_EQ(ampere.find("wgmma.mma_async"), std::string::npos);
  EXPECT_EQ(ampere.find("yr_swizzled128(t1"), std::string::npos);
  EXPECT_NE(ampere.find("yr_ldmatrix_t4(att_k"), std::string::npos);
  // Σ E written as the iteration's row sums, accumulated (as the search also finds it): the
  // same code.
  for (const OpKind accumulate : {OpKind::kAccumSum, OpKind::kAccumReduceSum}) {
    BlockGraphConfig config;
    config.grid = {2, 16, 1};
    config.forloop_range = 32;
    auto bg = std::make_shared<BlockGraph>(config);
    const TensorId q = bg->new_input({2, 256, 64}, DType::kFloat16, {0, 1, -1}, -1);
    const TensorId k = bg->new_input({2, 64, 4096}, DType::kFloat16, {0, -1, -1}, 2);
    const TensorId v = bg->new_input({2, 4096, 64}, DType::kFloat16, {0, -1, -1}, 1);
    const TensorId e = bg->unary(OpKind::kExp, bg->matmul(q, k));
    const TensorId rows = bg->reduction(OpKind::kReduction, e, 2);
    const TensorId ev = bg->matmul(e, v);
    const TensorId sum = bg->accumulate(accumulate, rows);
    bg->new_output(bg->binary(OpKind::kDiv, bg->accumulate(OpKind::kAccumSum, ev), sum), {0, 1, -1}, -1);
    KernelGraph variant;
    std::vector<TensorId> in;
    for (TensorId t : attention.inputs())
      in.push_back(variant.new_input(attention.tensor(t).dims, attention.tensor(t).dtype));
    variant.mark_output(variant.customized(in, bg)[0]);
    const codegen::CudaKernel same = customized_source(variant, kH100SharedBytes);
    EXPECT_NE(same.source.find("float att_o[8][4] = {};"), std::string::npos) << op_name(accumulate);
    EXPECT_EQ(same.shared_bytes, kernel.shared_bytes) << op_name(accumulate);
  }
  // qknorm's Q is an rms_norm without weight (|x| ≤ 8 here): in range of float16.
  EXPECT_NE(kernel_body(customized_source(attention_at("qknorm", 16, 32), kH100SharedBytes)).find("att_q"),
            std::string::npos);
  // float32 graphs keep their float32 code.
  const KernelGraph fp32 = bench::build_fused("gqa", 1, DType::kFloat32, 1);
  EXPECT_EQ(kernel_body(customized_source(fp32, kH100SharedBytes)).find("att_q"), std::string::npos);
}

// How far a score may pass its row's offset before the offset moves comes from the target
// (CudaTarget::attention_offset_slack, 15 unless YIRAGE_CUDA_ATTENTION_SLACK says 0 to 15, which
// the plugin reads for every compile; anything else is refused with the variable's name): the
// generated test uses it, and at 0 the offsets move whenever a row's maximum grows.
TEST(CudaCodegenBlocks, AttentionOffsetSlackComesFromTheTarget) {
  EXPECT_EQ(codegen::attention_offset_slack_from(nullptr), 15);
  EXPECT_EQ(codegen::attention_offset_slack_from("0"), 0);
  EXPECT_EQ(codegen::attention_offset_slack_from("15"), 15);
  for (const char *bad : {"", "16", "-1", "8x", "abc", "99999999999999999999"}) {
    YIRAGE_EXPECT_INVALID(codegen::attention_offset_slack_from(bad), "YIRAGE_CUDA_ATTENTION_SLACK");
  }
  const KernelGraph g = attention_at("gqa", 2, 32);
  const serialize::KernelProgram program = serialize::make_kernel_program(g, g.operators().size() - 1);
  codegen::CudaTarget target = h100_device();
  const std::string usual = kernel_body(codegen::cuda_source(program, target));
  target.attention_offset_slack = 0;
  const std::string zero = kernel_body(codegen::cuda_source(program, target));
  EXPECT_NE(usual.find("> att_m0 + 15.0f"), std::string::npos);
  EXPECT_EQ(usual.find("> att_m0 + 0.0f"), std::string::npos);
  EXPECT_NE(zero.find("> att_m0 + 0.0f"), std::string::npos);
  EXPECT_EQ(zero.find("> att_m0 + 15.0f"), std::string::npos);
}

// qknorm's Q = rms_norm(X) is normalized as its fragments are loaded from X's tile: the 4 lanes
// of a row add up its squares by two shuffles (where a row's mean square is out of float32's
// range, the warp does its rows again, scaled by their largest magnitudes); no block-wide pass, no
// tile for Q (the kernel needs gqa's shared memory), no barrier between X's tile and the
// fragments. On the mma.sync
// path (sm_80) and the warpgroup one (sm_90a), 64 rows per block and 128 (b = 8's blocks).
TEST(CudaCodegenBlocks, QknormNormalizesQAsItsFragmentsAreLoaded) {
  for (const auto &[blocks, cc] : {std::pair<int64_t, int>{4, 90}, {4, 80}, {2, 90}}) {
    const std::string at = std::to_string(blocks) + " row blocks, sm_" + std::to_string(cc);
    const codegen::CudaKernel qknorm =
        customized_source(attention_at("qknorm", blocks, 32), kH100SharedBytes, true, cc);
    const codegen::CudaKernel gqa = customized_source(attention_at("gqa", blocks, 32), kH100SharedBytes, true, cc);
    const std::string body = kernel_body(qknorm);
    ASSERT_NE(body.find("unsigned att_q[4][4];"), std::string::npos) << at;
    EXPECT_NE(body.find("t0 += __shfl_xor_sync(0xffffffffu, t0, off);"), std::string::npos) << at;
    EXPECT_NE(body.find("float inv0 = yr_rsqrt(t0 / 64.0f), inv1 = yr_rsqrt(t1 / 64.0f);"), std::string::npos) << at;
    EXPECT_NE(body.find("if (__any_sync(0xffffffffu, (in0 && !(yr_clamp(t0 / 64.0f, "), std::string::npos) << at;
    EXPECT_NE(body.find("p0 = yr_max(p0, __shfl_xor_sync(0xffffffffu, p0, off));"), std::string::npos) << at;
    EXPECT_NE(body.find("const float s0 = 1.0f / yr_clamp(p0, 1.17549435e-38f, 8.50705917e+37f), s1 = "),
              std::string::npos)
        << at;
    EXPECT_NE(body.find("x[s][4 * h] *= s0, x[s][4 * h + 1] *= s0, "), std::string::npos) << at;
    EXPECT_NE(
        body.find(
            "att_q[s][3] = in1 ? yr_pack2(static_cast<const yr_f16 *>(nullptr), x[s][6] * inv1, x[s][7] * inv1) : 0u;"),
        std::string::npos)
        << at;
    EXPECT_EQ(body.find("totals["), std::string::npos) << at << ": no block-level reduction";
    EXPECT_EQ(qknorm.shared_bytes, gqa.shared_bytes) << at;
    // One barrier between the invariant tiles' loads and the fragments, as gqa's.
    const auto barriers_before_fragments = [](const std::string &source) {
      const size_t fragments = source.find("unsigned att_q[");
      size_t count = 0;
      for (size_t pos = source.find("__syncthreads();"); pos < fragments;
           pos = source.find("__syncthreads();", pos + 1)) {
        ++count;
      }
      return count;
    };
    EXPECT_EQ(barriers_before_fragments(body), barriers_before_fragments(kernel_body(gqa))) << at;
    EXPECT_EQ(kernel_body(gqa).find("inv0"), std::string::npos) << at << ": gqa's Q is not normalized";
  }
}

// Attention split over key chunks (search/loop_split.hpp): the chunks' kernel writes float32
// partial sums of 16-bit tiles and keeps the tensor-core paths (its precision is the tiles');
// on a device whose multiprocessors would hold only half of its 256 blocks with a 4-deep ring,
// the ring is 3 deep so that all of them reside at once.
TEST(CudaCodegenPipeline, SplitLoopsKeepTensorCoresAndResideAtOnce) {
  // Blocks of 8 query rows, 128-key tiles.
  const KernelGraph fused = attention_at("gqa", 32, 32);
  const std::optional<KernelGraph> split = search::split_loop(fused, fused.operators().size() - 1, 4);
  ASSERT_TRUE(split.has_value());
  const serialize::KernelProgram chunks = serialize::make_kernel_program(*split, split->operators().size() - 2);
  const codegen::CudaKernel alone = codegen::cuda_source(chunks, {90, kH100SharedBytes});
  EXPECT_EQ(alone.grid[0] * alone.grid[1] * alone.grid[2], 256);
  EXPECT_NE(alone.source.find("float *__restrict__ out0, float *__restrict__ out1"), std::string::npos);
  EXPECT_NE(kernel_body(alone).find("yr_ldmatrix_t4(att_k + s * 16 * 136 + j * 16, t);"), std::string::npos);
  EXPECT_NE(alone.source.find("yr_cp_wait<2>();"), std::string::npos) << "4 stages when the device is unknown";
  ASSERT_GT(alone.shared_bytes + 1024, 233472 / 2) << "4 stages fit one block per multiprocessor";
  const codegen::CudaKernel h100 = codegen::cuda_source(chunks, h100_device());
  EXPECT_NE(h100.source.find("yr_cp_wait<1>();"), std::string::npos);
  EXPECT_LE((h100.shared_bytes + 1024) * 2, 233472) << "2 blocks per multiprocessor: 264 at once";
  // The sum of the parts runs in registers (cuda_rows.cpp): every thread loads its chunks of all
  // 8 parts (16-byte loads of Σ E·V, one float of Σ E per row) before it adds any up; no
  // shared memory, no barrier.
  const std::optional<KernelGraph> eight = search::split_loop(fused, fused.operators().size() - 1, 8);
  ASSERT_TRUE(eight.has_value());
  const codegen::CudaKernel total =
      codegen::cuda_source(serialize::make_kernel_program(*eight, eight->operators().size() - 1), h100_device());
  const std::string sum = kernel_body(total);
  EXPECT_NE(sum.find("Rows in registers"), std::string::npos);
  EXPECT_EQ(sum.find("__syncthreads"), std::string::npos);
  EXPECT_EQ(total.shared_bytes, 0);
  EXPECT_NE(sum.find("uint4 raw0[8][1][2];"), std::string::npos) << sum;
  EXPECT_NE(sum.find("float raw1[8][1];"), std::string::npos);
  const size_t last_load = sum.rfind("yr_stream16("), first_sum = sum.find("yr_cvt16(in0, raw0[it][u][0], f0);");
  ASSERT_NE(first_sum, std::string::npos);
  EXPECT_LT(last_load, first_sum) << "loads of all parts before the sums";
  // The chunks' sums go from the warps' registers straight to the kernel's outputs (float2
  // stores where out1 is 16-byte aligned): no accumulator tiles to clear, no pass over them, one
  // barrier after the loop (the stages, then the scratch of the shares).
  const std::string body = kernel_body(h100);
  const size_t loop_end = body.find("auto *const att_ev_out = out0 + ");
  ASSERT_NE(loop_end, std::string::npos) << body;
  EXPECT_NE(body.find("auto *const att_e_out = out1 + ", loop_end), std::string::npos);
  EXPECT_NE(body.find("if (out0_16) *reinterpret_cast<float2 *>(att_ev_out + (att_row + att_grp) * 256 + c * 8 + 2 * "
                      "att_tig) = make_float2(x, y);",
                      loop_end),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("yr_st(att_e_out + (att_row + att_grp) * 4, total);", loop_end), std::string::npos);
  EXPECT_EQ(body.find("] = 0.0f;"), std::string::npos);
  EXPECT_EQ(body.find("yr_st(dst", loop_end), std::string::npos) << "no generic store";
  size_t barriers = 0;
  for (size_t at = body.find("__syncthreads();", loop_end); at != std::string::npos;
       at = body.find("__syncthreads();", at + 1))
    ++barriers;
  EXPECT_EQ(barriers, 1u);
  // The grid of the unsplit kernel fits at once with 4 stages: they stay.
  const codegen::CudaKernel whole =
      codegen::cuda_source(serialize::make_kernel_program(fused, fused.operators().size() - 1), h100_device());
  EXPECT_NE(whole.source.find("yr_cp_wait<2>();"), std::string::npos);
}

// A matmul's only reader is unary (silu in gated_mlp): whether its work goes into the matmul's
// epilogue is decided before the tiles' places are planned (this read a vector not yet filled,
// and crashed the benchmark's search on the H100 at grid 4096, loop 1).
TEST(CudaCodegenBlocks, EpiloguesArePlannedBeforeTheLayout) {
  BlockGraphConfig config;
  config.grid = {4096, 1, 1};
  config.block_threads = 128;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId x = bg->new_input({8, 4096}, DType::kFloat16, {-1, -1, -1}, -1);
  const TensorId w1 = bg->new_input({4096, 4096}, DType::kFloat16, {1, -1, -1}, -1);
  const TensorId w2 = bg->new_input({4096, 4096}, DType::kFloat16, {1, -1, -1}, -1);
  const TensorId gate = bg->unary(OpKind::kSilu, bg->matmul(x, w1));
  bg->new_output(bg->binary(OpKind::kMul, gate, bg->matmul(x, w2)), {1, -1, -1}, -1);
  KernelGraph g;
  const TensorId gx = g.new_input({8, 4096}, DType::kFloat16), gw1 = g.new_input({4096, 4096}, DType::kFloat16),
                 gw2 = g.new_input({4096, 4096}, DType::kFloat16);
  g.mark_output(g.customized({gx, gw1, gw2}, bg)[0]);
  EXPECT_NE(customized_source(g, kH100SharedBytes).source.find("yr_sigmoid("), std::string::npos);
}

// ntrans's µGraph in shared memory: x + α·(rms_norm(h) − x) is one loop whose two intermediate
// tiles are never stored, so the block keeps 6 tiles of 4096 floats (the 3 inputs, the 2
// rms_norms, the sum) and two scratch arrays of one float per warp, not 8 tiles.
TEST(CudaCodegenBlocks, ElementwiseChainsAreNotStored) {
  const codegen::CudaKernel kernel =
      customized_source(bench::build_fused("ntrans", 1, DType::kFloat16, 1), kH100SharedBytes, false);
  const int64_t scratch = 2 * ((kernel.block_threads / 32 + 3) / 4 * 4);
  EXPECT_EQ(kernel.shared_bytes, (6 * 4096 + scratch) * 4);
  // A tile with a second reader is stored: in the block-reduction graph, x − max feeds only the
  // square (inlined), while the max is also an output (stored, read through a broadcast).
  const codegen::CudaKernel reductions =
      customized_source(bench::build_block_reductions(true, DType::kFloat32), kH100SharedBytes);
  EXPECT_NE(reductions.source.find(" = c0 - c1;"), std::string::npos) << reductions.source;
}

// Tiles read once are all loaded into registers before the first is converted: ntrans's three
// input tiles' loads are in flight together, in the shared-memory code and in the row chain's
// (on sm_80 and sm_90 alike); so are lora's where its loop runs once.
TEST(CudaCodegenBlocks, InvariantTilesAreLoadedTogether) {
  const KernelGraph fused = bench::build_fused("ntrans", 1, DType::kFloat16, 1);
  for (const codegen::CudaKernel &kernel :
       {customized_source(fused, kH100SharedBytes, false), customized_source(fused, kH100SharedBytes, true, 80),
        customized_source(fused, kH100SharedBytes, true, 90)}) {
    const std::string &source = kernel.source;
    const size_t last_load = source.rfind("] = yr_stream16(src");
    const size_t first_conversion = source.find("yr_cvt16(", source.find("Kernel program"));
    ASSERT_NE(last_load, std::string::npos) << source;
    ASSERT_NE(first_conversion, std::string::npos);
    EXPECT_LT(last_load, first_conversion) << source;
  }
  // Where the loop runs once, its per-iteration tiles are read once too: the hand-made lora
  // µGraph at grid 128 loads X, W, A and the invariant B before converting any (W and B first),
  // and its loop reads none.
  const KernelGraph hand = bench::build_fused("lora", 1, DType::kFloat16, 1);
  BlockGraphConfig config = hand.operators().back().block_graph->config();
  config.grid = {128, 1, 1};
  config.forloop_range = 1;
  const std::string lora = customized_source(bench::with_config(hand, config), kH100SharedBytes).source;
  const size_t loop = lora.find("for (int it = 0; it < 1; ++it)");
  ASSERT_NE(loop, std::string::npos) << lora;
  for (const std::string raw : {"raw0[u] = yr_stream16(src0", "raw1[u] = yr_stream16(src1",
                                "raw2[u] = yr_stream16(src2", "raw3[u] = yr_stream16(src3"}) {
    EXPECT_LT(lora.find(raw), lora.find("yr_cvt16(", lora.find("Kernel program"))) << raw;
  }
  EXPECT_EQ(lora.find("yr_stream16", loop), std::string::npos) << "the loop reads no tile";
  // Each block's own columns of W and B are issued before X and A, which every block reads.
  EXPECT_LT(lora.find("raw1[u] = yr_stream16"), lora.find("raw3[u] = yr_stream16"));
  EXPECT_LT(lora.find("raw3[u] = yr_stream16"), lora.find("raw0[u] = yr_stream16"));
  EXPECT_LT(lora.find("raw0[u] = yr_stream16"), lora.find("raw2[u] = yr_stream16"));
  // With 4 iterations (the hand-made µGraph), X, W and A move with the loop: not loaded up front.
  const std::string looped = customized_source(hand, kH100SharedBytes).source;
  EXPECT_EQ(looped.find("raw1[u] = yr_stream16"), std::string::npos) << looped;
  EXPECT_NE(looped.find("for (int it = 0; it < 4; ++it)"), std::string::npos) << looped;
}

// The plugin's count of a block's waits for its tiles (loop_waits, for the search's cost model):
// a loop whose tiles go through the ring of cp.async stages waits once per depth − 1 iterations,
// as far ahead as the copies run. Tiles read once beyond what prefetching keeps in registers are
// copied as usual and add a wait per 16 groups a thread copies. rms_norm(X, w)·W over the whole
// of k in each block (a loop of 1): for 8 rows of 1024 (a QKV projection at decode) and 32
// columns of W a block, W's [1024, 32] tile is 4096 groups, past the registers after X's 1024
// and w's 128; for 4 rows and 8 columns every tile fits them: the loop's one wait. gqa's
// attention, its K and V tiles through the ring, waits once per depth − 1 iterations.
TEST(CudaCodegenBlocks, TilesReadOnceWithThePlainCopyAddWaits) {
  const auto projection = [](int64_t rows, int64_t columns) {
    KernelGraph g;
    const TensorId x = g.new_input({rows, 1024}, DType::kFloat16), w = g.new_input({1024}, DType::kFloat16);
    const TensorId wm = g.new_input({1024, 1536}, DType::kFloat16);
    BlockGraphConfig config;
    config.grid = {1536 / columns, 1, 1};
    config.block_threads = 128;
    auto bg = std::make_shared<BlockGraph>(config);
    const TensorId xt = bg->new_input({rows, 1024}, DType::kFloat16, {-1, -1, -1}, -1);
    const TensorId wt = bg->new_input({1024}, DType::kFloat16, {-1, -1, -1}, -1);
    const TensorId wmt = bg->new_input({1024, 1536}, DType::kFloat16, {1, -1, -1}, -1);
    bg->new_output(bg->matmul(bg->rms_norm(xt, {1024}, 1e-6, wt), wmt), {1, -1, -1}, -1);
    g.mark_output(g.customized({x, w, wm}, bg)[0]);
    return g;
  };
  const codegen::CudaKernel wide = customized_source(projection(8, 32), kH100SharedBytes);
  const int64_t w_groups = 1024 * 32 * 2 / 16 / wide.block_threads;  // W's, per thread
  EXPECT_EQ(wide.loop_waits, 1 + (w_groups + 15) / 16) << wide.block_threads << " threads";
  EXPECT_EQ(customized_source(projection(4, 8), kH100SharedBytes).loop_waits, 1);
  const KernelGraph gqa = bench::build_fused("gqa", 1, DType::kFloat16, 1);
  const int64_t range = gqa.operators().back().block_graph->config().forloop_range;
  const codegen::CudaKernel staged = customized_source(gqa, kH100SharedBytes);
  const size_t wait = staged.source.find("yr_cp_wait<", staged.source.find("Kernel program"));
  ASSERT_NE(wait, std::string::npos) << staged.source;
  const int depth = std::stoi(staged.source.substr(wait + 11)) + 2;
  EXPECT_EQ(staged.loop_waits, (range + depth - 2) / (depth - 1)) << depth << " stages, " << range << " iterations";
  EXPECT_LT(staged.loop_waits, range) << "fewer waits than iterations";
}

// The plugin's count of a block's shared-memory traffic (shared_memory_seconds, for the search's
// cost model) and of its resident blocks (max_resident_blocks): gqa's attention in registers (sm_90)
// moves its scores through none of shared memory, and its registers limit its blocks; on sm_75
// the generic code writes each iteration's scores A = Q·K and their exps E as float tiles and
// reads them back, at least 16 bytes per score an iteration, and more in all than in registers
// by far. The seconds are those bytes at the generic code's rate.
TEST(CudaCodegenBlocks, CountsTheSharedMemoryTrafficOfTheGenericCode) {
  const KernelGraph gqa = attention_at("gqa", 8, 64);
  const codegen::CudaKernel registers = customized_source(gqa, kH100SharedBytes);
  const codegen::CudaKernel generic = customized_source(gqa, kH100SharedBytes, true, 75);
  ASSERT_NE(kernel_body(registers).find("yr_mma16"), std::string::npos) << "not attention in registers";
  const BlockGraph &bg = *gqa.operators().back().block_graph;
  int64_t scores = 0;  // of one iteration: A's elements
  for (const Operator &op : bg.operators()) {
    if (op.kind == OpKind::kMatmul && bg.tensor(op.inputs[0]).phase == LoopPhase::kInvariant) {
      scores = num_elements(bg.tensor(op.outputs[0]).dims);
    }
  }
  ASSERT_GT(scores, 0);
  const int64_t range = bg.config().forloop_range;
  EXPECT_GE(generic.shared_traffic_bytes, 16 * scores * range);
  EXPECT_GE(registers.shared_traffic_bytes, 0);
  EXPECT_LT(4 * registers.shared_traffic_bytes, generic.shared_traffic_bytes);
  EXPECT_DOUBLE_EQ(generic.shared_memory_seconds(),
                   static_cast<double>(generic.shared_traffic_bytes) / codegen::kCudaSharedBytesPerSecond);
  // Attention in registers takes about a register file a block of 256 threads: one a
  // multiprocessor; the generic code has no opinion.
  EXPECT_TRUE(registers.attention_in_registers);
  EXPECT_EQ(registers.max_resident_blocks(),
            std::max<int64_t>(1, codegen::kCudaRegistersPerMultiprocessor /
                                     (registers.block_threads * codegen::kCudaAttentionRegisters)));
  EXPECT_FALSE(generic.attention_in_registers);
  EXPECT_EQ(generic.max_resident_blocks(), -1);
  // Kernels the µGraph planner does not make have no opinion.
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.new_input({8, 64}, DType::kFloat16)));
  const codegen::CudaKernel exp = codegen::cuda_source(serialize::make_kernel_program(g, 1), h100_device());
  EXPECT_EQ(exp.shared_memory_seconds(), -1);
}

// Row chains without a for-loop are kept in registers: ntrans's tiles and the row-chain graph's
// (row sums, maxima and broadcasts, some warps without a chunk) take only the warps' partial sums
// in shared memory, two arrays of one float per warp chunk of 256 elements, on every target and
// whatever the shared-memory limit (the inputs come by 16-byte loads into registers, never
// through shared memory). A thread's chunks of one row are added up before the shuffles (ntrans:
// 2 chunks, one slot per warp and row). Where some row's mean square is out of float32's range,
// the block's rows reduce again, scaled by their largest magnitudes: every thread of ntrans has
// chunks in its one row and knows that by itself; the row chain's threads ask the block
// (__syncthreads_or). Tiles whose rows are not whole warp chunks (the block
// reductions' 37) and µGraphs with a for-loop or a matmul get the shared-memory code.
TEST(CudaCodegenBlocks, RowChainsStayInRegisters) {
  const std::string marker = "Rows in registers";
  for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    const int64_t slots = 2 * (4096 / 256) * 4;
    const KernelGraph fused = bench::build_fused("ntrans", 1, dt, 1);
    for (const codegen::CudaKernel &ntrans :
         {customized_source(fused, kH100SharedBytes), customized_source(fused, kH100SharedBytes, true, 80),
          customized_source(fused, 0, true, 90)}) {
      EXPECT_NE(ntrans.source.find(marker), std::string::npos) << ntrans.source;
      EXPECT_EQ(ntrans.shared_bytes, slots);
      EXPECT_EQ(count(ntrans.source, "] = yr_stream16(src"), 3 * dtype_size(dt) / 2)
          << "one 16-byte load per chunk of 16-bit elements, two of float32";
      EXPECT_EQ(count(ntrans.source, "__syncthreads();"), 2u * 3) << "one per reduction, three per rms_norm";
      EXPECT_EQ(count(ntrans.source, "if (out_of_range) {"), 2u) << "no barrier more for ordinary rows";
      EXPECT_EQ(count(ntrans.source, "for (int k = 0; k < 8; ++k)"), 2u * 3) << "8 warps' slots per row";
      EXPECT_NE(ntrans.source.find("const float scale = 1.0f / yr_clamp(peak[g], 1.17549435e-38f, 8.50705917e+37f);"),
                std::string::npos);
      EXPECT_NE(ntrans.source.find("] * scale * inv;"), std::string::npos);
    }
    const codegen::CudaKernel chain = customized_source(bench::build_row_chain(true, dt), kH100SharedBytes);
    EXPECT_NE(chain.source.find(marker), std::string::npos) << chain.source;
    EXPECT_EQ(chain.shared_bytes, 2 * (2 * 3 * 256 / 256) * 4);
    EXPECT_NE(chain.source.find(">= 192) continue;"), std::string::npos) << "warps 6 and 7 have no chunk";
    EXPECT_EQ(count(chain.source, "if (__syncthreads_or(out_of_range)) {"), 2u);
    EXPECT_EQ(customized_source(bench::build_row_chain(true, dt), kH100SharedBytes, false).source.find(marker),
              std::string::npos);
  }
  for (const KernelGraph &other : {bench::build_block_reductions(true, DType::kFloat16),
                                   bench::build_fused("rmsnorm_linear", 1, DType::kFloat16, 1),
                                   bench::build_fused("lora", 1, DType::kFloat16, 1)}) {
    EXPECT_EQ(customized_source(other, kH100SharedBytes).source.find(marker), std::string::npos);
  }
}

TEST(CudaCodegenLimits, TilesOverSharedMemoryAreUnsupported) {
  const KernelGraph fused = bench::build_fused("gated_mlp", 8, DType::kFloat16, 1);
  const std::vector<bool> live = live_operators(fused);
  int checked = 0;
  for (size_t i = 0; i < fused.operators().size(); ++i) {
    if (!live[i] || fused.operators()[i].kind != OpKind::kCustomized) continue;
    ++checked;
    const auto program = serialize::make_kernel_program(fused, i);
    try {
      codegen::cuda_source(program, {90, 1024});
      ADD_FAILURE() << "1 KiB of shared memory was enough";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
      EXPECT_NE(std::string(e.what()).find("shared memory"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(checked, 0) << "the fused graph has no customized operator";
}

// A block-level row reduction whose warps each own several rows (qknorm's rms_norm of Q in its
// float32 attention blocks, which keep the generic code: 64 rows over 8 warps, 128 at b = 8)
// reduces them side by side: every row's loads, then the rows' shuffles interleaved, then each
// row's step.
TEST(CudaCodegenBlocks, WarpsReduceTheirRowsSideBySide) {
  const KernelGraph full = bench::build_fused("qknorm", 1, DType::kFloat32, 1);
  for (const auto &[row_blocks, per_warp] : {std::pair<int64_t, int>{4, 8}, {2, 16}}) {
    BlockGraphConfig config = full.operators().back().block_graph->config();
    config.grid = {2, row_blocks, 1};
    config.forloop_range = 32;
    const KernelGraph fused = bench::with_config(full, config);
    // float32 tiles of 64 or 128 rows of Q need more shared memory than an H100 has: generated
    // for no limit.
    const std::string source =
        codegen::cuda_source(serialize::make_kernel_program(fused, fused.operators().size() - 1), {90, 0}).source;
    ASSERT_EQ(source.find("att_q"), std::string::npos) << "float32: no attention in registers";
    const std::string G = std::to_string(per_warp);
    EXPECT_NE(source.find("float totals[" + G + "];"), std::string::npos) << row_blocks;
    EXPECT_NE(source.find("for (int g = 0; g < " + G +
                          "; ++g) totals[g] = totals[g] + __shfl_xor_sync(0xffffffffu, totals[g], off);"),
              std::string::npos);
    EXPECT_NE(source.find("const int r = warp + g * 8, rl = lane;"), std::string::npos);
    EXPECT_EQ(source.find("for (int r = warp; r < "), std::string::npos) << "no row after row";
  }
}

}  // namespace
}  // namespace yirage::cuda
