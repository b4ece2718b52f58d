// The parallel region of a program of several operators (parallel_region.hpp): every item of
// every loop runs once, a loop starts only after the one before it has run (each reads what the
// one before wrote), empty loops run nothing, small loops run as one chunk, more loops than the
// phases in flight, threads that start late, a failed thread's result reaches the caller, and a
// region whose workers are busy runs on its caller alone, each loop in one call.
#include "parallel_region.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace yirage::cpu {
namespace {

// The body's loops call the runtime as the generated programs do (the prelude's yr_parallel_for).
template <class F>
void shared_loop(const KernelRuntime *rt, int64_t count, int64_t grain, const F &body) {
  rt->parallel_for(
      rt->pool, count, grain, [](void *c, int64_t b, int64_t e) { (*static_cast<const F *>(c))(b, e); },
      const_cast<void *>(static_cast<const void *>(&body)));
}

// A chain of loops over one array: loop l adds 1 to each item and reads its neighbour as loop
// l - 1 left it, so an item run before the loop before it ended sees a wrong neighbour. Between
// loops, an empty one. `lag`: every thread but the caller starts its run of the body late, after
// more loops than the phases in flight at once.
struct Chain {
  int64_t items, loops, grain;
  std::vector<std::atomic<int64_t>> value, runs, calls;  // calls: a loop's task calls
  std::atomic<int64_t> wrong{0}, bodies{0};
  std::chrono::milliseconds lag{0};
  std::thread::id caller = std::this_thread::get_id();
  Chain(int64_t items, int64_t loops, int64_t grain)
      : items(items),
        loops(loops),
        grain(grain),
        value(static_cast<size_t>(items)),
        runs(static_cast<size_t>(items * loops)),
        calls(static_cast<size_t>(loops)) {}
};

int chain_body(void *context, const KernelRuntime *rt) {
  auto &c = *static_cast<Chain *>(context);
  EXPECT_EQ(rt->in_region, 1);
  EXPECT_EQ(rt->region, nullptr);
  c.bodies.fetch_add(1);
  if (std::this_thread::get_id() != c.caller) std::this_thread::sleep_for(c.lag);
  for (int64_t l = 0; l < c.loops; ++l) {
    shared_loop(rt, 0, 1, [&](int64_t, int64_t) { c.wrong.fetch_add(1); });  // runs nothing
    shared_loop(rt, c.items, c.grain, [&](int64_t begin, int64_t end) {
      c.calls[static_cast<size_t>(l)].fetch_add(1);
      for (int64_t i = begin; i < end; ++i) {
        const int64_t neighbour = c.value[static_cast<size_t>((i + 1) % c.items)].load();
        // Loop l finds its neighbour at l (not yet run by this loop) or l + 1 (already run).
        if (neighbour != l && neighbour != l + 1) c.wrong.fetch_add(1);
        c.value[static_cast<size_t>(i)].fetch_add(1);
        c.runs[static_cast<size_t>(l * c.items + i)].fetch_add(1);
      }
    });
  }
  return 0;
}

KernelRuntime runtime_of(ThreadPool &pool) {
  return {ThreadPool::parallel_for_entry, &pool, nullptr, nullptr, run_region, 0};
}

void expect_chain_ran(const Chain &c, const std::string &what) {
  for (int64_t i = 0; i < c.items; ++i) ASSERT_EQ(c.value[static_cast<size_t>(i)].load(), c.loops) << what;
  for (const std::atomic<int64_t> &r : c.runs) ASSERT_EQ(r.load(), 1) << what;
  EXPECT_EQ(c.wrong.load(), 0) << what;
}

TEST(ParallelRegion, RunsEveryLoopOnceAfterTheOneBefore) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    const KernelRuntime rt = runtime_of(pool);
    // 40 loops: more than the phases in flight at once.
    for (int64_t items : {1, 5, 64, 4099}) {
      for (int64_t grain : {1, 16}) {
        Chain chain(items, 40, grain);
        EXPECT_EQ(run_region(&rt, chain_body, &chain), 0);
        expect_chain_ran(chain, std::to_string(threads) + " threads, " + std::to_string(items) + " items, grain " +
                                    std::to_string(grain));
      }
    }
  }
}

TEST(ParallelRegion, SmallLoopsRunOnOneThread) {
  ThreadPool pool(4);
  const KernelRuntime rt = runtime_of(pool);
  for (int round = 0; round < 50; ++round) {
    Chain chain(3, 5, 100);  // fewer than 2 × grain: one chunk, one thread
    ASSERT_EQ(run_region(&rt, chain_body, &chain), 0);
    expect_chain_ran(chain, "round " + std::to_string(round));
    for (const std::atomic<int64_t> &calls : chain.calls) ASSERT_EQ(calls.load(), 1) << "round " << round;
  }
}

// Threads that start the body late (asleep when the region began, or kept off their cores) find
// the loops before them done, more of them than the phases in flight at once, and skip them.
TEST(ParallelRegion, ThreadsThatStartLateSkipWhatRan) {
  ThreadPool pool(4);
  const KernelRuntime rt = runtime_of(pool);
  for (int round = 0; round < 5; ++round) {
    Chain chain(640, 40, 8);
    chain.lag = std::chrono::milliseconds(2);
    ASSERT_EQ(run_region(&rt, chain_body, &chain), 0);
    expect_chain_ran(chain, "round " + std::to_string(round));
  }
}

TEST(ParallelRegion, AFailedThreadFailsTheRegion) {
  ThreadPool pool(3);
  const KernelRuntime rt = runtime_of(pool);
  struct Failing {
    std::atomic<int> failures{0};
  } failing;
  const auto body = [](void *context, const KernelRuntime *runtime) {
    auto &f = *static_cast<Failing *>(context);
    int failed = 0;
    // Whoever takes item 7 "cannot allocate".
    shared_loop(runtime, 64, 1, [&](int64_t begin, int64_t end) {
      if (begin <= 7 && 7 < end) {
        failed = 1;
        f.failures.fetch_add(1);
      }
    });
    return failed;
  };
  EXPECT_EQ(run_region(&rt, body, &failing), 1);
  EXPECT_EQ(failing.failures.load(), 1);
}

TEST(ParallelRegion, RunsOnItsCallerWhileTheWorkersAreBusy) {
  ThreadPool pool(3);
  const KernelRuntime rt = runtime_of(pool);
  std::atomic<bool> started{false}, release{false};
  struct Hold {
    std::atomic<bool> *started, *release;
  } hold{&started, &release};
  // Another thread's loop holds the workers until the region has run.
  std::thread other([&] {
    pool.parallel_for(
        64, 1,
        [](void *context, int64_t, int64_t) {
          auto &h = *static_cast<Hold *>(context);
          h.started->store(true);
          while (!h.release->load()) std::this_thread::yield();
        },
        &hold);
  });
  while (!started.load()) std::this_thread::yield();
  Chain chain(1000, 12, 1);
  EXPECT_EQ(run_region(&rt, chain_body, &chain), 0);
  release.store(true);
  other.join();
  expect_chain_ran(chain, "busy workers");
  EXPECT_EQ(chain.bodies.load(), 1);  // on the caller, once; each loop in one call
  for (const std::atomic<int64_t> &calls : chain.calls) EXPECT_EQ(calls.load(), 1);
}

}  // namespace
}  // namespace yirage::cpu
