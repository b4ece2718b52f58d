// The plugin's small-GEMM (gemm.hpp): libxsmm's kernels against a plain loop, with strides, from
// several threads at once, and the setting that turns it off.
#include "gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <thread>
#include <vector>

namespace yirage::cpu {
namespace {

#if YIRAGE_CPU_HAVE_LIBXSMM
struct Case {
  int64_t m, n, k, lda, ldb, ldc;
};

// Fills A and B, runs gemm and a double-precision loop, and returns the largest difference
// (relative to the sum of |products|), or -1 when gemm declined the shape.
double gemm_error(GemmFunction gemm, const Case &c) {
  std::vector<float> a(c.m * c.lda), b(c.k * c.ldb), out(c.m * c.ldc, 7.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.37f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.29f;
  if (gemm(c.m, c.n, c.k, a.data(), c.lda, b.data(), c.ldb, out.data(), c.ldc) == 0) return -1;
  double worst = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0, scale = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        sum += static_cast<double>(a[i * c.lda + p]) * b[p * c.ldb + j];
        scale += std::fabs(static_cast<double>(a[i * c.lda + p]) * b[p * c.ldb + j]);
      }
      worst = std::max(worst, std::fabs(out[i * c.ldc + j] - sum) / std::max(scale, 1.0));
    }
    // Past n, C's row is not written.
    for (int64_t j = c.n; j < c.ldc; ++j) EXPECT_EQ(out[i * c.ldc + j], 7.0f);
  }
  return worst;
}

TEST(CpuGemm, MatchesALoopWithinFloat32Rounding) {
  unsetenv("YIRAGE_CPU_LIBXSMM");
  const GemmFunction gemm = gemm_function();
  ASSERT_NE(gemm, nullptr);
  // Tiles of the benchmark graphs, odd sizes, and views with rows further apart than their length.
  for (const Case &c :
       {Case{256, 128, 64, 64, 128, 128}, Case{8, 4096, 16, 16, 4096, 4096}, Case{16, 128, 4096, 4096, 4096, 128},
        Case{3, 5, 7, 7, 5, 5}, Case{17, 33, 65, 80, 40, 50}, Case{1, 1, 1, 1, 1, 1}}) {
    EXPECT_LT(gemm_error(gemm, c), 1e-6) << c.m << "x" << c.n << "x" << c.k;
  }
}

TEST(CpuGemm, DeclinesWhatItCannotTake) {
  unsetenv("YIRAGE_CPU_LIBXSMM");
  const GemmFunction gemm = gemm_function();
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm_error(gemm, Case{4, 4, 8, 0, 4, 4}), -1) << "broadcast rows of A";
  EXPECT_EQ(gemm_error(gemm, Case{4, 8, 4, 4, 4, 8}), -1) << "rows of B shorter than n";
  EXPECT_EQ(gemm(4, 4, 0, nullptr, 0, nullptr, 4, nullptr, 4), 0) << "k = 0";
}

TEST(CpuGemm, ThreadsAtOnce) {
  unsetenv("YIRAGE_CPU_LIBXSMM");
  const GemmFunction gemm = gemm_function();
  ASSERT_NE(gemm, nullptr);
  std::vector<double> errors(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < errors.size(); ++t) {
    threads.emplace_back([&, t] {
      double worst = 0;
      // More shapes than a thread's cache holds, so that kernels are asked of libxsmm concurrently.
      for (int round = 0; round < 3; ++round)
        for (int64_t n = 8; n <= 128; n += 8) worst = std::max(worst, gemm_error(gemm, Case{16, n, 32, 32, n, n}));
      errors[t] = worst;
    });
  }
  for (std::thread &t : threads) t.join();
  for (double e : errors) EXPECT_TRUE(e >= 0 && e < 1e-6) << e;
}
#endif

// Each thread's scratch: aligned, kept for smaller requests, grown for larger ones, its own.
TEST(CpuGemm, ThreadScratchBelongsToItsThread) {
  EXPECT_EQ(thread_scratch(0), nullptr);
  auto *first = static_cast<char *>(thread_scratch(100));
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  first[99] = 1;
  EXPECT_EQ(thread_scratch(64), first) << "a smaller request keeps the buffer";
  auto *grown = static_cast<char *>(thread_scratch(1 << 20));
  ASSERT_NE(grown, nullptr);
  grown[(1 << 20) - 1] = 1;  // all of it is usable (ASan would see an overflow)
  void *other = nullptr;
  std::thread([&] { other = thread_scratch(64); }).join();
  EXPECT_NE(other, grown);
}

TEST(CpuGemm, OffWhereSetToZeroOrNotBuilt) {
  setenv("YIRAGE_CPU_LIBXSMM", "0", 1);
  EXPECT_EQ(gemm_function(), nullptr);
  setenv("YIRAGE_CPU_LIBXSMM", "1", 1);
  EXPECT_EQ(gemm_function() != nullptr, YIRAGE_CPU_HAVE_LIBXSMM == 1);
  unsetenv("YIRAGE_CPU_LIBXSMM");
  EXPECT_EQ(gemm_function() != nullptr, YIRAGE_CPU_HAVE_LIBXSMM == 1);
}

}  // namespace
}  // namespace yirage::cpu
