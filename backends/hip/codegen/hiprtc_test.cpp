// The HIP source without an AMD GPU: the generated source of every kernel kind of the conformance
// suite (testing/kernel_kinds.hpp) must compile with hiprtc for gfx90a (CDNA 2, 64-lane
// wavefronts) and gfx1030 (RDNA 2, 32 lanes), and the same source for 32 lanes with NVRTC for
// sm_90 (the prelude's CUDA mapping, which runs the HIP code on NVIDIA: docs/backends/hip.md).
// Skips, saying so, where hiprtc or NVRTC cannot be opened.
//
// Compiling is slow next to generating, so each compiler gets every kernel in one translation
// unit: the prelude (which depends only on the wavefront size) once, each kernel's own text in a
// namespace of its own with its symbol renamed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "cuda/codegen/cuda_tile_mfma.hpp"
#include "hip/codegen/hip_test_sources.hpp"
#include "hip/testing/mfma_tile_cases.hpp"
#include "hip_api.hpp"
#include "hip_target.hpp"
#include "mfma_probe.hpp"
#include "util/error.hpp"

namespace yirage::hip {
namespace {

using testing::Generated;
using testing::kLds;

void expect_hiprtc_compiles(const std::string &arch, int wavefront, bool mfma_tiles) {
  std::string why;
  const Api *api = Api::load(why);
  if (api == nullptr) GTEST_SKIP() << "NOT RUN: hiprtc cannot be opened here: " << why;
  const Generated g = testing::generate(wavefront, mfma_tiles);
  testing::expect_only_lds_refusals(g);
  if (mfma_tiles) {
    // The 16-bit fused µGraphs' tile matmuls take each of the three instructions somewhere.
    size_t with_mfma = 0;
    for (const char *builtin : {"__builtin_amdgcn_mfma_f32_16x16x16f16(", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k(",
                                "__builtin_amdgcn_mfma_f32_16x16x4f32("}) {
      const size_t uses =
          static_cast<size_t>(std::count_if(g.bodies.begin(), g.bodies.end(), [&](const std::string &b) {
            return b.find(builtin) != std::string::npos;
          }));
      EXPECT_GE(uses, 2u) << builtin;
      with_mfma += uses;
    }
    EXPECT_GE(with_mfma, 10u);
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    const std::string code = api->compile(testing::translation_unit(g), arch);
    EXPECT_GT(code.size(), 1000u);
  } catch (const Error &e) {
    ADD_FAILURE() << arch << ": " << e.what();
  }
  std::printf("%zu kernels compiled for %s in %.1f s\n", g.bodies.size(), arch.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// gfx90a with the µGraphs' tile matmuls on MFMA (the plugin's default there; without it, their
// float path is the text gfx1030 and NVRTC compile).
TEST(HipCodegen, EveryKernelKindCompilesForGfx90a) {
  expect_hiprtc_compiles("gfx90a", 64, true);
}

TEST(HipCodegen, EveryKernelKindCompilesForGfx1030) {
  expect_hiprtc_compiles("gfx1030", 32, false);
}

// Pre-defined matmuls of 16-bit data on gfx90a's matrix cores (MFMA, where the plugin is asked
// for them): odd shapes with partial tiles and k tails, batched with a broadcast A. And the tile
// matmuls that the emulator test runs (testing/mfma_tile_cases.hpp: every MFMA kind, partial
// tiles, k tails, batches, views), each as a kernel of its own, in the same translation unit.
TEST(HipCodegen, MfmaMatmulsCompileForGfx90a) {
  std::string why;
  const Api *api = Api::load(why);
  if (api == nullptr) GTEST_SKIP() << "NOT RUN: hiprtc cannot be opened here: " << why;
  std::string unit;
  int index = 0;
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    for (const auto &[a, b] : {std::pair<Dims, Dims>{{77, 104}, {104, 88}}, {{1, 40, 45}, {3, 45, 131}}}) {
      KernelGraph g;
      g.mark_output(g.matmul(g.new_input(a, dt), g.new_input(b, dt)));
      const codegen::CudaKernel kernel =
          codegen::cuda_source(serialize::make_kernel_program(g, 2), hip_target(kLds, 110, kLds, 64, true));
      const std::string builtin = dt == DType::kFloat16 ? "__builtin_amdgcn_mfma_f32_16x16x16f16("
                                                        : "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k(";
      EXPECT_NE(kernel.source.find(builtin), std::string::npos) << to_string(a) << " x " << to_string(b);
      EXPECT_EQ(kernel.block_threads, 256);
      std::string body = kernel.source.substr(kernel.source.find("// Kernel program"));
      const std::string symbol = codegen::kCudaKernelSymbol;
      body.replace(body.find(symbol + "("), symbol.size(), symbol + "_" + std::to_string(index));
      if (unit.empty()) unit = kernel.source.substr(0, kernel.source.find("// Kernel program"));
      unit += "namespace m" + std::to_string(index++) + " {\n" + body + "}\n";
    }
  }
  for (const testing::MfmaTileCase &c : testing::mfma_tile_cases()) {
    codegen::Printer p;
    p.open("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(c.threads) + ") mfma_tile_" +
           std::to_string(index++) +
           "(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ O)");
    EXPECT_TRUE(codegen::cuda::mfma_tile_matmul(p, c.a, c.b, c.o, c.threads)) << c.name;
    p.close();
    unit += "// " + c.name + "\n" + p.str();
  }
  try {
    EXPECT_GT(api->compile(unit, "gfx90a:sramecc+:xnack-").size(), 1000u);
  } catch (const Error &e) {
    ADD_FAILURE() << e.what() << "\n" << unit.substr(unit.find("namespace m0"));
  }
  // Neither on 32-lane wavefronts nor where not asked for.
  KernelGraph g;
  g.mark_output(g.matmul(g.new_input({77, 104}, DType::kFloat16), g.new_input({104, 88}, DType::kFloat16)));
  for (const codegen::CudaTarget &target : {hip_target(kLds, 110, kLds, 32, true), hip_target(kLds, 110, kLds, 64)}) {
    EXPECT_EQ(codegen::cuda_source(serialize::make_kernel_program(g, 2), target).source.find("mfma"),
              std::string::npos);
  }
}

// The matrix cores' self-test that the plugin runs before any kernel uses them (mfma_probe.hpp).
TEST(HipCodegen, TheMfmaSelfTestCompilesForGfx90a) {
  std::string why;
  const Api *api = Api::load(why);
  if (api == nullptr) GTEST_SKIP() << "NOT RUN: hiprtc cannot be opened here: " << why;
  const MfmaProbe probe = mfma_probe();
  for (const char *builtin : {"__builtin_amdgcn_mfma_f32_16x16x16f16(", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k(",
                              "__builtin_amdgcn_mfma_f32_16x16x4f32("}) {
    EXPECT_NE(probe.source.find(builtin), std::string::npos) << builtin;
  }
  EXPECT_EQ(probe.expected.size(), 3u * 256);
  try {
    EXPECT_GT(api->compile(probe.source, "gfx90a:sramecc+:xnack-").size(), 1000u);
  } catch (const Error &e) {
    ADD_FAILURE() << e.what();
  }
}

// The prelude says what it was generated for, and hiprtc refuses a source for another wavefront
// size (the generator's block sizes are whole wavefronts).
TEST(HipCodegen, TheSourceIsForOneWavefrontSize) {
  std::string why;
  const Api *api = Api::load(why);
  if (api == nullptr) GTEST_SKIP() << "NOT RUN: hiprtc cannot be opened here: " << why;
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.new_input({5, 7}, DType::kFloat16)));
  const codegen::CudaKernel wave64 =
      codegen::cuda_source(serialize::make_kernel_program(g, 1), hip_target(kLds, 110, kLds, 64));
  EXPECT_NE(wave64.source.find("#define YR_WAVEFRONT 64"), std::string::npos);
  try {
    api->compile(wave64.source, "gfx1030");
    ADD_FAILURE() << "a source for 64-lane wavefronts compiled for gfx1030";
  } catch (const backend::NativeError &e) {
    EXPECT_NE(std::string(e.what()).find("generated for another wavefront size"), std::string::npos) << e.what();
  }
}

// Architectures this hiprtc does not know are refused before hiprtc is called (it aborts the
// process for them).
TEST(HipCodegen, UnknownArchitecturesAreRefusedBeforeHiprtcRuns) {
  std::string why;
  const Api *api = Api::load(why);
  if (api == nullptr) GTEST_SKIP() << "NOT RUN: hiprtc cannot be opened here: " << why;
  const std::vector<std::string> &known = api->architectures();
  if (std::find(known.begin(), known.end(), "gfx942") != known.end()) {
    GTEST_SKIP() << "this ROCm compiles for gfx942";
  }
  try {
    api->compile("extern \"C\" __global__ void k() {}", "gfx942:sramecc+:xnack-");
    ADD_FAILURE() << "gfx942 compiled";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("cannot compile for gfx942"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace yirage::hip
