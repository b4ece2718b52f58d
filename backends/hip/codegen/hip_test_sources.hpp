// The generated HIP source of every conformance kernel kind, in one translation unit per
// wavefront size, for the compile tests (hiprtc_test.cpp, nvrtc_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/testing/kernel_kinds.hpp"
#include "hip/hip_target.hpp"
#include "util/error.hpp"

namespace yirage::hip::testing {

inline constexpr int64_t kLds = 64 * 1024;  // per block on gfx90a and gfx1030

struct Generated {
  std::string prelude;
  std::vector<std::string> bodies;       // each kernel's text after the prelude
  std::vector<std::string> unsupported;  // kinds the generator refused, with its reason
};

// mfma_tiles: the µGraphs' tile matmuls on MFMA, as the plugin prints them for gfx90a by default.
inline Generated generate(int wavefront, bool mfma_tiles = false) {
  Generated out;
  const codegen::CudaTarget target = hip_target(kLds, 110, kLds, wavefront, false, mfma_tiles);
  size_t index = 0;
  for (const yirage::testing::KernelKind &kind : yirage::testing::conformance_kernel_kinds()) {
    codegen::CudaKernel kernel;
    try {
      kernel = codegen::cuda_source(kind.program, target);
    } catch (const Error &e) {
      if (e.code() != ErrorCode::kUnsupported) throw;
      out.unsupported.push_back(kind.name + ": " + e.what());
      continue;
    }
    // A µGraph's blocks are whole wavefronts; other kernels' whole 32-lane warps (the code's
    // warps: on a 64-lane wavefront each half is one).
    const bool ugraph = kind.program.op().kind == OpKind::kCustomized;
    EXPECT_EQ(kernel.block_threads % (ugraph ? wavefront : 32), 0) << kind.name;
    EXPECT_FALSE(kernel.waits_for_previous) << kind.name;
    const size_t body_at = kernel.source.find("// Kernel program");
    EXPECT_NE(body_at, std::string::npos) << kind.name;
    const std::string prelude = kernel.source.substr(0, body_at), body = kernel.source.substr(body_at);
    if (out.prelude.empty()) out.prelude = prelude;
    EXPECT_EQ(prelude, out.prelude) << kind.name;
    // Nothing NVIDIA-only in the kernel: it runs the same code under hiprtc and NVRTC.
    for (const char *nvidia :
         {"__CUDA_ARCH__", "asm(", "asm volatile", "yr_mma", "yr_ldmatrix", "yr_wgmma", "griddepcontrol"}) {
      EXPECT_EQ(body.find(nvidia), std::string::npos) << kind.name << " uses " << nvidia;
    }
    std::string renamed = body;
    const std::string symbol = std::string(codegen::kCudaKernelSymbol) + "(";
    renamed.replace(renamed.find(symbol), symbol.size() - 1,
                    std::string(codegen::kCudaKernelSymbol) + "_" + std::to_string(index));
    out.bodies.push_back("namespace k" + std::to_string(index++) + " {\n" + renamed + "}\n");
  }
  return out;
}

inline std::string translation_unit(const Generated &g) {
  std::string unit = g.prelude;
  for (const std::string &body : g.bodies) unit += body;
  return unit;
}

// The kinds that need more LDS than a block has (64 KiB): full-size attention in blocks of many
// query rows, as on Intel's Arc (docs/backends/hip.md lists them).
inline void expect_only_lds_refusals(const Generated &g) {
  for (const std::string &u : g.unsupported) {
    std::printf("refused: %s\n", u.c_str());
    EXPECT_NE(u.find("shared memory"), std::string::npos) << u;
  }
  EXPECT_LE(g.unsupported.size(), 6u);
  EXPECT_GE(g.bodies.size(), 50u);
}

}  // namespace yirage::hip::testing
