// A host emulator of the three gfx90a matrix instructions that the generator's MFMA code uses, so
// that the code's lane and register mapping runs without an AMD GPU (codegen/mfma_emulator_test.cpp).
// Each lane of a wavefront is a host thread; an instruction waits until all 64 lanes of its
// wavefront have passed their operands, then each lane computes its part of D = A·B + C.
//
// The layouts, for a 64-lane wavefront (lane l; AMD's matrix instruction calculator for CDNA 2,
// the CDNA 2 ISA guide's MFMA chapter, and AMD's example kernels in "Matrix Core Programming on
// CDNA2"/"…on CDNA3 and CDNA4" (ROCm blogs), which write them as loads and stores):
//  - v_mfma_f32_16x16x16f16, v_mfma_f32_16x16x16bf16_1k (same layout, bf16 as 16-bit integers):
//    element e (0..3) of A's operand in lane l is A[l % 16][4 (l / 16) + e]; of B's,
//    B[4 (l / 16) + e][l % 16];
//  - v_mfma_f32_16x16x4f32: lane l's A is A[l % 16][l / 16], its B is B[l / 16][l % 16];
//  - all three: register e (0..3) of lane l's C and D is C[4 (l / 16) + e][l % 16].
// The broadcast controls (cbsz, abid, blgp) must be 0: the generator uses no other.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace yirage::hip::testing {

typedef _Float16 emu_f16x4 __attribute__((vector_size(8)));
typedef short emu_bf16x4 __attribute__((vector_size(8)));
typedef float emu_f32x4 __attribute__((vector_size(16)));

// One wavefront's exchange: the lanes' operands of the instruction under way, as floats.
class EmulatedWavefront {
 public:
  // Lane `lane` passes its A and B elements (4 each, or 1) for `instruction`; returns once all 64
  // lanes have, with every lane's. Throws if they do not all come within a few seconds (lanes
  // that diverged around the instruction, which hardware would not run correctly either) or if
  // they passed different instructions.
  void exchange(int lane, const char *instruction, const float *a, const float *b, int count) {
    std::unique_lock<std::mutex> lock(mutex_);
    // Wait until the previous instruction's readers are gone.
    wait(lock, [&] { return readers_ == 0; });
    if (arrived_ == 0) instruction_ = instruction;
    if (instruction_ != instruction) {
      throw std::runtime_error(std::string("lanes of one wavefront ran ") + instruction_ + " and " + instruction);
    }
    std::memcpy(a_[lane], a, sizeof(float) * static_cast<size_t>(count));
    std::memcpy(b_[lane], b, sizeof(float) * static_cast<size_t>(count));
    const uint64_t round = round_;
    if (++arrived_ == 64) {
      arrived_ = 0;
      readers_ = 64;
      ++round_;
      changed_.notify_all();
    } else {
      wait(lock, [&] { return round_ != round; });
    }
  }
  // The A and B elements lane `lane` passed (valid between exchange and done).
  float a(int lane, int e) const { return a_[lane][e]; }
  float b(int lane, int e) const { return b_[lane][e]; }
  void done() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--readers_ == 0) changed_.notify_all();
  }

 private:
  template <typename Ready>
  void wait(std::unique_lock<std::mutex> &lock, Ready ready) {
    if (!changed_.wait_for(lock, std::chrono::seconds(10), ready)) {
      throw std::runtime_error("not every lane of the wavefront reached the instruction");
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0, readers_ = 0;
  uint64_t round_ = 0;
  std::string instruction_;
  float a_[64][4] = {}, b_[64][4] = {};
};

// The emulated thread: its index in the block, its block's in the grid and its wavefront's
// exchange (set by the test for each host thread before it runs the generated code).
struct EmulatedThreadIndex {
  unsigned x = 0;
};
inline thread_local EmulatedThreadIndex threadIdx, blockIdx;
inline thread_local EmulatedWavefront *current_wavefront = nullptr;

// D = A·B + C for a 16 × 16 output, k = 16 (packed: 4 elements per lane) or 4 (1 per lane).
inline emu_f32x4 emulate_mfma_16x16(const char *instruction, const float *a, const float *b, int per_lane, emu_f32x4 c,
                                    int cbsz, int abid, int blgp) {
  if (cbsz != 0 || abid != 0 || blgp != 0) throw std::runtime_error("broadcast controls are not emulated");
  EmulatedWavefront &w = *current_wavefront;
  const int lane = static_cast<int>(threadIdx.x % 64);
  w.exchange(lane, instruction, a, b, per_lane);
  const int k_count = 4 * per_lane, col = lane % 16;
  emu_f32x4 d;
  for (int e = 0; e < 4; ++e) {
    const int row = 4 * (lane / 16) + e;
    float sum = c[e];
    for (int k = 0; k < k_count; ++k) {
      // A[row][k] is in lane row + 16 (k / per_lane), element k % per_lane; B[k][col] likewise.
      sum += w.a(row + 16 * (k / per_lane), k % per_lane) * w.b(col + 16 * (k / per_lane), k % per_lane);
    }
    d[e] = sum;
  }
  w.done();
  return d;
}

inline float bf16_value(short bits) {
  const uint32_t wide = static_cast<uint32_t>(static_cast<uint16_t>(bits)) << 16;
  float v;
  std::memcpy(&v, &wide, sizeof v);
  return v;
}

}  // namespace yirage::hip::testing

// The intrinsics under their own names, as the generated code calls them.
inline yirage::hip::testing::emu_f32x4 __builtin_amdgcn_mfma_f32_16x16x16f16(yirage::hip::testing::emu_f16x4 a,
                                                                             yirage::hip::testing::emu_f16x4 b,
                                                                             yirage::hip::testing::emu_f32x4 c,
                                                                             int cbsz, int abid, int blgp) {
  float x[4], y[4];
  for (int e = 0; e < 4; ++e) {
    x[e] = static_cast<float>(a[e]);
    y[e] = static_cast<float>(b[e]);
  }
  return yirage::hip::testing::emulate_mfma_16x16("v_mfma_f32_16x16x16f16", x, y, 4, c, cbsz, abid, blgp);
}

inline yirage::hip::testing::emu_f32x4 __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(yirage::hip::testing::emu_bf16x4 a,
                                                                                 yirage::hip::testing::emu_bf16x4 b,
                                                                                 yirage::hip::testing::emu_f32x4 c,
                                                                                 int cbsz, int abid, int blgp) {
  float x[4], y[4];
  for (int e = 0; e < 4; ++e) {
    x[e] = yirage::hip::testing::bf16_value(a[e]);
    y[e] = yirage::hip::testing::bf16_value(b[e]);
  }
  return yirage::hip::testing::emulate_mfma_16x16("v_mfma_f32_16x16x16bf16_1k", x, y, 4, c, cbsz, abid, blgp);
}

inline yirage::hip::testing::emu_f32x4 __builtin_amdgcn_mfma_f32_16x16x4f32(float a, float b,
                                                                            yirage::hip::testing::emu_f32x4 c, int cbsz,
                                                                            int abid, int blgp) {
  return yirage::hip::testing::emulate_mfma_16x16("v_mfma_f32_16x16x4f32", &a, &b, 1, c, cbsz, abid, blgp);
}
