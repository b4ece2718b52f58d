// Decode products y[m][n] = x[m][k] · W[k][n] (float16, float32 sums, W row-major) in variants of
// one layout: `LN` lanes across a warp's columns (8 columns, 16 bytes each), 32 / LN across its k
// rows; `WARPS` warps a block; `U` rows of W in flight per lane; warps interleaved along k or on
// contiguous slices; k split over S blocks per column tile, their sums met in a workspace by the
// tile's last block. Each variant and S is timed with CUDA events after a 128 MB memset (cold
// L2), the median of 10 launches, and checked against a float64 product. Behind
// docs/backends/cuda.md, "One row by a long k" (session 47, H100).
//
// build: nvcc -O3 -arch=sm_90 -o decode_gemv decode_gemv.cu
// run:   ./decode_gemv M K N   (M 1 or 8), e.g. ./decode_gemv 1 4096 6144
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "harness.cuh"  // ld_stream

// acc[r][c] += x[r][q] · (row q of W: the 8 halves in `raw`), for the M rows of x.
template <int M>
__device__ __forceinline__ void add_row(float (&acc)[M][8], const uint4 &raw, const half *x, int K, int q) {
  const half2 *h = reinterpret_cast<const half2 *>(&raw);
  float b[8];
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const float2 f = __half22float2(h[c]);
    b[2 * c] = f.x;
    b[2 * c + 1] = f.y;
  }
#pragma unroll
  for (int r = 0; r < M; ++r) {
    const float a = __half2float(x[r * K + q]);
#pragma unroll
    for (int c = 0; c < 8; ++c) acc[r][c] += a * b[c];
  }
}

// LN: lanes across columns (8 cols each), KL = 32/LN lanes across k. WARPS per block. U loads in flight per lane.
// INTER: warps interleaved along k (true) or contiguous slices (false). S: k split over blocks.
template <int M, int LN, int WARPS, int U, bool INTER>
__global__ void __launch_bounds__(WARPS * 32)
    gemv(const half *__restrict__ x, const half *__restrict__ W, half *__restrict__ y, float *ws, unsigned *counters,
         int K, int N, int S) {
  constexpr int KL = 32 / LN, TC = LN * 8;
  __shared__ float part[WARPS][M][TC];
  __shared__ bool last;
  const int tiles = N / TC;
  const int tile = blockIdx.x % tiles, ks = blockIdx.x / tiles;
  const int kchunk = K / S, k0 = ks * kchunk, k1 = k0 + kchunk;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gl = lane % LN, kl = lane / LN;
  const int col = tile * TC + gl * 8;
  float acc[M][8];
#pragma unroll
  for (int r = 0; r < M; ++r)
#pragma unroll
    for (int c = 0; c < 8; ++c) acc[r][c] = 0.f;
  int q, qend, step;
  if (INTER) {
    q = k0 + warp * KL + kl;
    qend = k1;
    step = WARPS * KL;
  } else {
    int sl = kchunk / WARPS;
    q = k0 + warp * sl + kl;
    qend = k0 + warp * sl + sl;
    step = KL;
  }
  const half *pw = W + col;
  for (; q + (U - 1) * step < qend; q += U * step) {
    uint4 raw[U];
#pragma unroll
    for (int u = 0; u < U; ++u) raw[u] = ld_stream(pw + (size_t)(q + u * step) * N);
#pragma unroll
    for (int u = 0; u < U; ++u) add_row<M>(acc, raw[u], x, K, q + u * step);
  }
  for (; q < qend; q += step) add_row<M>(acc, ld_stream(pw + (size_t)q * N), x, K, q);
#pragma unroll
  for (int r = 0; r < M; ++r)
#pragma unroll
    for (int c = 0; c < 8; ++c)
#pragma unroll
      for (int off = LN; off < 32; off *= 2) acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], off);
  if (kl == 0) {
#pragma unroll
    for (int r = 0; r < M; ++r)
#pragma unroll
      for (int c = 0; c < 8; ++c) part[warp][r][gl * 8 + c] = acc[r][c];
  }
  __syncthreads();
  if (S == 1) {
    for (int t = threadIdx.x; t < M * TC; t += blockDim.x) {
      const int r = t / TC, c = t % TC;
      float s = 0.f;
#pragma unroll
      for (int w = 0; w < WARPS; ++w) s += part[w][r][c];
      y[r * N + tile * TC + c] = __float2half(s);
    }
    return;
  }
  for (int t = threadIdx.x; t < M * TC; t += blockDim.x) {
    const int r = t / TC, c = t % TC;
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s += part[w][r][c];
    ws[((size_t)ks * M + r) * N + tile * TC + c] = s;
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned done = atomicAdd(&counters[tile], 1u);
    last = done == (unsigned)S - 1;
    if (last) counters[tile] = 0;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int t = threadIdx.x; t < M * TC; t += blockDim.x) {
    const int r = t / TC, c = t % TC;
    float s = 0.f;
    for (int p = 0; p < S; ++p) s += __ldcg(&ws[((size_t)p * M + r) * N + tile * TC + c]);
    y[r * N + tile * TC + c] = __float2half(s);
  }
}

