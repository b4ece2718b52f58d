// How fast can lora (O = X·W + (X·A)·B, X [16,256], W [256,4096], A [256,16], B [16,4096],
// float16) be in one kernel? A hand-written kernel next to an empty one and, where given, the
// kernel yirage generated, timed as harness.cuh says (the way benchmarks/gpu/bench.py times
// kernels). Not part of the build; benchmarks/gpu/RESULTS.md (eleventh session) has the numbers
// and:
//   nvcc -O3 -arch=sm_90 -std=c++17 lora_one_kernel.cu -o lora && ./lora
//   # with yirage's kernel (the CUDA source of the chosen µGraph, without its typedef lines), its
//   # grid and the dynamic shared memory it asks for (grid 128: 79168 bytes):
//   nvcc -O3 -arch=sm_90 -std=c++17 -DGENERATED='"gen.cu"' -DGENERATED_GRID=128 -DGENERATED_SMEM=79168 \
//     lora_one_kernel.cu -o lora && ./lora
#include <cmath>
#include <cstdio>

#include "harness.cuh"

#ifdef GENERATED
#include GENERATED
#endif

constexpr int M = 16, K = 256, N = 4096, R = 16;

__device__ __forceinline__ void cp16(void *dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ unsigned cta_rank() {
  unsigned r;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// 16 bytes at the same place in the shared memory of block `rank` of the cluster.
__device__ __forceinline__ uint4 ld_peer16(const void *p, unsigned rank) {
  unsigned r;
  uint4 v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_addr(p)), "r"(rank));
  asm volatile("ld.shared::cluster.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(r)
               : "memory");
  return v;
}
__device__ const __half *x_copies, *a_copies;  // ORDER 5: a private copy of X and A per block
__device__ __forceinline__ void ldsm4(const void *p, unsigned *r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}
__device__ __forceinline__ void ldsm4t(const void *p, unsigned *r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}
__device__ __forceinline__ void mma(float *c, const unsigned *a, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__global__ void empty_kernel(const __half *in, __half *out) {
  extern __shared__ __half scratch[];
  if (threadIdx.x < 8) scratch[threadIdx.x] = hexp(in[threadIdx.x]);
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x < 8) out[threadIdx.x] = scratch[threadIdx.x];
}

