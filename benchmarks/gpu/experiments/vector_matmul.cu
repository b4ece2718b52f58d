// Layouts of the CUDA backend's vector matmul ([m,k]·[k,n] in float16, m small), timed the way
// benchmarks/gpu/bench.py times kernels: CUDA events around each launch, after a 256 MB memset
// that flushes L2 and leaves it dirty (as triton.testing.do_bench does); median of 30.
// Not part of the build; benchmarks/gpu/RESULTS.md (fifth session) has the numbers and:
//   nvcc -O3 -arch=sm_90 -std=c++17 vector_matmul.cu -o vector_matmul && ./vector_matmul
//   PAIRS=1 ./vector_matmul   # also rms_norm then matmul, with and without dependent launch
// GLx: lanes reading consecutive 16-byte groups of a B row; Wx: warps per block; Sx: blocks per
// cluster splitting k; Ux: B rows loaded before use; plain / nc: ld.global vs
// ld.global.nc.L1::no_allocate (and L2 prefetch sizes).
#include <cuda_fp16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
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
__device__ __forceinline__ unsigned cta_rank() {
  unsigned r;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// GL group lanes (16 B each) per warp row, KL = 32/GL k lanes, W warps, S blocks per cluster split k, R rows.
// After every block of a cluster of S added its partial sums into red[R][C]: block s of the
// cluster totals its C / S columns over the cluster's blocks and stores the rows below m.
template <int R, int C, int S>
__device__ __forceinline__ void store_cluster_sums(float (&red)[R][C], __half *__restrict__ O, int m, int n, int tile,
                                                   int s) {
  if (S > 1)
    cluster_sync();
  else
    __syncthreads();
  constexpr int CS = C / S;  // columns this block finishes
  for (int t = threadIdx.x; t < R * CS; t += blockDim.x) {
    const int r = t / CS, c = s * CS + t % CS;
    float sum = 0.f;
    if (S > 1) {
      for (int b = 0; b < S; ++b) sum += ld_remote(&red[r][c], b);
    } else
      sum = red[r][c];
    if (r < m) O[(size_t)r * n + tile * C + c] = __float2half(sum);
  }
  if (S > 1) cluster_sync();
}

template <int LM>
__device__ __forceinline__ uint4 ldb(const __half *p) {
  uint4 v;
  if (LM == 0) return *reinterpret_cast<const uint4 *>(p);
  if (LM == 1)
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  if (LM == 2)
    asm volatile("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  if (LM == 3)
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  return v;
}
template <int GL, int W, int S, int R, int U, bool PDL = false, int LM = 0>
__global__ void __launch_bounds__(W * 32)
    gemv(const __half *__restrict__ A, const __half *__restrict__ B, __half *__restrict__ O, int m, int k, int n) {
  constexpr int KL = 32 / GL, C = GL * 8;
  __shared__ float red[R][C];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gl = lane % GL, kl = lane / GL;
  const int tile = blockIdx.x / S, s = S > 1 ? (int)cta_rank() : 0;
  for (int t = threadIdx.x; t < R * C; t += blockDim.x) (&red[0][0])[t] = 0.f;
  const int j0 = tile * C + gl * 8;
  const int kb = k / S, k0 = s * kb;                         // block's k range
  const int kw = kb / W, q0 = k0 + warp * kw, q1 = q0 + kw;  // warp's slice (assume divisible)
  float acc[R][8];
#pragma unroll
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < 8; ++c) acc[r][c] = 0.f;
  const __half *pb = B + j0;
  uint4 raw[U], nxt[U];
  int q = q0 + kl;
#pragma unroll
  for (int u = 0; u < U; ++u) raw[u] = ldb<LM>(pb + (size_t)(q + u * KL) * n);
  if (PDL) asm volatile("griddepcontrol.wait;" ::: "memory");
  for (; q < q1; q += U * KL) {
    const bool more = q + U * KL < q1;
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (more) nxt[u] = ldb<LM>(pb + (size_t)(q + U * KL + u * KL) * n);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const __half2 *h = reinterpret_cast<const __half2 *>(&raw[u]);
      float bv[8];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        float2 f = __half22float2(h[c]);
        bv[2 * c] = f.x;
        bv[2 * c + 1] = f.y;
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float av = __half2float(A[(size_t)min(r, m - 1) * k + q + u * KL]);
#pragma unroll
        for (int c = 0; c < 8; ++c) acc[r][c] += av * bv[c];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) raw[u] = nxt[u];
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c = 0; c < 8; ++c)
#pragma unroll
      for (int off = GL; off < 32; off *= 2) acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], off);
  __syncthreads();
  if (kl == 0) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < 8; ++c) atomicAdd(&red[r][gl * 8 + c], acc[r][c]);
  }
  store_cluster_sums<R, C, S>(red, O, m, n, tile, s);
}

