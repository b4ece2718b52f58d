// Parts of the CUDA plugin that need no GPU: the shared memory a dependent launch asks for, the
// figures a device's description takes from targets/*.json, the kernels generated once for
// supports(), estimate() and compile(), and which matmuls cuBLASLt is asked about.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "cublas_matmul.hpp"
#include "dependent_launch.hpp"
#include "device_figures.hpp"
#include "generated_kernels.hpp"
#include "ir/block_graph.hpp"
#include "serialize/kernel_program.hpp"
#include "target/target.hpp"

namespace yirage::cuda {
namespace {

constexpr int64_t kH100SharedBytes = 227 * 1024;
constexpr int64_t kH100SharedPerMultiprocessor = 233472;

// A dependent kernel's blocks spread over the device (dependent_launch.hpp): it asks for the
// least shared memory (in KiB) that keeps a multiprocessor to ceil(blocks / 132) of them, on a
// model of an H100's occupancy (228 KiB a multiprocessor, 1 KiB reserved a block, 2048 threads,
// 64 Ki registers, 32 blocks).
TEST(CudaDependentLaunch, BlocksSpreadOverTheDevice) {
  const auto h100 = [](int64_t threads, int64_t registers) {
    return [=](int64_t bytes) {
      return std::min(
          {kH100SharedPerMultiprocessor / (bytes + 1024), 2048 / threads, 65536 / (threads * registers), int64_t{32}});
    };
  };
  const auto spread = [&](int64_t blocks, int64_t shared, int64_t threads, int64_t registers) {
    return dependent_shared_bytes(blocks, 132, shared, kH100SharedBytes, h100(threads, registers));
  };
  // The sum of parts after attention's chunk kernel at b = 8: 128 blocks, 8 of which would fit a
  // multiprocessor; one does with 114 KiB, two with 113.
  EXPECT_EQ(spread(128, 0, 256, 32), 114 * 1024);
  EXPECT_EQ(h100(256, 32)(114 * 1024), 1);
  EXPECT_EQ(h100(256, 32)(113 * 1024), 2);
  // 512 blocks: 4 a multiprocessor (45 KiB), not 5 (44).
  EXPECT_EQ(spread(512, 0, 256, 32), 45 * 1024);
  EXPECT_EQ(h100(256, 32)(44 * 1024), 5);
  // Kept where its registers, threads or shared memory already spread it.
  EXPECT_EQ(spread(128, 165024, 384, 164), 165024) << "the chunk kernel: one block a multiprocessor";
  EXPECT_EQ(spread(1024, 0, 256, 32), 0) << "8 a multiprocessor is what 1024 blocks need";
  EXPECT_EQ(spread(128, 120 * 1024, 256, 32), 120 * 1024);
  EXPECT_EQ(spread(128, 100000, 256, 32), 114 * 1024) << "never less than the kernel uses";
  // Where shared memory cannot bring it there, all of it; no blocks or multiprocessors: unchanged.
  EXPECT_EQ(dependent_shared_bytes(128, 132, 0, kH100SharedBytes, [](int64_t) { return int64_t{2}; }),
            kH100SharedBytes);
  EXPECT_EQ(dependent_shared_bytes(0, 132, 4096, kH100SharedBytes, h100(256, 32)), 4096);
  EXPECT_EQ(dependent_shared_bytes(128, 0, 4096, kH100SharedBytes, h100(256, 32)), 4096);
}

// An H100 (sm_90, 132 SMs, 80 GB) reports what targets/h100.json says, an H200 (sm_90, 141 GB)
// what targets/h200.json says; one with fewer SMs (the PCIe card's 114) the same bandwidths and
// its share of the FLOP/s; a device no description names (sm_89) an estimate from its SM count.
TEST(CudaDeviceFigures, ComeFromTheTargetDescriptions) {
  const targets::TargetProperties h100 = targets::builtin_target("h100"), h200 = targets::builtin_target("h200");
  ASSERT_EQ(h100.cuda_compute_capability, 90);
  ASSERT_EQ(h200.cuda_compute_capability, 90);
  const int64_t h100_memory = 85'031'714'816, h200_memory = 150'754'820'096;  // as the driver reports them
  const DeviceFigures sxm = device_figures(90, 132, h100_memory);
  EXPECT_EQ(sxm.memory_bandwidth, h100.memory_bandwidth);
  EXPECT_EQ(sxm.l2_bandwidth, h100.l2_bandwidth);
  EXPECT_EQ(sxm.flops_float16, h100.peak_flops_float16);
  EXPECT_EQ(sxm.flops_bfloat16, h100.peak_flops_bfloat16);
  EXPECT_EQ(sxm.flops_float32, h100.peak_flops_float32);
  EXPECT_EQ(sxm.vector_flops_float32, h100.vector_flops_float32);
  EXPECT_EQ(sxm.launch_overhead_seconds, h100.launch_overhead_seconds);
  EXPECT_EQ(sxm.source, "targets/h100.json");
  const DeviceFigures larger = device_figures(90, 132, h200_memory);
  EXPECT_EQ(larger.source, "targets/h200.json");
  EXPECT_EQ(larger.memory_bandwidth, h200.memory_bandwidth);
  EXPECT_EQ(larger.l2_bandwidth, h200.l2_bandwidth);
  EXPECT_EQ(larger.flops_float16, h200.peak_flops_float16);
  EXPECT_EQ(larger.launch_overhead_seconds, h200.launch_overhead_seconds);
  EXPECT_NE(h200.memory_bandwidth, h100.memory_bandwidth);
  EXPECT_EQ(device_figures(90, 132, 0).source, "targets/h100.json");  // memory unknown: the first
  const DeviceFigures pcie = device_figures(90, 114, h100_memory);
  EXPECT_EQ(pcie.memory_bandwidth, h100.memory_bandwidth);
  EXPECT_DOUBLE_EQ(pcie.flops_float16, h100.peak_flops_float16 * 114 / 132);
  EXPECT_EQ(device_figures(80, 108, 85'899'345'920).flops_float16, targets::builtin_target("a100").peak_flops_float16);
  const DeviceFigures other = device_figures(89, 128, 25'757'220'864);
  EXPECT_EQ(other.source, "estimated from the SM count");
  EXPECT_EQ(other.memory_bandwidth, 128 * 1.0e10);
  EXPECT_GT(other.flops_float16, 0);
  EXPECT_EQ(device_figures(75, 40, 0).flops_bfloat16, 0) << "no bfloat16 before sm_80";
}

GeneratedKernel kernel_named(const std::string &source) {
  GeneratedKernel g;
  g.kernel.source = source;
  g.input_bytes = {4};
  return g;
}

// A program's kernel is generated once per device, its refusal once too (and thrown again, with
// its code); the least recently used leaves first; threads asking at once all get an answer.
TEST(CudaGeneratedKernels, AreGeneratedOncePerProgramAndDevice) {
  GeneratedKernels kernels(2);
  int generations = 0;
  const auto make = [&](const std::string &source) {
    return [&generations, source] {
      ++generations;
      return kernel_named(source);
    };
  };
  const std::string a = "program a", b = "program b", c = "program c";
  EXPECT_EQ(kernels.get(0, a.data(), a.size(), make("A"))->kernel.source, "A");
  EXPECT_EQ(kernels.get(0, a.data(), a.size(), make("wrong"))->kernel.source, "A");
  EXPECT_EQ(generations, 1);
  EXPECT_EQ(kernels.get(1, a.data(), a.size(), make("A on 1"))->kernel.source, "A on 1") << "another device";
  EXPECT_EQ(generations, 2);
  const auto refuse = [&] {
    ++generations;
    throw Error(ErrorCode::kUnsupported, "cuda codegen: too large");
    return kernel_named("");
  };
  for (int i = 0; i < 2; ++i) {
    try {
      kernels.get(0, b.data(), b.size(), refuse);
      ADD_FAILURE() << "refused once, accepted later";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
      EXPECT_STREQ(e.what(), "cuda codegen: too large");
    }
  }
  EXPECT_EQ(generations, 3);
  EXPECT_EQ(kernels.size(), 2u);
  // (0, a) was used least recently: a third entry pushes it out.
  kernels.get(0, c.data(), c.size(), make("C"));
  EXPECT_EQ(kernels.size(), 2u);
  kernels.get(0, a.data(), a.size(), make("A again"));
  EXPECT_EQ(generations, 5);
  // Many threads, few programs: every answer is its program's.
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string program = "p" + std::to_string((i + t) % 5);
        if (kernels.get(0, program.data(), program.size(), [&] { return kernel_named(program); })->kernel.source !=
            program) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread &t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// The kernel program of `graph`'s last operator.
serialize::KernelProgram last_operator(const KernelGraph &graph) {
  return serialize::make_kernel_program(graph, graph.operators().size() - 1);
}

// cuBLASLt plans only matmuls whose operands form one strided batch; the others (and every other
// operator) run the generated kernel without a cuBLASLt call. This machine has libcublasLt but no
// GPU, so a plan that gets as far as cuBLASLt fails there, with its status.
TEST(CudaCublasMatmul, IsPlannedForMatmulsOfOneStridedBatchOnly) {
  std::string why;
  const CublasLt *lt = CublasLt::load(why);
  if (lt == nullptr) GTEST_SKIP() << why;
  KernelGraph g;
  const TensorId a = g.new_input({2, 1, 8, 16}, DType::kFloat16);
  const TensorId b = g.new_input({1, 3, 16, 4}, DType::kFloat16);
  g.mark_output(g.matmul(a, b));  // broadcast over different batch dims: no single batch
  EXPECT_EQ(CublasMatmul::plan(*lt, last_operator(g), 4), nullptr);
  KernelGraph e;
  e.mark_output(e.unary(OpKind::kExp, e.new_input({8, 16}, DType::kFloat16)));
  EXPECT_EQ(CublasMatmul::plan(*lt, last_operator(e), 4), nullptr);
  KernelGraph m;
  const TensorId x = m.new_input({2, 8, 16}, DType::kBFloat16);
  const TensorId w = m.new_input({1, 16, 4}, DType::kBFloat16);  // shared: one GEMM of 16 rows
  m.mark_output(m.matmul(x, w));
  try {
    const auto plan = CublasMatmul::plan(*lt, last_operator(m), 4);
    ASSERT_NE(plan, nullptr);  // a GPU after all
    EXPECT_EQ(plan->shape(), "[16,16]·[16,4] bfloat16");
  } catch (const NativeError &e) {
    EXPECT_NE(std::string(e.what()).find("cuda: cublasLtCreate: "), std::string::npos) << e.what();
  }
}

// A µGraph that is one product of many rows, summed over its loop, with a residual added
// (x · W + r) is planned as D = x·W + r with r as cuBLASLt's C; with any other operator after the
// sum (a GELU) it is not, and cuBLASLt is not called.
TEST(CudaCublasMatmul, IsPlannedForProductUGraphsWithAResidual) {
  std::string why;
  const CublasLt *lt = CublasLt::load(why);
  if (lt == nullptr) GTEST_SKIP() << why;
  const auto product = [](OpKind after) {
    KernelGraph g;
    const TensorId x = g.new_input({256, 64}, DType::kFloat16), w = g.new_input({64, 128}, DType::kFloat16);
    const TensorId r = g.new_input({256, 128}, DType::kFloat16);
    BlockGraphConfig config;
    config.grid = {4, 2, 1};
    config.block_threads = 128;
    config.forloop_range = 2;
    auto bg = std::make_shared<BlockGraph>(config);
    const TensorId xt = bg->new_input({256, 64}, DType::kFloat16, {0, -1, -1}, 1);
    const TensorId wt = bg->new_input({64, 128}, DType::kFloat16, {-1, 1, -1}, 0);
    const TensorId rt = bg->new_input({256, 128}, DType::kFloat16, {0, 1, -1}, -1);
    const TensorId sum = bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, wt));
    bg->new_output(
        after == OpKind::kAdd ? bg->binary(OpKind::kAdd, sum, rt) : bg->binary(OpKind::kAdd, bg->unary(after, sum), rt),
        {0, 1, -1}, -1);
    g.mark_output(g.customized({x, w, r}, bg)[0]);
    return g;
  };
  EXPECT_EQ(CublasMatmul::plan(*lt, last_operator(product(OpKind::kGelu)), 4), nullptr);
  try {
    const auto plan = CublasMatmul::plan(*lt, last_operator(product(OpKind::kAdd)), 4);
    ASSERT_NE(plan, nullptr);  // a GPU after all
    EXPECT_EQ(plan->shape(), "[256,64]·[64,128] float16 + a residual");
  } catch (const NativeError &e) {
    EXPECT_NE(std::string(e.what()).find("cuda: cublasLtCreate: "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace yirage::cuda
