// Where ntrans's time goes (O = rms_norm(X + α ⊙ (rms_norm(H) − X)), H, X, α [ROWS,4096]
// float16, one row per block; ROWS 8 for b = 1, -DROWS=64 for b = 8): the loads alone (of 8 rows),
// by 16-byte loads or by the TMA unit, on 8 blocks or spread over more, next to a whole
// hand-written kernel and, where given, yirage's; timed as harness.cuh says. Not part of the
// build; benchmarks/gpu/RESULTS.md (eleventh and twenty-sixth sessions) has the numbers and:
//   nvcc -O3 -arch=sm_90 -std=c++17 ntrans_one_kernel.cu -o ntrans && ./ntrans
//   # with yirage's kernel (the CUDA source of the chosen µGraph, grid ROWS and 256 threads, without
//   # its typedef lines) and the dynamic shared memory it asks for:
//   nvcc -O3 -arch=sm_90 -std=c++17 -DGENERATED='"gen.cu"' -DGENERATED_SMEM=24712 ntrans_one_kernel.cu -o ntrans
#include <cmath>
#include <cstdio>

#include "harness.cuh"

#ifdef GENERATED
#include GENERATED
#endif

#ifndef ROWS
#define ROWS 8
#endif
constexpr int COLS = 4096;

__device__ __forceinline__ void unpack(uint4 w, float *v) {
  const unsigned words[4] = {w.x, w.y, w.z, w.w};
  for (int c = 0; c < 4; ++c) {
    const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&words[c]));
    v[2 * c] = f.x, v[2 * c + 1] = f.y;
  }
}
__device__ __forceinline__ uint4 pack(const float *v) {
  unsigned w[4];
  for (int c = 0; c < 4; ++c) {
    const __half2 h = __floats2half2_rn(v[2 * c], v[2 * c + 1]);
    w[c] = *reinterpret_cast<const unsigned *>(&h);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}
// The block's sum of x over its 256 threads (slots: 8 floats of shared memory).
__device__ __forceinline__ float block_sum(float x, float *slots) {
  for (int off = 16; off > 0; off /= 2) x += __shfl_xor_sync(0xffffffffu, x, off);
  if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = x;
  __syncthreads();
  float s = 0;
  for (int w = 0; w < 8; ++w) s += slots[w];
  return s;
}

// The TMA unit copies N elements of H, X and α from `base` into rows (thread 0 issues the
// copies); every thread waits for them.
template <int N>
__device__ void copy_inputs(__half (*rows)[N], const __half *H, const __half *X, const __half *Al, size_t base,
                            uint64_t *bar) {
  if (threadIdx.x == 0) {
    bar_init(bar);
    bar_expect(bar, 3 * N * 2);
    bulk_copy(rows[0], H + base, N * 2, bar);
    bulk_copy(rows[1], X + base, N * 2, bar);
    bulk_copy(rows[2], Al + base, N * 2, bar);
  }
  __syncthreads();
  bar_wait(bar);
}

// The loads alone: block b reads 1/SPLIT of row b / SPLIT of H, X and α (by 16-byte loads of
// each thread, or TMA: one bulk copy per input) and writes one value per thread.
template <bool TMA, int SPLIT>
__global__ void __launch_bounds__(256) loads_only(const __half *H, const __half *X, const __half *Al, __half *O) {
  constexpr int N = COLS / SPLIT;
  __shared__ __align__(16) __half rows[3][N];
  __shared__ uint64_t bar;
  const int t = threadIdx.x;
  const size_t base = static_cast<size_t>(blockIdx.x) * N;
  float s = 0;
  if (TMA) {
    copy_inputs<N>(rows, H, X, Al, base, &bar);
    for (int i = t * 8; i < N; i += 256 * 8)
      s += __half2float(rows[0][i]) + __half2float(rows[1][i]) + __half2float(rows[2][i]);
  } else {
    uint4 v[3][(N / 8 + 255) / 256];
    for (int u = 0; u * 256 + t < N / 8; ++u) {
      v[0][u] = ld_stream(H + base + (u * 256 + t) * 8);
      v[1][u] = ld_stream(X + base + (u * 256 + t) * 8);
      v[2][u] = ld_stream(Al + base + (u * 256 + t) * 8);
    }
    for (int u = 0; u * 256 + t < N / 8; ++u) s += __uint_as_float(v[0][u].x ^ v[1][u].y ^ v[2][u].z);
  }
  O[blockIdx.x * 256 + t] = __float2half(s);
}

// ntrans, one row per block of 256 threads, 16 elements per thread (chunks t and t + 256).
template <bool TMA>
__global__ void __launch_bounds__(256) ntrans_hand(const __half *H, const __half *X, const __half *Al, __half *O) {
  __shared__ __align__(16) __half rows[3][COLS];  // used by the TMA path only
  __shared__ float slots[2][8];
  __shared__ uint64_t bar;
  const int t = threadIdx.x;
  const size_t base = static_cast<size_t>(blockIdx.x) * COLS;
  float h[16], x[16], a[16];
  if (TMA) {
    copy_inputs<COLS>(rows, H, X, Al, base, &bar);
    for (int u = 0; u < 2; ++u) {
      const int c = (u * 256 + t) * 8;
      unpack(*reinterpret_cast<const uint4 *>(&rows[0][c]), h + 8 * u);
      unpack(*reinterpret_cast<const uint4 *>(&rows[1][c]), x + 8 * u);
      unpack(*reinterpret_cast<const uint4 *>(&rows[2][c]), a + 8 * u);
    }
  } else {
    uint4 w[3][2];
    for (int u = 0; u < 2; ++u) {
      const size_t c = base + (u * 256 + t) * 8;
      w[0][u] = ld_stream(H + c), w[1][u] = ld_stream(X + c), w[2][u] = ld_stream(Al + c);
    }
    for (int u = 0; u < 2; ++u) unpack(w[0][u], h + 8 * u), unpack(w[1][u], x + 8 * u), unpack(w[2][u], a + 8 * u);
  }
  float s = 0;
  for (int j = 0; j < 16; ++j) s += h[j] * h[j];
  const float ih = rsqrtf(block_sum(s, slots[0]) / COLS);
  float y[16];
  s = 0;
  for (int j = 0; j < 16; ++j) {
    y[j] = x[j] + a[j] * (h[j] * ih - x[j]);
    s += y[j] * y[j];
  }
  const float iy = rsqrtf(block_sum(s, slots[1]) / COLS);
  for (int j = 0; j < 16; ++j) y[j] *= iy;
  for (int u = 0; u < 2; ++u) *reinterpret_cast<uint4 *>(O + base + (u * 256 + t) * 8) = pack(y + 8 * u);
}

__global__ void empty_kernel() {}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  const int n = ROWS * COLS;
  std::vector<__half> hh(n), hx(n), ha(n);
  std::vector<double> ref(n);
  srand(1);
  for (int i = 0; i < n; ++i) {
    hh[i] = __float2half(rand() / (float)RAND_MAX * 2 - 1);
    hx[i] = __float2half(rand() / (float)RAND_MAX * 2 - 1);
    ha[i] = __float2half(rand() / (float)RAND_MAX);
  }
  for (int r = 0; r < ROWS; ++r) {
    double sh = 0, sy = 0;
    for (int c = 0; c < COLS; ++c) sh += std::pow(__half2float(hh[r * COLS + c]), 2);
    const double ih = 1 / std::sqrt(sh / COLS);
    for (int c = 0; c < COLS; ++c) {
      const int i = r * COLS + c;
      const double x = __half2float(hx[i]);
      ref[i] = x + __half2float(ha[i]) * (__half2float(hh[i]) * ih - x);
      sy += ref[i] * ref[i];
    }
    for (int c = 0; c < COLS; ++c) ref[r * COLS + c] /= std::sqrt(sy / COLS);
  }
  __half *H, *X, *A, *O;
  cudaMalloc(&H, n * 2), cudaMalloc(&X, n * 2), cudaMalloc(&A, n * 2), cudaMalloc(&O, n * 2);
  cudaMemcpy(H, hh.data(), n * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(X, hx.data(), n * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(A, ha.data(), n * 2, cudaMemcpyHostToDevice);
  auto check = [&](const char *name, float us) {
    std::vector<__half> ho(n);
    cudaMemcpy(ho.data(), O, n * 2, cudaMemcpyDeviceToHost);
    double num = 0, den = 0;
    for (int i = 0; i < n; ++i) num += std::pow(__half2float(ho[i]) - ref[i], 2), den += ref[i] * ref[i];
    printf("%-24s %7.2f us  rel. error %.2e  %s\n", name, us, std::sqrt(num / den),
           cudaGetErrorString(cudaGetLastError()));
    cudaMemset(O, 0xff, n * 2);
  };
  auto show = [](const char *name, float us) { printf("%-24s %7.2f us\n", name, us); };
  show("loads ld 8 blocks", time_us([&] { loads_only<false, 1><<<8, 256>>>(H, X, A, O); }));
  show("loads ld 32 blocks", time_us([&] { loads_only<false, 4><<<32, 256>>>(H, X, A, O); }));
  show("loads ld 128 blocks", time_us([&] { loads_only<false, 16><<<128, 256>>>(H, X, A, O); }));
  show("loads TMA 8 blocks", time_us([&] { loads_only<true, 1><<<8, 256>>>(H, X, A, O); }));
  show("loads TMA 32 blocks", time_us([&] { loads_only<true, 4><<<32, 256>>>(H, X, A, O); }));
  show("loads TMA 128 blocks", time_us([&] { loads_only<true, 16><<<128, 256>>>(H, X, A, O); }));
  check("hand ld", time_us([&] { ntrans_hand<false><<<ROWS, 256>>>(H, X, A, O); }));
  check("hand TMA", time_us([&] { ntrans_hand<true><<<ROWS, 256>>>(H, X, A, O); }));
#ifdef GENERATED
  auto *h = reinterpret_cast<const yr_f16 *>(H), *x = reinterpret_cast<const yr_f16 *>(X),
       *a = reinterpret_cast<const yr_f16 *>(A);
  check("yirage (generated)",
        time_us([&] { yirage_cuda_kernel<<<ROWS, 256, GENERATED_SMEM>>>(h, x, a, reinterpret_cast<yr_f16 *>(O)); }));
  // As the plugin launches it: a programmatic dependent of the kernel before it.
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{dim3(ROWS), dim3(256), GENERATED_SMEM, 0, &overlap, 1};
  yr_f16 *o = reinterpret_cast<yr_f16 *>(O);
  check("yirage, dependent launch", time_us([&] { cudaLaunchKernelEx(&config, yirage_cuda_kernel, h, x, a, o); }));
#endif
  // What a block's dynamic shared memory costs at launch: an empty kernel with none and with
  // ntrans's 24712 bytes.
  show("empty kernel", time_us([&] { empty_kernel<<<ROWS, 256>>>(); }));
  show("empty kernel, 24712 B", time_us([&] { empty_kernel<<<ROWS, 256, 24712>>>(); }));
}
