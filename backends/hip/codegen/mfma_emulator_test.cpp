// The generator's MFMA tile matmuls (cuda_tile_mfma.hpp) run on the host: the code it prints for
// every case of testing/mfma_tile_cases.hpp (compiled into this test at build time by
// mfma_tile_case_printer) runs on emulated wavefronts (testing/mfma_emulator.hpp: one host thread
// per lane, the intrinsics emulated after AMD's documented layouts) and must give the plain
// matmul's result in every element of O, and write nothing else. What this shows: the lane and
// register mapping, partial tiles, k tails, batches and strides of the generated code are right
// for the layouts as documented. What it cannot show: that gfx90a's instructions behave as
// documented (they have never run here).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "hip/testing/mfma_emulator.hpp"
#include "hip/testing/mfma_tile_cases.hpp"

namespace yirage::hip::testing {

// The HIP prelude's element types and stores, on the host (the pre-defined kernels use them).
struct yr_f16 {
  uint16_t bits;
};
struct yr_bf16 {
  uint16_t bits;
};
inline void yr_st(yr_f16 *p, float v) {
  p->bits = __builtin_bit_cast(uint16_t, static_cast<_Float16>(v));
}
inline void yr_st(yr_bf16 *p, float v) {  // rounded to nearest, ties to even
  const uint32_t bits = __builtin_bit_cast(uint32_t, v);
  p->bits = static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

#include "mfma_tile_cases.inc"

namespace {

using codegen::cuda::Ref;

// Elements a tensor of `ref`'s dims and strides spans.
size_t span(const Ref &ref) {
  const Dims strides = ref.element_strides();
  int64_t last = 0;
  for (size_t d = 0; d < ref.dims.size(); ++d) last += (ref.dims[d] - 1) * strides[d];
  return static_cast<size_t>(last + 1);
}

// Random values in [-2, 2), rounded to the tile's 16-bit type where its values are one widened.
std::vector<float> random_tile(const Ref &ref, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(span(ref));
  for (float &x : v) {
    x = dist(rng);
    if (ref.widened_16bit && ref.element == DType::kFloat16) x = static_cast<float>(static_cast<_Float16>(x));
    if (ref.widened_16bit && ref.element == DType::kBFloat16) {
      uint32_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      bits &= 0xffff0000u;
      std::memcpy(&x, &bits, sizeof x);
    }
  }
  return v;
}

TEST(HipMfmaEmulator, EveryCaseMatchesThePlainMatmul) {
  const std::vector<MfmaTileCase> cases = mfma_tile_cases();
  ASSERT_EQ(cases.size(), std::size(kMfmaCases));
  std::mt19937 rng(7);
  for (size_t c = 0; c < cases.size(); ++c) {
    const MfmaTileCase &tc = cases[c];
    SCOPED_TRACE(tc.name);
    const std::vector<float> a = random_tile(tc.a, rng), b = random_tile(tc.b, rng);
    // O with a guard after it; NaN where nothing was written.
    const size_t outputs = static_cast<size_t>(num_elements(tc.o.dims)), guard = 64;
    std::vector<float> o(outputs + guard, std::nanf(""));
    std::vector<EmulatedWavefront> wavefronts(static_cast<size_t>(tc.threads / 64));
    std::vector<std::string> failures(static_cast<size_t>(tc.threads));
    std::vector<std::thread> lanes;
    for (int64_t t = 0; t < tc.threads; ++t) {
      lanes.emplace_back([&, t] {
        threadIdx.x = static_cast<unsigned>(t);
        current_wavefront = &wavefronts[static_cast<size_t>(t / 64)];
        try {
          kMfmaCases[c](a.data(), b.data(), o.data());
        } catch (const std::exception &e) {
          failures[static_cast<size_t>(t)] = e.what();
        }
      });
    }
    for (std::thread &lane : lanes) lane.join();
    for (const std::string &f : failures) ASSERT_TRUE(f.empty()) << f;
    // The plain matmul, element by element, in double.
    const size_t rank = tc.o.dims.size();
    const int64_t m = tc.o.dims[rank - 2], n = tc.o.dims[rank - 1], k = tc.a.dims[rank - 1];
    const Dims batch(tc.o.dims.begin(), tc.o.dims.end() - 2);
    const Dims sa = codegen::matmul_operand_strides(tc.a, tc.o.dims),
               sb = codegen::matmul_operand_strides(tc.b, tc.o.dims);
    int wrong = 0;
    for (int64_t e = 0; e < num_elements(tc.o.dims); ++e) {
      // e's batch index (row-major), row and column.
      int64_t rest = e / (m * n), ia = 0, ib = 0;
      for (size_t d = batch.size(); d-- > 0;) {
        ia += rest % batch[d] * sa[d];
        ib += rest % batch[d] * sb[d];
        rest /= batch[d];
      }
      const int64_t i = e / n % m, j = e % n;
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = a[static_cast<size_t>(ia + i * sa[rank - 2] + p * sa[rank - 1])];
        const double y = b[static_cast<size_t>(ib + p * sb[rank - 2] + j * sb[rank - 1])];
        sum += x * y;
        magnitude += std::fabs(x * y);
      }
      const float got = o[static_cast<size_t>(e)];
      if (!(std::fabs(got - sum) <= 1e-5 * magnitude + 1e-6) && ++wrong <= 5) {
        ADD_FAILURE() << "O element " << e << " (row " << i << ", column " << j << "): " << got << ", expected " << sum;
      }
    }
    EXPECT_EQ(wrong, 0) << "wrong elements of " << num_elements(tc.o.dims);
    for (size_t g = outputs; g < o.size(); ++g) ASSERT_TRUE(std::isnan(o[g])) << "written past O: element " << g;
  }
}

// The bits of `x` rounded to `dtype` (float16 or bfloat16), and their value.
uint16_t bits_of(float x, DType dtype) {
  if (dtype == DType::kFloat16) return __builtin_bit_cast(uint16_t, static_cast<_Float16>(x));
  yr_bf16 b;
  yr_st(&b, x);
  return b.bits;
}
float value_of(uint16_t bits, DType dtype) {
  if (dtype == DType::kFloat16) return static_cast<float>(__builtin_bit_cast(_Float16, bits));
  return bf16_value(static_cast<short>(bits));
}

// Pre-defined matmuls (cuda_mfma.hpp): the whole grid, block by block, each block's threads at once.
TEST(HipMfmaEmulator, PredefinedMatmulsMatchThePlainMatmul) {
  const std::vector<MfmaMatmulCase> cases = mfma_matmul_cases();
  ASSERT_EQ(cases.size(), std::size(kMfmaKernels));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (size_t c = 0; c < cases.size(); ++c) {
    const MfmaMatmulCase &mc = cases[c];
    const MfmaKernel &kernel = kMfmaKernels[c];
    SCOPED_TRACE(mc.name);
    std::vector<uint16_t> a(static_cast<size_t>(num_elements(mc.a))), b(static_cast<size_t>(num_elements(mc.b)));
    for (uint16_t &x : a) x = bits_of(dist(rng), mc.dtype);
    for (uint16_t &x : b) x = bits_of(dist(rng), mc.dtype);
    const size_t outputs = static_cast<size_t>(num_elements(mc.o)), guard = 64;
    std::vector<uint16_t> o(outputs + guard, 0xffff);  // NaN: never written
    for (int64_t block = 0; block < kernel.blocks; ++block) {
      std::vector<EmulatedWavefront> wavefronts(static_cast<size_t>(kernel.threads / 64));
      std::vector<std::string> failures(static_cast<size_t>(kernel.threads));
      std::vector<std::thread> lanes;
      for (int64_t t = 0; t < kernel.threads; ++t) {
        lanes.emplace_back([&, t] {
          threadIdx.x = static_cast<unsigned>(t);
          blockIdx.x = static_cast<unsigned>(block);
          current_wavefront = &wavefronts[static_cast<size_t>(t / 64)];
          try {
            kernel.run(a.data(), b.data(), o.data());
          } catch (const std::exception &e) {
            failures[static_cast<size_t>(t)] = e.what();
          }
        });
      }
      for (std::thread &lane : lanes) lane.join();
      for (const std::string &f : failures) ASSERT_TRUE(f.empty()) << "block " << block << ": " << f;
    }
    const size_t rank = mc.o.size();
    const int64_t m = mc.o[rank - 2], n = mc.o[rank - 1], k = mc.a[rank - 1];
    const bool a_broadcast = mc.a.size() > 2 && mc.a[0] == 1;
    const double rounding = mc.dtype == DType::kFloat16 ? 0x1p-11 : 0x1p-8;  // of the 16-bit result
    int wrong = 0;
    for (size_t e = 0; e < outputs; ++e) {
      const int64_t bt = static_cast<int64_t>(e) / (m * n), i = static_cast<int64_t>(e) / n % m,
                    j = static_cast<int64_t>(e) % n;
      const int64_t ia = a_broadcast ? 0 : bt * m * k, ib = bt * k * n;
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = value_of(a[static_cast<size_t>(ia + i * k + p)], mc.dtype);
        const double y = value_of(b[static_cast<size_t>(ib + p * n + j)], mc.dtype);
        sum += x * y;
        magnitude += std::fabs(x * y);
      }
      const float got = value_of(o[e], mc.dtype);
      if (!(std::fabs(got - sum) <= 1e-5 * magnitude + rounding * std::fabs(sum) + 1e-6) && ++wrong <= 5) {
        ADD_FAILURE() << "O element " << e << ": " << got << ", expected " << sum;
      }
    }
    EXPECT_EQ(wrong, 0) << "wrong elements of " << outputs;
    for (size_t g = outputs; g < o.size(); ++g) ASSERT_EQ(o[g], 0xffff) << "written past O: element " << g;
  }
}

// The emulator itself against hand-worked products: with A = I (16 × 16) the 16-bit instruction
// returns B, so each lane's registers show where the layout puts B's elements.
TEST(HipMfmaEmulator, TheIdentityTimesBGivesB) {
  std::vector<EmulatedWavefront> wavefront(1);
  std::vector<float> d(256);
  std::vector<std::thread> lanes;
  for (int t = 0; t < 64; ++t) {
    lanes.emplace_back([&, t] {
      threadIdx.x = static_cast<unsigned>(t);
      current_wavefront = &wavefront[0];
      emu_f16x4 a, b;
      for (int e = 0; e < 4; ++e) {
        const int k = 4 * (t / 16) + e;  // the lane's k
        a[e] = static_cast<_Float16>(t % 16 == k ? 1.0f : 0.0f);
        b[e] = static_cast<_Float16>(static_cast<float>(k * 16 + t % 16));  // B[k][j] = 16 k + j
      }
      const emu_f32x4 c = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, emu_f32x4{0, 0, 0, 0}, 0, 0, 0);
      for (int e = 0; e < 4; ++e) d[static_cast<size_t>((4 * (t / 16) + e) * 16 + t % 16)] = c[e];
    });
  }
  for (std::thread &lane : lanes) lane.join();
  for (int i = 0; i < 256; ++i) EXPECT_EQ(d[static_cast<size_t>(i)], static_cast<float>(i));
}

}  // namespace
}  // namespace yirage::hip::testing