// Tensor cores for a few rows: a warp's 16-byte loads of 8 B rows × 32 columns (lane l: row l/4,
// columns 8(l%4)…+7) are four 8×8 tiles whose columns are interleaved; movmatrix.trans turns
// each into the B operand of mma.m16n8k16 (k pairs of one column per lane), and A is X's rows
// (rows 8-15 zero). Lane l ends with row l/4, columns 8(l%4)…+7 of the block's 32.
__device__ __forceinline__ unsigned movtrans(unsigned x) {
  unsigned y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}
__device__ __forceinline__ void mma16816(float *c, unsigned a0, unsigned a1, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(0u), "r"(a1), "r"(0u), "r"(b0), "r"(b1));
}
template <int W, int U, int MINB, int S = 1>
__global__ void __launch_bounds__(W * 32, MINB)
    gemv_tc(const __half *__restrict__ A, const __half *__restrict__ B, __half *__restrict__ O, int m, int k, int n) {
  constexpr int C = 32, R = 8;
  __shared__ float red[R][C];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int tile = blockIdx.x / S, s = S > 1 ? (int)cta_rank() : 0;
  for (int i = threadIdx.x; i < R * C; i += blockDim.x) (&red[0][0])[i] = 0.f;
  const int kw = k / S / W, q0 = (s * W + warp) * kw, q1 = q0 + kw;
  float acc[4][4] = {};
  const __half *pb = B + tile * C + t * 8 + (size_t)g * n;  // row q + g
  const __half *pa = A + (size_t)min(g, m - 1) * k + 2 * t;
  uint4 raw[U], nxt[U];
  int q = q0;
#pragma unroll
  for (int u = 0; u < U; ++u) raw[u] = ldb<3>(pb + (size_t)(q + u * 8) * n);
  for (; q < q1; q += U * 8) {
    const bool more = q + U * 8 < q1;
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (more) nxt[u] = ldb<3>(pb + (size_t)(q + U * 8 + u * 8) * n);
#pragma unroll
    for (int s = 0; s < U / 2; ++s) {
      const int kk = q + s * 16;
      const unsigned a0 = g < m ? *reinterpret_cast<const unsigned *>(pa + kk) : 0u;
      const unsigned a1 = g < m ? *reinterpret_cast<const unsigned *>(pa + kk + 8) : 0u;
      const unsigned lo[4] = {raw[2 * s].x, raw[2 * s].y, raw[2 * s].z, raw[2 * s].w};
      const unsigned hi[4] = {raw[2 * s + 1].x, raw[2 * s + 1].y, raw[2 * s + 1].z, raw[2 * s + 1].w};
#pragma unroll
      for (int j = 0; j < 4; ++j) mma16816(acc[j], a0, a1, movtrans(lo[j]), movtrans(hi[j]));
    }
#pragma unroll
    for (int u = 0; u < U; ++u) raw[u] = nxt[u];
  }
  __syncthreads();
  // acc[j][0..1]: row g, tile columns 2t, 2t+1 of tile j -> actual columns 8t + 2j, 8t + 2j + 1.
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    atomicAdd(&red[g][8 * t + 2 * j], acc[j][0]);
    atomicAdd(&red[g][8 * t + 2 * j + 1], acc[j][1]);
  }
  store_cluster_sums<R, C, S>(red, O, m, n, tile, s);
}

__global__ void readall(const uint4 *__restrict__ B, size_t n16, float *sink) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = B[i];
    acc.x ^= v.x;
    acc.y ^= v.y;
    acc.z ^= v.z;
    acc.w ^= v.w;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678) *sink = 1.f;
}

