// Can the sum of parts of yirage's split attention (gqa, b = 1: 2x4 row blocks over 16 key
// chunks, then a kernel summing the chunks' partial sums) move into the chunk kernel? Times, as
// harness.cuh says, the two kernels as generated (without and with programmatic dependent launch,
// as the plugin launches them), and the chunk kernel ending with the sum itself, the 16 chunks of
// a row block summed through distributed shared memory in a thread-block cluster of 16, or through
// global memory after a grid-wide barrier in a cooperative launch (attention_one_kernel.py says
// how the kernels are made); each variant also stopping before and after its barrier, and empty
// kernels launched the same ways. Checks both variants' outputs against the two kernels'. Not
// part of the build; benchmarks/gpu/RESULTS.md (fourteenth session) has the numbers.
//   attention_one_kernel.py CHUNK.cu SUM.cu 88128 > attention_one_kernel.cuh
//   nvcc -O3 -arch=sm_90 -std=c++17 attention_one_kernel.cu -o attention_one_kernel
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "attention_one_kernel.cuh"
#include "harness.cuh"

#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e != cudaSuccess) {                          \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      exit(1);                                       \
    }                                                \
  } while (0)

__global__ void empty_kernel(float *p) {
  if (p == nullptr) p[threadIdx.x] = 0;
}
__global__ void empty_cluster(float *p) {
  if (p == nullptr) p[threadIdx.x] = 0;
  cg::this_cluster().sync();
}

static cudaLaunchConfig_t config(dim3 grid, int shared, cudaLaunchAttribute *attribute) {
  cudaLaunchConfig_t c = {};
  c.gridDim = grid;
  c.blockDim = dim3(256);
  c.dynamicSmemBytes = shared;
  c.attrs = attribute;
  c.numAttrs = attribute ? 1 : 0;
  return c;
}

static cudaLaunchAttribute cluster_of(unsigned z) {
  cudaLaunchAttribute a;
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = 1;
  a.val.clusterDim.y = 1;
  a.val.clusterDim.z = z;
  return a;
}

int main() {
  const int chunk_shared = 88128, cluster_shared = chunk_shared + (64 * 64 + 64) * 4;
  const dim3 grid(2, 4, 16);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  auto random_half = [&](size_t n) {
    std::vector<__half> h(n);
    for (auto &x : h) x = __float2half(uniform(rng));
    void *d;
    CK(cudaMalloc(&d, n * 2));
    CK(cudaMemcpy(d, h.data(), n * 2, cudaMemcpyHostToDevice));
    return d;
  };
  void *q = random_half(2 * 256 * 64), *k = random_half(2 * 64 * 4096), *v = random_half(2 * 4096 * 64);
  void *e_parts, *ev_parts, *two_kernels, *one_kernel;
  CK(cudaMalloc(&e_parts, 2 * 256 * 16 * 4));
  CK(cudaMalloc(&ev_parts, 2 * 256 * 16 * 64 * 4));
  CK(cudaMalloc(&two_kernels, 2 * 256 * 64 * 2));
  CK(cudaMalloc(&one_kernel, 2 * 256 * 64 * 2));
  CK(cudaFuncSetAttribute(chunk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, chunk_shared));
  CK(cudaFuncSetAttribute(coop_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, chunk_shared));
  for (auto f : {(const void *)cluster_kernel, (const void *)empty_cluster, (const void *)empty_kernel}) {
    CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, cluster_shared));
    CK(cudaFuncSetAttribute(f, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  const auto *Q = (const yr_f16 *)q, *K = (const yr_f16 *)k, *V = (const yr_f16 *)v;
  auto chunk = [&] { chunk_kernel<<<grid, 256, chunk_shared>>>(Q, K, V, (float *)e_parts, (float *)ev_parts); };
  auto sum = [&](bool dependent) {
    cudaLaunchAttribute a;
    a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t c = config(dim3(2, 64, 1), 0, dependent ? &a : nullptr);
    CK(cudaLaunchKernelEx(&c, sum_kernel, (const float *)e_parts, (const float *)ev_parts, (yr_f16 *)two_kernels));
  };
  auto cluster = [&] {
    cudaLaunchAttribute a = cluster_of(16);
    cudaLaunchConfig_t c = config(grid, cluster_shared, &a);
    CK(cudaLaunchKernelEx(&c, cluster_kernel, Q, K, V, (yr_f16 *)one_kernel));
  };
  auto coop = [&] {
    void *args[] = {&q, &k, &v, &e_parts, &ev_parts, &one_kernel};
    CK(cudaLaunchCooperativeKernel((const void *)coop_kernel, grid, dim3(256), args, chunk_shared, 0));
  };
  auto set_mode = [](int mode) { CK(cudaMemcpyToSymbol(g_mode, &mode, 4)); };
  {
    cudaLaunchAttribute a = cluster_of(16);
    cudaLaunchConfig_t c = config(grid, cluster_shared, &a);
    int n = -1;
    CK(cudaOccupancyMaxActiveClusters(&n, cluster_kernel, &c));
    printf("clusters of 16 resident at once: %d (8 needed)\n", n);
  }
  for (int variant = 0; variant < 2; ++variant) {
    CK(cudaMemset(one_kernel, 0xff, 2 * 256 * 64 * 2));  // NaN: poisoned
    chunk();
    sum(false);
    variant == 0 ? cluster() : coop();
    CK(cudaDeviceSynchronize());
    std::vector<__half> a(2 * 256 * 64), b(a.size());
    CK(cudaMemcpy(a.data(), two_kernels, a.size() * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), one_kernel, b.size() * 2, cudaMemcpyDeviceToHost));
    double diff = 0, norm = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const double x = __half2float(a[i]), y = __half2float(b[i]);
      diff += (x - y) * (x - y);
      norm += x * x;
    }
    printf("%s: relative difference to the two kernels %.3g\n", variant == 0 ? "cluster" : "cooperative",
           std::sqrt(diff / norm));
  }
  for (int round = 0; round < 2; ++round) {
    printf("empty kernel                       %.2f\n",
           time_us([&] { empty_kernel<<<grid, 256, cluster_shared>>>((float *)one_kernel); }));
    for (unsigned z : {2u, 8u, 16u}) {
      cudaLaunchAttribute a = cluster_of(z);
      cudaLaunchConfig_t c = config(grid, cluster_shared, &a);
      printf("empty kernel, clusters of %2u       %.2f\n", z,
             time_us([&] { CK(cudaLaunchKernelEx(&c, empty_cluster, (float *)one_kernel)); }));
    }
    printf("empty kernel, cooperative          %.2f\n", time_us([&] {
             void *args[] = {&one_kernel};
             CK(cudaLaunchCooperativeKernel((const void *)empty_kernel, grid, dim3(256), args, cluster_shared, 0));
           }));
    printf("chunk                              %.2f\n", time_us(chunk));
    printf("chunk + sum                        %.2f\n", time_us([&] {
             chunk();
             sum(false);
           }));
    printf("chunk + sum, dependent launch      %.2f\n", time_us([&] {
             chunk();
             sum(true);
           }));
    const char *stop[] = {"", ", up to the barrier", ", up to the sum"};
    for (int mode : {1, 2, 0}) {
      set_mode(mode);
      printf("cluster of 16%-22s%.2f\n", stop[mode], time_us(cluster));
      printf("cooperative%-24s%.2f\n", stop[mode], time_us(coop));
    }
  }
  CK(cudaDeviceSynchronize());
}
