// The CPU plugin's block-level matmul against BLIS's and libxsmm's small-GEMM kernels, float32,
// one thread, on the tile shapes of the benchmark graphs' µGraphs (issue #51 item 2). The
// "generated" kernel is print_matmul's loop (backends/cpu/codegen/cpu_printer.cpp) for float32
// operands, compiled here with the plugin's flags. Results: benchmarks/cpu/README.md.
// Build and run: benchmarks/cpu/microkernel/run.sh
#include <blis.h>
#include <libxsmm.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

// print_matmul's output for A[m,k] · B[k,n] in float32 (a kernel tensor B: its row prefetched),
// its sizes constants as in the printed code.
template <int64_t m, int64_t n, int64_t k>
void generated(const float *pa, const float *pb, float *po) {
  constexpr int64_t rows = m < 16 ? m : 16, cols = n < 128 ? n : 128;
  constexpr int64_t row_blocks = (m + rows - 1) / rows, col_blocks = (n + cols - 1) / cols;
  static_assert(m % rows == 0 && n % cols == 0, "whole blocks, as in the shapes below");
  for (int64_t t = 0; t < row_blocks * col_blocks; ++t) {
    const int64_t rb = t / col_blocks, cb = t % col_blocks;
    const int64_t i0 = rb * rows, j0 = cb * cols;
    constexpr int64_t mi = rows, nj = cols;
    alignas(64) float acc[rows][cols] = {};
    alignas(64) float brow[cols];
    for (int64_t p = 0; p < k; ++p) {
      __builtin_prefetch(pb + std::min<int64_t>(p + 16, k - 1) * n + j0);
      for (int64_t j = 0; j < nj; ++j) brow[j] = pb[p * n + j0 + j];
      for (int64_t i = 0; i < mi; ++i) {
        const float av = pa[(i0 + i) * k + p];
        for (int64_t j = 0; j < nj; ++j) acc[i][j] += av * brow[j];
      }
    }
    for (int64_t i = 0; i < mi; ++i)
      for (int64_t j = 0; j < nj; ++j) po[(i0 + i) * n + j0 + j] = acc[i][j];
  }
}

// Seconds per call: the best of 7 rounds of enough calls for about 20 ms.
double seconds_per_call(const std::function<void()> &call) {
  call();
  int calls = 1;
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 0.02) break;
    calls *= 2;
  }
  double best = INFINITY;
  for (int round = 0; round < 7; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls);
  }
  return best;
}

struct Shape {
  const char *where;
  int64_t m, n, k;
  void (*generated)(const float *, const float *, float *);
};

#define SHAPE(where, m, n, k)          \
  Shape {                              \
    where, m, n, k, generated<m, n, k> \
  }

}  // namespace

int main() {
  const Shape shapes[] = {
      SHAPE("gqa/qknorm Q·Kᵀ tile", 256, 128, 64),     SHAPE("gqa/qknorm P·V tile", 256, 64, 128),
      SHAPE("rmsnorm_linear loop 256", 2, 3072, 16),   SHAPE("gated_mlp loop 256", 8, 4096, 16),
      SHAPE("gated_mlp grid 4 loop 32", 8, 1024, 128), SHAPE("lora grid 2 loop 1", 16, 2048, 256),
      SHAPE("lora grid 8 loop 16", 16, 512, 16),       SHAPE("lora rows split", 8, 2048, 256),
  };
  bli_thread_set_num_threads(1);
  libxsmm_init();
  std::printf(
      "| tile (where) | m×n×k | generated µs | BLIS µs | libxsmm µs | generated GFLOP/s | best library / generated "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Shape &s : shapes) {
    std::vector<float> a(s.m * s.k), b(s.k * s.n), c0(s.m * s.n), c1(s.m * s.n), c2(s.m * s.n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.5f - 1.0f;
    const double t_gen = seconds_per_call([&] { s.generated(a.data(), b.data(), c0.data()); });
    float one = 1, zero = 0;
    // Row-major C = A·B through BLIS's strides.
    const double t_blis = seconds_per_call([&] {
      bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, s.m, s.n, s.k, &one, a.data(), s.k, 1, b.data(), s.n, 1, &zero,
                c1.data(), s.n, 1);
    });
    // libxsmm is column-major: row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
    const libxsmm_blasint M = s.n, N = s.m, K = s.k, lda = s.n, ldb = s.k, ldc = s.n;
    const int flags = LIBXSMM_GEMM_FLAG_NONE, prefetch = LIBXSMM_PREFETCH_NONE;
    const libxsmm_smmfunction kernel = libxsmm_smmdispatch(M, N, K, &lda, &ldb, &ldc, &one, &zero, &flags, &prefetch);
    const double t_xsmm = kernel ? seconds_per_call([&] { kernel(b.data(), a.data(), c2.data()); }) : INFINITY;
    double err = 0;
    for (size_t i = 0; i < c0.size(); ++i) {
      err = std::max(err, static_cast<double>(std::fabs(c0[i] - c1[i])));
      if (kernel) err = std::max(err, static_cast<double>(std::fabs(c0[i] - c2[i])));
    }
    if (err > 1e-3) {
      std::fprintf(stderr, "%s: results differ by %g\n", s.where, err);
      return 1;
    }
    const double flops = 2.0 * static_cast<double>(s.m * s.n * s.k);
    char xsmm[32] = "no kernel";
    if (kernel) std::snprintf(xsmm, sizeof xsmm, "%.2f", t_xsmm * 1e6);
    std::printf("| %s | %lld×%lld×%lld | %.2f | %.2f | %s | %.1f | %.2f |\n", s.where, static_cast<long long>(s.m),
                static_cast<long long>(s.n), static_cast<long long>(s.k), t_gen * 1e6, t_blis * 1e6, xsmm,
                flops / t_gen / 1e9, t_gen / std::min(t_blis, t_xsmm));
  }
  libxsmm_finalize();
  return 0;
}