template <bool TRIGGER>
__global__ void __launch_bounds__(256) rmsnorm(const __half *__restrict__ X, __half *__restrict__ Y, int k) {
  if (TRIGGER) asm volatile("griddepcontrol.launch_dependents;");
  __shared__ float part[8];
  const __half *row = X + (size_t)blockIdx.x * k;
  float v[16], s = 0.f;
#pragma unroll
  for (int e = 0; e < 16; ++e) {
    v[e] = __half2float(row[threadIdx.x + e * 256]);
    s += v[e] * v[e];
  }
  for (int o = 16; o; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
  __syncthreads();
  s = 0.f;
  for (int w = 0; w < 8; ++w) s += part[w];
  const float inv = rsqrtf(s / k);
#pragma unroll
  for (int e = 0; e < 16; ++e) Y[(size_t)blockIdx.x * k + threadIdx.x + e * 256] = __float2half(v[e] * inv);
}
__global__ void empty_kernel() {}
struct Shape {
  int m, k, n;
  const char *name;
};
static char *flush_buf;
template <class F>
float time_it(F launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ts;
  static int reps = getenv("REPS") ? atoi(getenv("REPS")) : 30;
  for (int i = 0; i < reps; ++i) {
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

template <int GL, int W, int S, int R, int U, int LM = 0>
void run_variant(const Shape &sh, __half *A, __half *B, __half *O, const std::vector<float> &ref, const char *label) {
  constexpr int C = GL * 8;
  const int blocks = sh.n / C * S;
  if ((sh.k / S / W) % (U * (32 / GL)) != 0) return;
  auto k = gemv<GL, W, S, R, U, false, LM>;
  if (S > 1) {
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
    if (S > 8) cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    auto launch = [&] { cudaLaunchKernelEx(&cfg, k, (const __half *)A, (const __half *)B, O, sh.m, sh.k, sh.n); };
    cudaMemset(O, 0xff, sh.m * sh.n * 2);
    launch();
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      printf("%s %s: %s\n", sh.name, label, cudaGetErrorString(e));
      exit(1);
    }
    std::vector<__half> h(sh.m * sh.n);
    cudaMemcpy(h.data(), O, h.size() * 2, cudaMemcpyDeviceToHost);
    double err = 0, nrm = 0;
    for (size_t i = 0; i < h.size(); ++i) {
      double d = __half2float(h[i]) - ref[i];
      err += d * d;
      nrm += ref[i] * ref[i];
    }
    printf("%-16s %-36s blocks %4d x %4d  %7.2f us  relerr %.1e\n", sh.name, label, blocks, W * 32, time_it(launch),
           std::sqrt(err / nrm));
  } else {
    auto launch = [&] { k<<<blocks, W * 32>>>(A, B, O, sh.m, sh.k, sh.n); };
    cudaMemset(O, 0xff, sh.m * sh.n * 2);
    launch();
    cudaDeviceSynchronize();
    std::vector<__half> h(sh.m * sh.n);
    cudaMemcpy(h.data(), O, h.size() * 2, cudaMemcpyDeviceToHost);
    double err = 0, nrm = 0;
    for (size_t i = 0; i < h.size(); ++i) {
      double d = __half2float(h[i]) - ref[i];
      err += d * d;
      nrm += ref[i] * ref[i];
    }
    printf("%-16s %-36s blocks %4d x %4d  %7.2f us  relerr %.1e\n", sh.name, label, blocks, W * 32, time_it(launch),
           std::sqrt(err / nrm));
  }
}

template <int W, int U, int MINB, int S = 1>
void run_tc(const Shape &sh, __half *A, __half *B, __half *O, const std::vector<float> &ref, const char *label) {
  const int blocks = sh.n / 32 * S;
  if ((sh.k / S / W) % (U * 8) != 0) return;
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
  auto kern = gemv_tc<W, U, MINB, S>;
  auto launch = [&] { cudaLaunchKernelEx(&cfg, kern, (const __half *)A, (const __half *)B, O, sh.m, sh.k, sh.n); };
  cudaMemset(O, 0xff, sh.m * sh.n * 2);
  launch();
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("%s: %s\n", label, cudaGetErrorString(e));
    exit(1);
  }
  std::vector<__half> h(sh.m * sh.n);
  cudaMemcpy(h.data(), O, h.size() * 2, cudaMemcpyDeviceToHost);
  double err = 0, nrm = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    double d = __half2float(h[i]) - ref[i];
    err += d * d;
    nrm += ref[i] * ref[i];
  }
  printf("%-16s %-36s blocks %4d x %4d  %7.2f us  relerr %.1e\n", sh.name, label, blocks, W * 32, time_it(launch),
         std::sqrt(err / nrm));
}

