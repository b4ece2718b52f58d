// Where the time of yirage's split attention goes (gqa, b = 1: Q [2,256,64], K [2,64,4096],
// V [2,4096,64] float16, split over key chunks into a chunk kernel and a sum of parts): the
// generated chunk kernel as it is, without its loop, with 1 iteration, without its epilogue;
// the sum-of-parts kernel alone; both; an empty kernel; timed as harness.cuh says. Not part of
// the build; benchmarks/gpu/RESULTS.md (twelfth session) has the numbers. The kernels are
// NAME_chunk.cubin and NAME_sum.cubin, made from the sources the plugin leaves in its cache
// (<cache>/cuda/<key>.cu, docs/backends/cuda.md) with the typedef lines removed and, in the
// chunk kernel, `__device__ int g_iters = -1, g_skip = 0;` added, the loop's bound N replaced by
// `(g_iters < 0 ? N : g_iters)` and `if (g_skip) return;` put after the loop:
//   nvcc -arch=sm_90 -cubin -O3 -o NAME_chunk.cubin NAME_chunk.cu   (and NAME_sum)
//   nvcc -O3 -arch=sm_90 -std=c++17 attention_split.cu -lcuda -o att
//   ./att NAME GX GY GZ CHUNK_SMEM SUM_GX SUM_GY SUM_SMEM   # e.g. ./att g15 2 4 16 106816 2 64 19808
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include "generated_kernels.cuh"
#include "harness.cuh"
__global__ void empty_kernel(float *p) {
  if (p == nullptr) p[threadIdx.x] = 0;
}
int main(int argc, char **argv) {
  const char *name = argv[1];
  const unsigned cg[3] = {unsigned(atoi(argv[2])), unsigned(atoi(argv[3])), unsigned(atoi(argv[4]))};
  const unsigned csmem = atoi(argv[5]), sg[2] = {unsigned(atoi(argv[6])), unsigned(atoi(argv[7]))},
                 ssmem = atoi(argv[8]);
  cudaFree(0);
  CUmodule cm;
  const CUfunction cf = load_generated(name, "chunk", csmem, &cm), sf = load_generated(name, "sum", ssmem);
  CUdeviceptr iters, skip;
  size_t bytes;
  CK(cuModuleGetGlobal(&iters, &bytes, cm, "g_iters"));
  CK(cuModuleGetGlobal(&skip, &bytes, cm, "g_skip"));
  void *q, *k, *v, *l, *o, *out;
  cudaMalloc(&q, 1 << 20);
  cudaMalloc(&k, 4 << 20);
  cudaMalloc(&v, 4 << 20);
  cudaMalloc(&l, 8 << 20);
  cudaMalloc(&o, 32 << 20);
  cudaMalloc(&out, 1 << 20);
  cudaMemset(q, 0, 1 << 20);
  cudaMemset(k, 0, 4 << 20);
  cudaMemset(v, 0, 4 << 20);
  auto set = [&](int n, int s) {
    CK(cuMemcpyHtoD(iters, &n, 4));
    CK(cuMemcpyHtoD(skip, &s, 4));
  };
  void *cargs[] = {&q, &k, &v, &l, &o}, *sargs[] = {&l, &o, &out};
  auto chunk_run = [&] { CK(cuLaunchKernel(cf, cg[0], cg[1], cg[2], 256, 1, 1, csmem, 0, cargs, nullptr)); };
  auto sum_run = [&] { CK(cuLaunchKernel(sf, sg[0], sg[1], 1, 256, 1, 1, ssmem, 0, sargs, nullptr)); };
  cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, csmem);
  printf("%-5s empty (chunk grid)    %.2f\n", name,
         time_us([&] { empty_kernel<<<dim3(cg[0], cg[1], cg[2]), 256, csmem>>>((float *)out); }));
  set(-1, 0);
  printf("%-5s chunk                 %.2f\n", name, time_us(chunk_run));
  set(0, 0);
  printf("%-5s chunk, no iterations  %.2f\n", name, time_us(chunk_run));
  set(1, 0);
  printf("%-5s chunk, 1 iteration    %.2f\n", name, time_us(chunk_run));
  set(-1, 1);
  printf("%-5s chunk, no epilogue    %.2f\n", name, time_us(chunk_run));
  set(0, 1);
  printf("%-5s chunk, prologue only  %.2f\n", name, time_us(chunk_run));
  set(-1, 0);
  printf("%-5s sum                   %.2f\n", name, time_us(sum_run));
  printf("%-5s chunk + sum           %.2f\n", name, time_us([&] {
           chunk_run();
           sum_run();
         }));
  printf("%-5s %s\n", name, cudaGetErrorString(cudaDeviceSynchronize()));
}