// ORDER 0: X and A loaded before W and B, 1: after, 3: not at all (loads alone only), 4: after,
// each block starting at a different chunk, 5: after, from the block's own copy of them (more
// DRAM traffic, no line read by every block), 6: by the TMA unit (bulk copies) before W and B,
// 7: all four by the TMA unit, W's and B's rows issued by the lanes of warp 0.
// S > 1: blocks in clusters of S, each loading 1/S of X's rows and of A's rows and copying the
// rest from the other blocks' shared memory (so that X and A leave L2 128/S times, not 128).
// C columns of O per block, 8 warps; warp w takes k in [32w, 32w + 32) of X·W and X·A (16-bit
// mma from raw tiles: ldmatrix, rows padded by 8 halves so that its 8 addresses hit distinct
// banks); the warps' partial sums meet in shared memory. (X·A)·B on the CUDA cores in float.
template <int C, bool COMPUTE = true, int ORDER = 0, int S = 1>
__global__ void __launch_bounds__(256)
    lora_hand(const __half *__restrict__ X, const __half *__restrict__ W, const __half *__restrict__ A,
              const __half *__restrict__ B, __half *__restrict__ O) {
  constexpr int XS = K + 8, WS = C + 8, AS = ORDER >= 6 ? R : R + 8, PS = C + R;
  __shared__ uint64_t bar;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half *xs = reinterpret_cast<__half *>(smem_raw);    // [M][XS]
  __half *ws = xs + M * XS;                             // [K][WS]
  __half *as = ws + K * WS;                             // [K][AS]
  __half *bs = as + K * AS;                             // [R][C]
  float *part = reinterpret_cast<float *>(bs + R * C);  // [8][M][PS]
  float *xa = part + 8 * M * PS;                        // [M][R]
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5, col0 = blockIdx.x * C;
  const unsigned rank = S > 1 ? cta_rank() : 0;
  // chunk i of X (row i / (K / 8)) and of A (row i / (R / 8)): which block of the cluster loads it
  auto x_owner = [](int i) { return static_cast<unsigned>(i / (K / 8) / (M / S)); };
  auto a_owner = [](int i) { return static_cast<unsigned>(i / (R / 8) / (K / S)); };
  const __half *x = ORDER == 5 ? x_copies + blockIdx.x * M * K : X;
  const __half *a = ORDER == 5 ? a_copies + blockIdx.x * K * R : A;
  const int shift = ORDER == 4 ? blockIdx.x * 37 : 0;
  auto load_shared = [&] {  // what every block reads: X and A
    if (ORDER == 3) return;
    if (ORDER == 6 || ORDER == 7) {
      if (t == 0) bar_expect(&bar, (M * K + K * R + (ORDER == 7 ? (K + R) * C : 0)) * 2);
      __syncwarp();
      if (ORDER == 7 && t < 32) {
        for (int r = t; r < K; r += 32) bulk_copy(ws + r * WS, W + r * N + col0, C * 2, &bar);
        if (t < R) bulk_copy(bs + t * C, B + t * N + col0, C * 2, &bar);
      }
      if (t < M) bulk_copy(xs + t * XS, X + t * K, K * 2, &bar);
      if (t == 0) bulk_copy(as, A, K * R * 2, &bar);
      return;
    }
    for (int j = t; j < M * K / 8; j += 256) {
      const int i = (j + shift) % (M * K / 8);
      if (x_owner(i) == rank) cp16(xs + (i / (K / 8)) * XS + (i % (K / 8)) * 8, x + i * 8);
    }
    for (int j = t; j < K * R / 8; j += 256) {
      const int i = (j + shift) % (K * R / 8);
      if (a_owner(i) == rank) cp16(as + (i / (R / 8)) * AS + (i % (R / 8)) * 8, a + i * 8);
    }
  };
  if (ORDER >= 6) {
    if (t == 0) bar_init(&bar);
    __syncthreads();
  }
  if (ORDER == 0 || ORDER >= 6) load_shared();
  for (int i = t; i < K * C / 8 && ORDER != 7; i += 256)
    cp16(ws + (i / (C / 8)) * WS + (i % (C / 8)) * 8, W + (i / (C / 8)) * N + col0 + (i % (C / 8)) * 8);
  for (int i = t; i < R * C / 8 && ORDER != 7; i += 256)
    cp16(bs + (i / (C / 8)) * C + (i % (C / 8)) * 8, B + (i / (C / 8)) * N + col0 + (i % (C / 8)) * 8);
  if (ORDER != 0 && ORDER < 6) load_shared();
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
  if (ORDER >= 6) bar_wait(&bar);
  if (S > 1) {
    cluster_arrive();
    cluster_wait();
    for (int i = t; i < M * K / 8; i += 256) {
      __half *p = xs + (i / (K / 8)) * XS + (i % (K / 8)) * 8;
      if (x_owner(i) != rank) *reinterpret_cast<uint4 *>(p) = ld_peer16(p, x_owner(i));
    }
    for (int i = t; i < K * R / 8; i += 256) {
      __half *p = as + (i / (R / 8)) * AS + (i % (R / 8)) * 8;
      if (a_owner(i) != rank) *reinterpret_cast<uint4 *>(p) = ld_peer16(p, a_owner(i));
    }
    cluster_arrive();  // done reading the others' shared memory (waited for before exiting)
  }
  __syncthreads();
  if (!COMPUTE) {  // the loads alone: each thread stores a sum of what it loaded
    __half s = __float2half(0.f);
    for (int i = t; i < K * C / 8; i += 256) s += ws[(i / (C / 8)) * WS + (i % (C / 8)) * 8];
    for (int i = t; i < M * K / 8; i += 256) s += xs[(i / (K / 8)) * XS + (i % (K / 8)) * 8];
    O[blockIdx.x * 256 + t] = s;
    if (S > 1) cluster_wait();
    return;
  }
  float acc[C / 8 + 2][4] = {};
  const int lr = lane & 15, lk = (lane >> 4) * 8;  // ldmatrix: lane's row and k half
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    const int k0 = warp * 32 + s * 16;
    unsigned a[4];
    ldsm4(xs + lr * XS + k0 + lk, a);
#pragma unroll
    for (int j = 0; j < C / 16; ++j) {
      unsigned b[4];
      ldsm4t(ws + (k0 + lr) * WS + j * 16 + lk, b);
      mma(acc[2 * j], a, b[0], b[1]);
      mma(acc[2 * j + 1], a, b[2], b[3]);
    }
    unsigned b[4];
    ldsm4t(as + (k0 + lr) * AS + lk, b);
    mma(acc[C / 8], a, b[0], b[1]);
    mma(acc[C / 8 + 1], a, b[2], b[3]);
  }
  const int grp = lane >> 2, tig = lane & 3;
  float *mine = part + warp * M * PS;