struct Runner {
  const char *name;
  void (*launch)(const half *, const half *, half *, float *, unsigned *, int, int, int, int, cudaStream_t);
  int M, LN, WARPS;
};

template <int M, int LN, int WARPS, int U, bool INTER>
void launch_t(const half *x, const half *W, half *y, float *ws, unsigned *cnt, int K, int N, int S, int,
              cudaStream_t st) {
  const int tiles = N / (LN * 8);
  gemv<M, LN, WARPS, U, INTER><<<tiles * S, WARPS * 32, 0, st>>>(x, W, y, ws, cnt, K, N, S);
}

#define V(M, LN, W, U, I)                                                 \
  Runner {                                                                \
#M "/" #LN "/" #W "/" #U "/" #I, launch_t < M, LN, W, U, I>, M, LN, W \
  }

int main(int argc, char **argv) {
  int M = atoi(argv[1]), K = atoi(argv[2]), N = atoi(argv[3]);
  std::vector<Runner> all = {V(1, 4, 16, 2, false), V(1, 4, 16, 4, false), V(1, 4, 8, 4, true),   V(1, 4, 4, 8, true),
                             V(1, 8, 8, 4, true),   V(1, 8, 4, 8, true),   V(1, 16, 8, 4, true),  V(1, 16, 4, 8, true),
                             V(1, 32, 8, 4, true),  V(1, 32, 4, 8, true),  V(1, 32, 16, 4, true), V(1, 16, 16, 4, true),
                             V(8, 4, 16, 2, false), V(8, 4, 8, 4, true),   V(8, 8, 8, 4, true),   V(8, 16, 4, 4, true),
                             V(8, 32, 4, 4, true),  V(8, 16, 8, 2, true)};
  half *x, *W, *y;
  float *ws;
  unsigned *cnt;
  char *flush;
  cudaMalloc(&x, (size_t)M * K * 2);
  cudaMalloc(&W, (size_t)K * N * 2);
  cudaMalloc(&y, (size_t)M * N * 2);
  cudaMalloc(&ws, (size_t)64 * M * N * 4);
  cudaMalloc(&cnt, N * 4);
  cudaMemset(cnt, 0, N * 4);
  const size_t fl = 128 << 20;
  cudaMalloc(&flush, fl);
  std::vector<half> hx(M * K), hw((size_t)K * N);
  for (auto &v : hx) v = __float2half((rand() % 1000) / 1000.f - 0.5f);
  for (auto &v : hw) v = __float2half((rand() % 1000) / 1000.f - 0.5f);
  cudaMemcpy(x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(W, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice);
  std::vector<double> ref((size_t)M * N, 0.0);
  for (int r = 0; r < M; ++r)
    for (int q = 0; q < K; ++q) {
      double a = __half2float(hx[r * K + q]);
      for (int c = 0; c < N; ++c) ref[(size_t)r * N + c] += a * __half2float(hw[(size_t)q * N + c]);
    }
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const double bytes = (double)K * N * 2;
  for (auto &rn : all) {
    if (rn.M != M) continue;
    if (N % (rn.LN * 8)) continue;
    for (int S : {1, 2, 3, 4, 6, 8, 12, 16}) {
      if (K % S || (K / S) % (rn.WARPS * (32 / rn.LN))) continue;
      std::vector<float> t;
      for (int i = 0; i < 12; ++i) {
        cudaMemsetAsync(flush, i, fl);
        cudaEventRecord(e0);
        rn.launch(x, W, y, ws, cnt, K, N, S, 0, 0);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= 2) t.push_back(ms * 1000);
      }
      cudaError_t err = cudaGetLastError();
      std::sort(t.begin(), t.end());
      std::vector<half> hy((size_t)M * N);
      cudaMemcpy(hy.data(), y, hy.size() * 2, cudaMemcpyDeviceToHost);
      double num = 0, den = 0;
      for (size_t i = 0; i < hy.size(); ++i) {
        double d = __half2float(hy[i]) - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
      }
      const int blocks = N / (rn.LN * 8) * S;
      printf("%dx%dx%d %-16s S=%-2d blocks=%-5d %7.1f us  %6.0f GB/s  err=%.1e %s\n", M, K, N, rn.name, S, blocks,
             t[t.size() / 2], bytes / (t[t.size() / 2] * 1e3), sqrt(num / den), err ? cudaGetErrorString(err) : "");
      cudaMemset(y, 0xff, (size_t)M * N * 2);
    }
  }
  return 0;
}
