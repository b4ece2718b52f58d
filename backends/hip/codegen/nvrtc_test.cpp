// The HIP source for 32-lane wavefronts compiled by NVRTC for sm_90: the code the HIP plugin's test
// mode on NVIDIA (YIRAGE_HIP_PLATFORM=cuda, docs/backends/hip.md) runs. Skips, saying so, where
// NVRTC cannot be opened. (Its own translation unit: the CUDA and HIP headers cannot meet.)
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "driver.hpp"
#include "hip/codegen/hip_test_sources.hpp"

namespace yirage::hip {
namespace {

TEST(HipCodegen, TheSourceForWave32CompilesWithNvrtcForSm90) {
  const cuda::Nvrtc *nvrtc = nullptr;
  try {
    nvrtc = &cuda::Nvrtc::load();
  } catch (const Error &e) {
    GTEST_SKIP() << "NOT RUN: NVRTC cannot be opened here: " << e.what();
  }
  const testing::Generated g = testing::generate(32);
  const auto start = std::chrono::steady_clock::now();
  try {
    EXPECT_GT(nvrtc->compile(testing::translation_unit(g), "sm_90").size(), 1000u);
  } catch (const Error &e) {
    ADD_FAILURE() << e.what();
  }
  std::printf("%zu kernels compiled for sm_90 in %.1f s\n", g.bodies.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace
}  // namespace yirage::hip