#pragma unroll
  for (int j = 0; j < C / 8 + 2; ++j) {
    *reinterpret_cast<float2 *>(mine + grp * PS + j * 8 + 2 * tig) = make_float2(acc[j][0], acc[j][1]);
    *reinterpret_cast<float2 *>(mine + (grp + 8) * PS + j * 8 + 2 * tig) = make_float2(acc[j][2], acc[j][3]);
  }
  __syncthreads();
  {  // X·A: one element per thread
    const int r = t / R, j = t % R;
    float s = 0;
#pragma unroll
    for (int w = 0; w < 8; ++w) s += part[w * M * PS + r * PS + C + j];
    xa[r * R + j] = s;
  }
  __syncthreads();
  for (int e = t; e < M * C / 2; e += 256) {
    const int r = e / (C / 2), c = (e % (C / 2)) * 2;
    float2 s = make_float2(0, 0);
#pragma unroll
    for (int w = 0; w < 8; ++w) {
      const float2 p = *reinterpret_cast<const float2 *>(part + w * M * PS + r * PS + c);
      s.x += p.x;
      s.y += p.y;
    }
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const float2 b = __half22float2(*reinterpret_cast<const __half2 *>(bs + j * C + c));
      s.x += xa[r * R + j] * b.x;
      s.y += xa[r * R + j] * b.y;
    }
    *reinterpret_cast<__half2 *>(O + r * N + col0 + c) = __floats2half2_rn(s.x, s.y);
  }
  if (S > 1) cluster_wait();
}
template <int C>
constexpr int hand_smem() {  // enough for every ORDER
  return (M * (K + 8) + K * (C + 8) + K * (R + 8) + R * C) * 2 + (8 * M * (C + R) + M * R) * 4;
}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  std::vector<__half> hx(M * K), hw(K * N), ha(K * R), hb(R * N);
  std::vector<double> fx(M * K), fw(K * N), fa(K * R), fb(R * N);
  srand(1);
  auto fill = [](std::vector<__half> &h, std::vector<double> &f, float scale) {
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = __float2half(scale * (rand() / (float)RAND_MAX * 2 - 1));
      f[i] = __half2float(h[i]);
    }
  };
  fill(hx, fx, 1), fill(hw, fw, 0.1f), fill(ha, fa, 0.1f), fill(hb, fb, 0.1f);
  std::vector<double> ref(M * N, 0), xa(M * R, 0);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      for (int n = 0; n < N; ++n) ref[m * N + n] += fx[m * K + k] * fw[k * N + n];
      for (int r = 0; r < R; ++r) xa[m * R + r] += fx[m * K + k] * fa[k * R + r];
    }
  for (int m = 0; m < M; ++m)
    for (int r = 0; r < R; ++r)
      for (int n = 0; n < N; ++n) ref[m * N + n] += xa[m * R + r] * fb[r * N + n];
  __half *X, *W, *A, *B, *O;
  cudaMalloc(&X, hx.size() * 2), cudaMalloc(&W, hw.size() * 2), cudaMalloc(&A, ha.size() * 2);
  cudaMalloc(&B, hb.size() * 2), cudaMalloc(&O, M * N * 2);
  cudaMemcpy(X, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(W, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(A, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(B, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice);
  auto check = [&](const char *name, float us) {
    std::vector<__half> ho(M * N);
    cudaMemcpy(ho.data(), O, ho.size() * 2, cudaMemcpyDeviceToHost);
    double num = 0, den = 0;
    for (int i = 0; i < M * N; ++i) {
      const double d = __half2float(ho[i]) - ref[i];
      num += d * d, den += ref[i] * ref[i];
    }
    printf("%-22s %7.2f us  rel. error %.2e  %s\n", name, us, std::sqrt(num / den),
           cudaGetErrorString(cudaGetLastError()));
    cudaMemset(O, 0xff, M * N * 2);
  };
  printf("%-22s %7.2f us\n", "empty", time_us([&] { empty_kernel<<<1, 32, 16>>>(X, O); }));
  // The same with 128 blocks of 256 threads and dynamic shared memory: the cost of the launch's
  // shape and of the shared memory carve-out the kernel asks for.
  cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 << 10);
  for (int kb : {0, 16, 48, 100, 200}) {
    char name[64];
    snprintf(name, sizeof name, "empty 128x256 %d KB", kb);
    printf("%-22s %7.2f us\n", name, time_us([&] { empty_kernel<<<128, 256, std::max(16, kb << 10)>>>(X, O); }));
  }
  cudaMemset(O, 0xff, M * N * 2);
#define HAND(C)                                                                                         \
  {                                                                                                     \
    cudaFuncSetAttribute(lora_hand<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, hand_smem<C>());    \
    check("hand C=" #C, time_us([&] { lora_hand<C><<<N / C, 256, hand_smem<C>()>>>(X, W, A, B, O); })); \
  }
  HAND(16)
  HAND(32)
  HAND(64)
#define VARIANT(NAME, C, COMPUTE, ORDER, S)                                                                   \
  {                                                                                                           \
    auto *kernel = lora_hand<C, COMPUTE, ORDER, S>;                                                           \
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, hand_smem<C>());                \
    if (S > 8) cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);               \
    cudaLaunchConfig_t config = {dim3(N / C), dim3(256), static_cast<size_t>(hand_smem<C>()), 0, nullptr, 0}; \
    cudaLaunchAttribute cluster[1];                                                                           \
    cluster[0].id = cudaLaunchAttributeClusterDimension;                                                      \
    cluster[0].val.clusterDim.x = S, cluster[0].val.clusterDim.y = 1, cluster[0].val.clusterDim.z = 1;        \
    if (S > 1) config.attrs = cluster, config.numAttrs = 1;                                                   \
    const float us = time_us([&] { cudaLaunchKernelEx(&config, kernel, X, W, A, B, O); });                    \
    if (COMPUTE)                                                                                              \
      check(NAME, us);                                                                                        \
    else                                                                                                      \
      printf("%-22s %7.2f us\n", NAME, us);                                                                   \
  }
  // clang-format off: a variant per line
  VARIANT("hand C=32 W first", 32, true, 1, 1)
  VARIANT("hand C=64 W first", 64, true, 1, 1)
  VARIANT("hand C=128 W first", 128, true, 1, 1)
  VARIANT("loads alone C=32", 32, false, 0, 1)
  VARIANT("loads W first C=32", 32, false, 1, 1)
  VARIANT("loads W only C=32", 32, false, 3, 1)
  VARIANT("loads W only C=64", 64, false, 3, 1)
  VARIANT("hand C=32 cluster 2", 32, true, 1, 2)
  VARIANT("hand C=32 cluster 8", 32, true, 1, 8)
  VARIANT("hand C=32 rotated", 32, true, 4, 1)
  VARIANT("hand C=64 rotated", 64, true, 4, 1)
  VARIANT("hand C=32 TMA X,A", 32, true, 6, 1)
  VARIANT("hand C=64 TMA X,A", 64, true, 6, 1) {
    void *xc, *ac;
    cudaMalloc(&xc, 128 * M * K * 2), cudaMalloc(&ac, 128 * K * R * 2);
    for (int b = 0; b < 128; ++b) {
      cudaMemcpy(static_cast<__half *>(xc) + b * M * K, X, M * K * 2, cudaMemcpyDeviceToDevice);
      cudaMemcpy(static_cast<__half *>(ac) + b * K * R, A, K * R * 2, cudaMemcpyDeviceToDevice);
    }
    cudaMemcpyToSymbol(x_copies, &xc, sizeof xc), cudaMemcpyToSymbol(a_copies, &ac, sizeof ac);
  }
  VARIANT("hand C=32 TMA all", 32, true, 7, 1)
  VARIANT("hand C=64 TMA all", 64, true, 7, 1)
  VARIANT("hand C=128 TMA all", 128, true, 7, 1)
  VARIANT("loads C=32 TMA all", 32, false, 7, 1)
  VARIANT("hand C=32 own X,A", 32, true, 5, 1)
  VARIANT("hand C=64 own X,A", 64, true, 5, 1)
  // clang-format on
#ifdef GENERATED
  {
    const int smem = GENERATED_SMEM;
    cudaFuncSetAttribute(yirage_cuda_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    auto *x = reinterpret_cast<const yr_f16 *>(X), *w = reinterpret_cast<const yr_f16 *>(W);
    auto *a = reinterpret_cast<const yr_f16 *>(A), *b = reinterpret_cast<const yr_f16 *>(B);
    check("yirage (generated)", time_us([&] {
            yirage_cuda_kernel<<<GENERATED_GRID, 256, smem>>>(x, w, a, b, reinterpret_cast<yr_f16 *>(O));
          }));
  }
#endif
}
