// Variants of yirage's split attention (gqa or qknorm, a chunk kernel and a sum of parts) on
// random inputs: each checked against a float64 CPU reference, then timed as harness.cuh says
// (chunk alone, sum alone, both). Not part of the build; benchmarks/gpu/RESULTS.md has the
// numbers. NAME_chunk.cubin and NAME_sum.cubin are compiled from the generated sources (those
// the plugin leaves in its cache, docs/backends/cuda.md, or codegen::cuda_source's for a graph
// of the search's), with their typedef, NAN and INFINITY lines removed and <cstdint> included:
//   nvcc -cubin -O3 -arch=sm_90a -o NAME_chunk.cubin NAME_chunk.cu   (and NAME_sum)
//   nvcc -O3 -arch=sm_90 -std=c++17 attention_variants.cu -lcuda -o attv
//   ./attv NAME HEADS ROWS GX GY GZ CHUNK_SMEM SUM_GX SUM_GY NORMALIZE_Q
// HEADS × ROWS query rows of depth 64 against 4096 keys (gqa at b: HEADS = 2b, ROWS = 256);
// NORMALIZE_Q = 1 for qknorm (rms_norm of Q's rows, no weight, eps 0). CHUNK_THREADS: the chunk
// kernel's block (default 256); UNALIGNED=1: inputs off 16-byte boundaries; TICKET=1: the chunk
// kernel sums the parts itself (attention_ticket.py: it takes a count per row block and the
// output after its own outputs) and no sum kernel runs; SUM_SMEM, GROW: below; TRACE=1: the
// timestamps of a chunk kernel from attention_trace.py.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "generated_kernels.cuh"
#include "harness.cuh"
int main(int argc, char **argv) {
  const char *name = argv[1];
  const int heads = atoi(argv[2]), rows = atoi(argv[3]), depth = 64, keys = 4096;
  const unsigned cg[3] = {unsigned(atoi(argv[4])), unsigned(atoi(argv[5])), unsigned(atoi(argv[6]))};
  const unsigned csmem = atoi(argv[7]), sg[2] = {unsigned(atoi(argv[8])), unsigned(atoi(argv[9]))};
  const bool normalize = atoi(argv[10]) != 0;
  cudaFree(0);
  const CUfunction cf = load_generated(name, "chunk", csmem), sf = load_generated(name, "sum", 0);
  // Inputs: Q [heads, rows, depth], K [heads, depth, keys], V [heads, keys, depth], uniform in
  // [-1, 1] (K scaled by 1/4 so that the scores stay in a few units, as a softmax's do).
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const size_t nq = size_t(heads) * rows * depth, nk = size_t(heads) * depth * keys, no = nq;
  std::vector<__half> hq(nq), hk(nk), hv(nk);
  for (auto &x : hq) x = __float2half(u(rng));
  for (auto &x : hk) x = __float2half(u(rng) * 0.25f);
  // GROW=1: K's columns scaled up along the keys, 1 to 16 times, so that later keys' scores
  // pass the rows' first maxima by far (the kernels' offsets move in later iterations too).
  if (getenv("GROW") && atoi(getenv("GROW")) != 0) {
    for (size_t i = 0; i < nk; ++i) hk[i] = __float2half(__half2float(hk[i]) * (1.0f + 15.0f * float(i % keys) / keys));
  }
  for (auto &x : hv) x = __float2half(u(rng));
  void *q, *k, *v, *l, *o, *out;
  cudaMalloc(&q, nq * 2 + 16);
  cudaMalloc(&k, nk * 2 + 16);
  cudaMalloc(&v, nk * 2 + 16);
  cudaMalloc(&l, 64 << 20);
  cudaMalloc(&o, 64 << 20);
  cudaMalloc(&out, no * 2);
  // UNALIGNED=1: Q, K and V start 2 bytes past a 16-byte boundary (the kernels' paths without
  // 16-byte copies).
  if (getenv("UNALIGNED") && atoi(getenv("UNALIGNED")) != 0) {
    for (void **p : {&q, &k, &v}) *p = static_cast<char *>(*p) + 2;
  }
  cudaMemcpy(q, hq.data(), nq * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(k, hk.data(), nk * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(v, hv.data(), nk * 2, cudaMemcpyHostToDevice);
  cudaMemset(out, 0xff, no * 2);  // NaN until written
  const bool ticket = getenv("TICKET") && atoi(getenv("TICKET")) != 0;
  void *tickets;
  cudaMalloc(&tickets, 4096 * 4);
  cudaMemset(tickets, 0, 4096 * 4);
  void *cargs[] = {&q, &k, &v, &l, &o, &tickets, &out}, *sargs[] = {&l, &o, &out};
  const unsigned cthreads = getenv("CHUNK_THREADS") ? atoi(getenv("CHUNK_THREADS")) : 256;
  auto chunk_run = [&] { CK(cuLaunchKernel(cf, cg[0], cg[1], cg[2], cthreads, 1, 1, csmem, 0, cargs, nullptr)); };
  auto sum_run = [&] { CK(cuLaunchKernel(sf, sg[0], sg[1], 1, 256, 1, 1, 0, 0, sargs, nullptr)); };
  // As the plugin launches the sum: a programmatic dependent of the chunk kernel.
  CUlaunchAttribute dependent{};
  dependent.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  dependent.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig sum_config{};
  sum_config.gridDimX = sg[0], sum_config.gridDimY = sg[1], sum_config.gridDimZ = 1;
  sum_config.blockDimX = 256, sum_config.blockDimY = sum_config.blockDimZ = 1;
  sum_config.attrs = &dependent, sum_config.numAttrs = 1;
  // SUM_SMEM: dynamic shared memory the dependent sum asks for (none of it used), to bound how
  // many of its blocks a multiprocessor takes.
  sum_config.sharedMemBytes = getenv("SUM_SMEM") ? atoi(getenv("SUM_SMEM")) : 0;
  CK(cuFuncSetAttribute(sf, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sum_config.sharedMemBytes));
  auto sum_dependent = [&] { CK(cuLaunchKernelEx(&sum_config, sf, sargs, nullptr)); };
  chunk_run();
  if (!ticket) sum_run();
  CK(cuCtxSynchronize());
  std::vector<__half> got(no);
  cudaMemcpy(got.data(), out, no * 2, cudaMemcpyDeviceToHost);
  // float64 reference: O = softmax-free attention exp(Q·K) V / Σ exp(Q·K), Q rms-normalized
  // for qknorm; the error is ‖got − ref‖ / ‖ref‖.
  double err2 = 0, ref2 = 0;
  std::vector<double> s(keys), qd(depth);
  for (int h = 0; h < heads; ++h) {
    for (int i = 0; i < rows; ++i) {
      double ms = 0;
      for (int d = 0; d < depth; ++d) {
        qd[d] = __half2float(hq[(size_t(h) * rows + i) * depth + d]);
        ms += qd[d] * qd[d];
      }
      if (normalize)
        for (int d = 0; d < depth; ++d) qd[d] /= std::sqrt(ms / depth);
      double total = 0;
      for (int j = 0; j < keys; ++j) {
        double a = 0;
        for (int d = 0; d < depth; ++d) a += qd[d] * __half2float(hk[(size_t(h) * depth + d) * keys + j]);
        s[j] = std::exp(a);
        total += s[j];
      }
      for (int c = 0; c < depth; ++c) {
        double acc = 0;
        for (int j = 0; j < keys; ++j) acc += s[j] * __half2float(hv[(size_t(h) * keys + j) * depth + c]);
        const double ref = acc / total, g = __half2float(got[(size_t(h) * rows + i) * depth + c]);
        err2 += (g - ref) * (g - ref);
        ref2 += ref * ref;
      }
    }
  }
  printf("%-8s rel. error %.2e\n", name, std::sqrt(err2 / ref2));
  printf("%-8s chunk        %.2f\n", name, time_us(chunk_run));
  if (!ticket) {
    printf("%-8s sum          %.2f\n", name, time_us(sum_run));
    printf("%-8s chunk + sum  %.2f\n", name, time_us([&] {
             chunk_run();
             sum_run();
           }));
    printf("%-8s chunk + sum, dependent launch  %.2f\n", name, time_us([&] {
             chunk_run();
             sum_dependent();
           }));
  }
  // TRACE=1: the chunk kernel once more after the flush, then the timestamps that
  // attention_trace.py's kernels leave in the ticket buffer.
  if (getenv("TRACE") && atoi(getenv("TRACE")) != 0) {
    const unsigned blocks = cg[0] * cg[1] * cg[2];
    std::vector<unsigned long long> tr(1000 + 2 * blocks);
    time_us([&] {
      cudaMemset(tickets, 0, tr.size() * 8);
      chunk_run();
    });
    cudaMemcpy(tr.data(), tickets, tr.size() * 8, cudaMemcpyDeviceToHost);
    unsigned long long g0 = ~0ull, g1 = 0;
    for (unsigned b = 0; b < blocks; ++b) g0 = std::min(g0, tr[1000 + b]), g1 = std::max(g1, tr[1000 + blocks + b]);
    std::vector<double> starts, ends;
    for (unsigned b = 0; b < blocks; ++b)
      starts.push_back((tr[1000 + b] - g0) * 1e-3), ends.push_back((tr[1000 + blocks + b] - g0) * 1e-3);
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    printf("blocks' starts (us after the first): min %.2f median %.2f max %.2f; ends: min %.2f median %.2f max %.2f\n",
           starts[0], starts[blocks / 2], starts.back(), ends[0], ends[blocks / 2], ends.back());
    for (int slot = 0; slot < 6; ++slot) {
      const unsigned long long *t = tr.data() + slot * 100;
      if (t[98] == 0) continue;
      printf("block %d warp %d: start %.2f us, %llu cycles, %.3f GHz\n", slot / 3, slot % 3 * 4, (t[97] - g0) * 1e-3,
             t[98], double(t[98]) / double(t[99] - t[97]));
      for (int it = 0; it < 8; ++it) {
        printf("  it %d:", it);
        for (int e = 0; e < 11; ++e) printf(" %6llu", t[it * 12 + e]);
        printf("\n");
      }
    }
  }
  printf("%-8s %s\n", name, cudaGetErrorString(cudaDeviceSynchronize()));
}
