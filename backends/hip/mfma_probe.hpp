// A self-test of gfx90a's matrix cores, run on the device before the plugin lets any kernel use
// them (plugin.cpp): one 64-lane wavefront computes three 16 × 16 × 16 products with the
// generator's tile MFMA code (cuda_tile_mfma.hpp), one for each instruction it uses (float16,
// bfloat16 and float32 operands), on values whose products are exact in float32. If the device's
// results differ in any bit, or the probe cannot be built or run, MFMA stays off on that device.
// What it shows where it passes: the instructions behave as the layouts that the host emulator
// (testing/mfma_emulator.hpp) tests the generated code against.
#pragma once

#include <string>
#include <vector>

#include "runtime.hpp"

namespace yirage::hip {

inline constexpr const char *kMfmaProbeSymbol = "yirage_mfma_probe";

struct MfmaProbe {
  // extern "C" yirage_mfma_probe(const float *A, const float *B, float *O), one block of 64
  // threads; A, B and O hold three 16 × 16 matrices each, row-major, one after the other.
  std::string source;
  std::vector<float> a, b, expected;
};

MfmaProbe mfma_probe();

// Runs `probe`, compiled into `code_object`, on the current device of `runtime`: "" when every
// element of O is exactly as expected, else what differed. Throws what the runtime throws.
std::string run_mfma_probe(Runtime &runtime, const std::string &code_object, const MfmaProbe &probe);

}  // namespace yirage::hip
