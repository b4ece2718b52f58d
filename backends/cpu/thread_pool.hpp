// The CPU backend's threads: a fixed number of workers that run a kernel's parallel loops
// together with the thread that launched it, and sleep when there is nothing to do.
//
// Why not OpenMP's runtime (which the kernels used before): libgomp's idle threads spin, by
// default for 300,000 iterations after every parallel region, and its wait policy
// (OMP_WAIT_POLICY, GOMP_SPINCOUNT) is read once from the environment when the library is
// loaded; in a process that embeds yirage (Python with PyTorch, a server) that has happened
// before yirage is loaded, so yirage cannot make it passive. And every OpenMP region ends in a
// barrier that waits for each thread of the team: one thread that the OS keeps off its core
// (another process busy there) held a 30 µs kernel for a whole time slice, milliseconds
// (issue #51).
//
// Here a loop is cut into chunks, a share of them per thread, the same share in every loop of
// the same size (so that data stays in the cache of the core that wrote it). Each thread takes
// its own chunks one at a time (an atomic counter), then what is left of the others'. The
// launching thread takes chunks too, and waits only for chunks already taken, never for a worker
// that has not woken: a worker that the OS keeps off its core costs its help, not the loop's
// time. Idle workers spin for a few microseconds (kSpinIterations), then sleep on a futex
// (std::atomic::wait), so that a busy machine's other processes get the cores and a woken worker,
// having slept, is scheduled promptly.
//
// Thread safety: parallel_for may be called from several threads at once; one loop runs on the
// workers at a time, and a loop that finds them busy runs on its caller alone (never more threads
// than the pool's). A task must not call parallel_for of the same pool.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace yirage::cpu {

// Chunks per thread: enough that a thread slowed down (another process on its core) leaves the
// others little to wait for, few enough that taking one costs nothing next to running it.
inline constexpr int64_t kChunksPerThread = 4;

// How many chunks a loop of `count` items (count > 0) is cut into for `threads` threads, each of
// at least `grain` items (grain ≥ 1): 1 where there are fewer than 2 × grain (the loop runs on
// one thread), else at most kChunksPerThread a thread. The pool and the parallel regions
// (parallel_region.hpp) cut loops alike.
inline int64_t chunk_count(int64_t count, int64_t grain, int64_t threads) {
  return count / 2 < grain ? 1 : std::min<int64_t>(count / grain, threads * kChunksPerThread);
}

// How long an idle thread spins before it sleeps: long enough to cover the gap between the
// parallel loops of one kernel, or of kernels launched back to back (waking a sleeping thread
// costs microseconds, a kernel's whole time where it is small), short enough to be nothing next
// to a time slice (milliseconds).
inline constexpr auto kSpin = std::chrono::microseconds(50);

// Spins until pred() or kSpin has passed; true when pred() held.
template <class Pred>
bool spin_until(Pred pred) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= until) return pred();
  }
}

class ThreadPool {
 public:
  // Runs items [begin, end) of a loop.
  using Task = void (*)(void *context, int64_t begin, int64_t end);

  // `threads` counts the launching thread: `threads - 1` workers, started by the first loop that
  // needs them. At least 1.
  explicit ThreadPool(int threads);
  // Wakes and joins the workers. No loop may be running.
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int threads() const { return threads_; }

  // Runs task(context, b, e) over consecutive ranges covering [0, count), each of at least
  // `grain` items (the last may be shorter), and returns when all have run. Fewer than 2 × grain
  // items run on the caller alone.
  void parallel_for(int64_t count, int64_t grain, Task task, void *context);

  // The same as a C function, for the generated kernels (KernelRuntime, compiler.hpp).
  static void parallel_for_entry(void *pool, int64_t count, int64_t grain, Task task, void *context);

  // How many workers have started (0 until a loop needed them); for tests.
  int started_workers() const;

 private:
  void start_workers();
  void work(int self);
  // Takes and runs chunks of job `job`, thread `self`'s own first, until none is left.
  void run_chunks(uint32_t job, int self);

  // Per thread (0: the launching thread), in one word: the job's number (high 32 bits), the end
  // of the thread's chunks (16 bits) and its next chunk to take (low 16 bits), so that nobody
  // takes a chunk of a job other than the one it read. A cache line each.
  struct alignas(64) Slot {
    std::atomic<uint64_t> claim{0};
  };

  const int threads_;
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::thread> workers_;
  std::once_flag started_;
  std::mutex loop_;  // held by the caller whose loop the workers run
  // Idle workers spin reading job_ (the job's number, what they sleep on); chunks run are counted
  // in done_. A cache line each.
  alignas(64) std::atomic<uint32_t> job_{0};
  alignas(64) std::atomic<uint32_t> done_{0};
  std::atomic<bool> stop_{false};
  // The current job, written before the slots publish it and read by whoever takes a chunk.
  Task task_ = nullptr;
  void *context_ = nullptr;
  int64_t count_ = 0;
  int64_t chunks_ = 0;
};

// The threads a CPU plugin instance uses, and why (for the device's description and the docs):
// $YIRAGE_CPU_THREADS when a positive integer; else $OMP_NUM_THREADS's first entry when a
// positive integer (as OpenMP programs read it); else the CPUs this process may run on
// (sched_getaffinity: taskset, cgroups' cpusets, a container's --cpuset-cpus). A setting that is
// not a positive integer is ignored, and `out_warning` says so.
int thread_count(std::string *out_source, std::string *out_warning);

}  // namespace yirage::cpu
