// A sketch of gated_mlp in one kernel: silu(X·W1) ⊙ (X·W2) for X [8,4096] and W1, W2
// [4096,4096] in float16, both weights streamed like the vector matmul's B, timed like
// vector_matmul.cu. Not part of the build; benchmarks/gpu/RESULTS.md (fifth session):
//   nvcc -O3 -arch=sm_90 -std=c++17 gated_one_kernel.cu -o gated_one_kernel && ./gated_one_kernel
#include <cuda_fp16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "harness.cuh"  // smem_addr, ld_stream
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ float ld_remote(const float *p, unsigned rank) {
  unsigned a = smem_addr(p), r;
  float v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(r) : "memory");
  return v;
}
template <int GL, int W, int S, int R, int U>
__global__ void __launch_bounds__(W * 32, 1)
    gemv2(const __half *__restrict__ A, const __half *__restrict__ B1, const __half *__restrict__ B2,
          __half *__restrict__ O, int m, int k, int n) {
  constexpr int KL = 32 / GL, C = GL * 8;
  __shared__ float part[W][2][R][C];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gl = lane % GL, kl = lane / GL;
  const int tile = blockIdx.x / S, s = blockIdx.x % S;
  const int j0 = tile * C + gl * 8;
  const int kw = k / S / W, q0 = (s * W + warp) * kw, q1 = q0 + kw;
  float a1[R][8], a2[R][8];
#pragma unroll
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < 8; ++c) a1[r][c] = a2[r][c] = 0.f;
  uint4 r1[U], r2[U], n1[U], n2[U];
  int q = q0 + kl;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    r1[u] = ld_stream(B1 + j0 + (size_t)(q + u * KL) * n);
    r2[u] = ld_stream(B2 + j0 + (size_t)(q + u * KL) * n);
  }
  for (; q < q1; q += U * KL) {
    const bool more = q + U * KL < q1;
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (more) {
        n1[u] = ld_stream(B1 + j0 + (size_t)(q + (U + u) * KL) * n);
        n2[u] = ld_stream(B2 + j0 + (size_t)(q + (U + u) * KL) * n);
      }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const __half2 *h1 = reinterpret_cast<const __half2 *>(&r1[u]), *h2 = reinterpret_cast<const __half2 *>(&r2[u]);
      float b1[8], b2[8];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        float2 f = __half22float2(h1[c]);
        b1[2 * c] = f.x;
        b1[2 * c + 1] = f.y;
        f = __half22float2(h2[c]);
        b2[2 * c] = f.x;
        b2[2 * c + 1] = f.y;
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float av = __half2float(A[(size_t)min(r, m - 1) * k + q + u * KL]);
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          a1[r][c] += av * b1[c];
          a2[r][c] += av * b2[c];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      r1[u] = n1[u];
      r2[u] = n2[u];
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c = 0; c < 8; ++c)
#pragma unroll
      for (int off = GL; off < 32; off *= 2) {
        a1[r][c] += __shfl_xor_sync(0xffffffffu, a1[r][c], off);
        a2[r][c] += __shfl_xor_sync(0xffffffffu, a2[r][c], off);
      }
  if (kl == 0) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        part[warp][0][r][gl * 8 + c] = a1[r][c];
        part[warp][1][r][gl * 8 + c] = a2[r][c];
      }
  }
  if (S > 1)
    cluster_sync();
  else
    __syncthreads();
  constexpr int CS = C / S;
  for (int t = threadIdx.x; t < R * CS; t += blockDim.x) {
    const int r = t / CS, c = s * CS + t % CS;
    float x = 0.f, y = 0.f;
    for (int b = 0; b < S; ++b)
      for (int w = 0; w < W; ++w) {
        if (S > 1) {
          x += ld_remote(&part[w][0][r][c], b);
          y += ld_remote(&part[w][1][r][c], b);
        } else {
          x += part[w][0][r][c];
          y += part[w][1][r][c];
        }
      }
    if (r < m) O[(size_t)r * n + tile * C + c] = __float2half(x / (1.f + expf(-x)) * y);
  }
  if (S > 1) cluster_sync();
}
static char *flush_buf;
template <class F>
float time_it(F launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ts;
  for (int i = 0; i < 30; ++i) {
    cudaMemsetAsync(flush_buf, i, 256 << 20);
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    ts.push_back(ms * 1000);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}
const int m = 8, k = 4096, n = 4096;
__half *A, *B1, *B2, *O;
std::vector<float> ref;
template <int GL, int W, int S, int U>
void run(const char *label) {
  constexpr int C = GL * 8;
  const int blocks = n / C * S;
  if ((k / S / W) % (U * (32 / GL)) != 0) return;
  auto kern = gemv2<GL, W, S, 8, U>;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = blocks;
  cfg.blockDim = W * 32;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = S;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  auto launch = [&] {
    cudaLaunchKernelEx(&cfg, kern, (const __half *)A, (const __half *)B1, (const __half *)B2, O, m, k, n);
  };
  cudaMemset(O, 0xff, m * n * 2);
  launch();
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("%s: %s\n", label, cudaGetErrorString(e));
    return;
  }
  std::vector<__half> h(m * n);
  cudaMemcpy(h.data(), O, h.size() * 2, cudaMemcpyDeviceToHost);
  double err = 0, nrm = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    double d = __half2float(h[i]) - ref[i];
    err += d * d;
    nrm += ref[i] * ref[i];
  }
  printf("%-28s blocks %4d x %4d  %7.2f us  relerr %.1e\n", label, blocks, W * 32, time_it(launch),
         std::sqrt(err / nrm));
}
int main() {
  cudaMalloc(&flush_buf, 256 << 20);
  std::vector<__half> ha(m * k), h1((size_t)k * n), h2((size_t)k * n);
  srand(1);
  for (auto &x : ha) x = __float2half((rand() / (float)RAND_MAX) - 0.5f);
  for (auto &x : h1) x = __float2half((rand() / (float)RAND_MAX) - 0.5f);
  for (auto &x : h2) x = __float2half((rand() / (float)RAND_MAX) - 0.5f);
  std::vector<double> x1(m * n, 0), x2(m * n, 0);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      double a = __half2float(ha[i * k + p]);
      for (int j = 0; j < n; ++j) {
        x1[i * n + j] += a * __half2float(h1[(size_t)p * n + j]);
        x2[i * n + j] += a * __half2float(h2[(size_t)p * n + j]);
      }
    }
  ref.resize(m * n);
  for (int i = 0; i < m * n; ++i) ref[i] = x1[i] / (1 + std::exp(-x1[i])) * x2[i];
  cudaMalloc(&A, ha.size() * 2);
  cudaMalloc(&B1, h1.size() * 2);
  cudaMalloc(&B2, h2.size() * 2);
  cudaMalloc(&O, m * n * 2);
  cudaMemcpy(A, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(B1, h1.data(), h1.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(B2, h2.data(), h2.size() * 2, cudaMemcpyHostToDevice);
  run<4, 16, 1, 2>("GL4 W16 S1 U2");
  run<4, 16, 1, 1>("GL4 W16 S1 U1");
  run<4, 8, 1, 2>("GL4 W8 S1 U2");
  run<4, 8, 2, 2>("GL4 W8 S2 U2");
  run<4, 8, 2, 1>("GL4 W8 S2 U1");
  run<8, 8, 2, 2>("GL8 W8 S2 U2");
  run<8, 8, 2, 1>("GL8 W8 S2 U1");
  run<8, 8, 4, 1>("GL8 W8 S4 U1");
  run<4, 4, 4, 2>("GL4 W4 S4 U2");
  run<4, 8, 4, 1>("GL4 W8 S4 U1");
  return 0;
}