template <int R>
void run_shape(const Shape &sh) {
  std::vector<__half> ha(sh.m * sh.k), hb((size_t)sh.k * sh.n);
  srand(1);
  for (auto &x : ha) x = __float2half((rand() / (float)RAND_MAX) - 0.5f);
  for (auto &x : hb) x = __float2half((rand() / (float)RAND_MAX) - 0.5f);
  std::vector<float> ref(sh.m * sh.n, 0.f);
  for (int i = 0; i < sh.m; ++i)
    for (int p = 0; p < sh.k; ++p) {
      float a = __half2float(ha[i * sh.k + p]);
      for (int j = 0; j < sh.n; ++j) ref[i * sh.n + j] += a * __half2float(hb[(size_t)p * sh.n + j]);
    }
  __half *A, *B, *O;
  cudaMalloc(&A, ha.size() * 2);
  cudaMalloc(&B, hb.size() * 2);
  cudaMalloc(&O, sh.m * sh.n * 2);
  cudaMemcpy(A, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(B, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice);
  float *sink;
  cudaMalloc(&sink, 4);
  printf("%-16s %-36s %27.2f us (B bytes / 3.02 TB/s = %.2f us)\n", sh.name, "read B only, 132x4x512",
         time_it([&] { readall<<<528, 512>>>((const uint4 *)B, hb.size() / 8, sink); }), hb.size() * 2 / 3.02e6);
  run_variant<4, 16, 1, R, 4, 0>(sh, A, B, O, ref, "GL4 W16 S1 U4 plain");
  run_variant<4, 16, 1, R, 4, 3>(sh, A, B, O, ref, "GL4 W16 S1 U4 nc");
  run_variant<4, 16, 1, R, 2, 3>(sh, A, B, O, ref, "GL4 W16 S1 U2 nc");
  run_variant<8, 8, 4, R, 4, 0>(sh, A, B, O, ref, "GL8 W8 S4 U4 plain");
  run_variant<8, 8, 4, R, 4, 3>(sh, A, B, O, ref, "GL8 W8 S4 U4 nc");
  run_variant<8, 8, 4, R, 4, 1>(sh, A, B, O, ref, "GL8 W8 S4 U4 nc L2::256B");
  run_variant<8, 8, 4, R, 4, 2>(sh, A, B, O, ref, "GL8 W8 S4 U4 nc L2::128B");
  run_variant<8, 4, 8, R, 4, 3>(sh, A, B, O, ref, "GL8 W4 S8 U4 nc");
  run_variant<8, 16, 2, R, 4, 3>(sh, A, B, O, ref, "GL8 W16 S2 U4 nc");
  run_variant<32, 8, 8, R, 4, 3>(sh, A, B, O, ref, "GL32 W8 S8 U4 nc");
  run_tc<16, 4, 2>(sh, A, B, O, ref, "tensor cores W16 U4, 2/SM");
  run_tc<16, 4, 2, 2>(sh, A, B, O, ref, "tensor cores W16 U4 S2, 2/SM");
  run_tc<8, 4, 4, 2>(sh, A, B, O, ref, "tensor cores W8 U4 S2, 4/SM");
  run_tc<8, 4, 4, 4>(sh, A, B, O, ref, "tensor cores W8 U4 S4, 4/SM");
  run_tc<16, 2, 2, 2>(sh, A, B, O, ref, "tensor cores W16 U2 S2, 2/SM");
  run_tc<8, 2, 4, 4>(sh, A, B, O, ref, "tensor cores W8 U2 S4, 4/SM");
  run_tc<16, 4, 1>(sh, A, B, O, ref, "tensor cores W16 U4, 1/SM");
  run_tc<16, 8, 2>(sh, A, B, O, ref, "tensor cores W16 U8, 2/SM");
  run_tc<16, 2, 2>(sh, A, B, O, ref, "tensor cores W16 U2, 2/SM");
  run_tc<8, 4, 4>(sh, A, B, O, ref, "tensor cores W8 U4, 4/SM");
  run_tc<8, 8, 4>(sh, A, B, O, ref, "tensor cores W8 U8, 4/SM");
  cudaFree(A);
  cudaFree(B);
  cudaFree(O);
}

template <int GL, int W, int S, int U>
void run_pair(bool pdl, const char *label) {
  const int m = 2, k = 4096, n = 6144;
  constexpr int R = 2, C = GL * 8;
  std::vector<__half> hx(m * k), hb((size_t)k * n);
  srand(2);
  for (auto &x : hx) x = __float2half((rand() / (float)RAND_MAX) - 0.5f);
  for (auto &x : hb) x = __float2half((rand() / (float)RAND_MAX) - 0.5f);
  std::vector<float> xn(m * k), ref(m * n, 0.f);
  for (int i = 0; i < m; ++i) {
    double s = 0;
    for (int p = 0; p < k; ++p) {
      double v = __half2float(hx[i * k + p]);
      s += v * v;
    }
    float inv = 1.0 / std::sqrt(s / k);
    for (int p = 0; p < k; ++p) xn[i * k + p] = __half2float(__float2half(__half2float(hx[i * k + p]) * inv));
  }
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < n; ++j) ref[i * n + j] += xn[i * k + p] * __half2float(hb[(size_t)p * n + j]);
  __half *X, *Xn, *B, *O;
  cudaMalloc(&X, m * k * 2);
  cudaMalloc(&Xn, m * k * 2);
  cudaMalloc(&B, hb.size() * 2);
  cudaMalloc(&O, m * n * 2);
  cudaMemcpy(X, hx.data(), m * k * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(B, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice);
  auto kern = pdl ? gemv<GL, W, S, R, U, true> : gemv<GL, W, S, R, U, false>;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = n / C * S;
  cfg.blockDim = W * 32;
  cudaLaunchAttribute at[2];
  int na = 0;
  if (S > 1) {
    at[na].id = cudaLaunchAttributeClusterDimension;
    at[na].val.clusterDim.x = S;
    at[na].val.clusterDim.y = 1;
    at[na].val.clusterDim.z = 1;
    ++na;
  }
  if (pdl) {
    at[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[na].val.programmaticStreamSerializationAllowed = 1;
    ++na;
  }
  cfg.attrs = at;
  cfg.numAttrs = na;
  auto launch = [&] {
    if (pdl)
      rmsnorm<true><<<m, 256>>>(X, Xn, k);
    else
      rmsnorm<false><<<m, 256>>>(X, Xn, k);
    cudaLaunchKernelEx(&cfg, kern, (const __half *)Xn, (const __half *)B, O, m, k, n);
  };
  cudaMemset(O, 0xff, m * n * 2);
  cudaMemset(Xn, 0xff, m * k * 2);
  launch();
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("%s: %s\n", label, cudaGetErrorString(e));
    exit(1);
  }
  std::vector<__half> h(m * n);
  cudaMemcpy(h.data(), O, h.size() * 2, cudaMemcpyDeviceToHost);
  double err = 0, nrm = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    double d = __half2float(h[i]) - ref[i];
    err += d * d;
    nrm += ref[i] * ref[i];
  }
  printf("pair %-40s %7.2f us  relerr %.1e\n", label, time_it(launch), std::sqrt(err / nrm));
  cudaFree(X);
  cudaFree(Xn);
  cudaFree(B);
  cudaFree(O);
}
int main() {
  cudaMalloc(&flush_buf, 256 << 20);
  {
    float t = time_it([] {});
    float t1 = time_it([] { empty_kernel<<<1, 32>>>(); });
    printf("events only %.2f us, empty kernel %.2f us\n", t, t1);
  }
  if (getenv("PAIRS")) {
    run_pair<4, 16, 1, 4>(false, "GL4 W16 S1 U4 plain");
    run_pair<4, 16, 1, 4>(true, "GL4 W16 S1 U4 PDL");
    run_pair<8, 8, 4, 4>(false, "GL8 W8 S4 U4 plain");
    run_pair<8, 8, 4, 4>(true, "GL8 W8 S4 U4 PDL");
    run_pair<8, 4, 8, 4>(false, "GL8 W4 S8 U4 plain");
    run_pair<8, 4, 8, 4>(true, "GL8 W4 S8 U4 PDL");
    run_pair<8, 16, 2, 4>(false, "GL8 W16 S2 U4 plain");
    run_pair<8, 16, 2, 4>(true, "GL8 W16 S2 U4 PDL");
  }
  run_shape<2>({2, 4096, 6144, "rmsnorm_linear"});
  run_shape<8>({8, 4096, 4096, "gated_mlp"});
  return 0;
}
