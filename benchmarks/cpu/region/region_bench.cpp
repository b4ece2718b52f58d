// One parallel region against the pool, without the generated code (benchmarks/cpu/README.md,
// "Programs of several operators as one parallel region"): a chain of OPS elementwise loops over
// 64 × 1024 floats, and with "slow" one loop of two chunks, one of 400 µs (100 µs of the host
// between launches), each run apart (a pool job per loop) and as one region, on THREADS threads.
// usage: region_bench THREADS OPS [slow]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "parallel_region.hpp"
using namespace yirage::cpu;
static std::vector<float> x(65536), y(65536);
struct Ctx {
  int ops;
  bool slow;
};
template <class F>
void loop(const KernelRuntime *rt, int64_t count, int64_t grain, const F &body) {
  if (rt->in_region == 0 && count < 2 * grain) {
    body(0, count);
    return;
  }
  rt->parallel_for(
      rt->pool, count, grain, [](void *c, int64_t b, int64_t e) { (*static_cast<const F *>(c))(b, e); },
      const_cast<void *>(static_cast<const void *>(&body)));
}
static void spin_us(double us) {
  auto a = std::chrono::steady_clock::now();
  while (std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count() < us) {
  }
}
int body(void *c, const KernelRuntime *rt) {
  Ctx &cx = *static_cast<Ctx *>(c);
  if (cx.slow) {  // one loop of 2 chunks: chunk 0 400 us, chunk 1 10 us
    loop(rt, 2, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) spin_us(i == 0 ? 400 : 10);
    });
    return 0;
  }
  for (int k = 0; k < cx.ops; ++k) {
    float *in = k % 2 ? y.data() : x.data();
    float *out = k % 2 ? x.data() : y.data();
    loop(rt, 64, 16, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        for (int64_t i = 0; i < 1024; ++i) out[r * 1024 + i] = in[r * 1024 + i] * 0.5f + 0.1f;
    });
  }
  return 0;
}
int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2, ops = argc > 2 ? atoi(argv[2]) : 4;
  bool slow = argc > 3;
  ThreadPool pool(threads);
  KernelRuntime rt{ThreadPool::parallel_for_entry, &pool, nullptr, nullptr, run_region, 0};
  Ctx ctx{ops, slow};
  for (int round = 0; round < 2; ++round) {
    for (int mode = 0; mode < 2; ++mode) {
      std::vector<double> t;
      for (int i = 0; i < (slow ? 1000 : 3000); ++i) {
        auto a = std::chrono::steady_clock::now();
        if (mode == 0)
          body(&ctx, &rt);
        else
          run_region(&rt, body, &ctx);
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
        if (slow) spin_us(100);  // the host between launches
      }
      std::sort(t.begin(), t.end());
      printf("%s: median %.1f us, min %.1f, p90 %.1f, p99 %.1f\n", mode ? "region" : "apart ", t[t.size() / 2], t[0],
             t[t.size() * 9 / 10], t[t.size() * 99 / 100]);
    }
  }
}
