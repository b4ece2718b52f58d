#include "thread_pool.hpp"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace yirage::cpu {
namespace {

// The most threads a pool runs (chunk numbers are 16 bits: 4096 × 4 fit).
constexpr int kMaxThreads = 4096;
}  // namespace

ThreadPool::ThreadPool(int threads)
    : threads_(std::clamp(threads, 1, kMaxThreads)), slots_(new Slot[static_cast<size_t>(threads_)]) {}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  job_.fetch_add(1, std::memory_order_release);
  job_.notify_all();
  for (std::thread &t : workers_) t.join();
}

void ThreadPool::parallel_for_entry(void *pool, int64_t count, int64_t grain, Task task, void *context) {
  static_cast<ThreadPool *>(pool)->parallel_for(count, grain, task, context);
}

int ThreadPool::started_workers() const {
  return static_cast<int>(workers_.size());
}

void ThreadPool::start_workers() {
  // Workers take no signals: the embedding process's handlers run on its own threads.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  for (int i = 1; i < threads_; ++i) {
    try {
      workers_.emplace_back([this, i] { work(i); });
      pthread_setname_np(workers_.back().native_handle(), "yirage-cpu");
    } catch (const std::system_error &) {
      break;  // fewer workers: the others take their chunks
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void ThreadPool::work(int self) {
  uint32_t seen = 0;  // workers start before the first job is published (job 1)
  for (;;) {
    uint32_t job = job_.load(std::memory_order_acquire);
    if (job == seen) {
      spin_until([&] { return (job = job_.load(std::memory_order_acquire)) != seen; });
      while (job == seen) {
        job_.wait(seen, std::memory_order_acquire);
        job = job_.load(std::memory_order_acquire);
      }
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = job;
    run_chunks(job, self);
  }
}

void ThreadPool::run_chunks(uint32_t job, int self) {
  // Its own chunks first, then what is left of the others'.
  for (int k = 0; k < threads_; ++k) {
    std::atomic<uint64_t> &claim = slots_[static_cast<size_t>((self + k) % threads_)].claim;
    uint64_t c = claim.load(std::memory_order_acquire);
    for (;;) {
      const uint32_t end = static_cast<uint32_t>(c >> 16) & 0xffff, next = c & 0xffff;
      if (static_cast<uint32_t>(c >> 32) != job || next >= end) break;
      if (!claim.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      // The job's fields are this job's: the next is written only after every chunk of this one ran.
      const int64_t chunks = chunks_;
      task_(context_, count_ * next / chunks, count_ * (next + 1) / chunks);
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) done_.notify_all();
      c = claim.load(std::memory_order_acquire);
    }
  }
}

void ThreadPool::parallel_for(int64_t count, int64_t grain, Task task, void *context) {
  if (count <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (threads_ == 1 || count / 2 < grain) {
    task(context, 0, count);
    return;
  }
  std::unique_lock<std::mutex> lock(loop_, std::try_to_lock);
  if (!lock.owns_lock()) {
    task(context, 0, count);  // another thread's loop has the workers
    return;
  }
  std::call_once(started_, [this] { start_workers(); });
  const auto chunks = static_cast<uint32_t>(chunk_count(count, grain, threads_));
  task_ = task;
  context_ = context;
  count_ = count;
  chunks_ = chunks;
  done_.store(0, std::memory_order_relaxed);
  const uint32_t job = job_.load(std::memory_order_relaxed) + 1;
  // Thread t's chunks are the t-th share of the loop, the same in every loop of the same size: a
  // kernel reads the part of a tensor that the same thread wrote in the kernel before, from its
  // own core's cache.
  for (int t = 0; t < threads_; ++t) {
    const uint64_t begin = chunks * static_cast<uint64_t>(t) / static_cast<uint64_t>(threads_);
    const uint64_t end = chunks * static_cast<uint64_t>(t + 1) / static_cast<uint64_t>(threads_);
    slots_[static_cast<size_t>(t)].claim.store(static_cast<uint64_t>(job) << 32 | end << 16 | begin,
                                               std::memory_order_release);
  }
  job_.store(job, std::memory_order_release);
  job_.notify_all();
  run_chunks(job, 0);
  // Only chunks a worker took are left: wait for those.
  uint32_t done = done_.load(std::memory_order_acquire);
  if (done != chunks) spin_until([&] { return (done = done_.load(std::memory_order_acquire)) == chunks; });
  while (done != chunks) {
    done_.wait(done, std::memory_order_acquire);
    done = done_.load(std::memory_order_acquire);
  }
}

namespace {

// `text` as an integer in [1, kMaxThreads]; 0 when it is not one.
int positive(const std::string &text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return 0;
  const long n = std::strtol(text.c_str(), nullptr, 10);
  return n >= 1 ? static_cast<int>(std::min<long>(n, kMaxThreads)) : 0;
}

int affinity_count() {
  for (size_t cpus = 1024; cpus <= 65536; cpus *= 4) {
    cpu_set_t *set = CPU_ALLOC(cpus);
    if (set == nullptr) break;
    const size_t bytes = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(bytes, set);
    const int got = sched_getaffinity(0, bytes, set) == 0 ? CPU_COUNT_S(bytes, set) : -1;
    CPU_FREE(set);
    if (got > 0) return got;
    if (errno != EINVAL) break;  // EINVAL: the kernel's mask is larger than ours
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

int thread_count(std::string *out_source, std::string *out_warning) {
  std::string source, warning;
  int n = 0;
  for (const char *name : {"YIRAGE_CPU_THREADS", "OMP_NUM_THREADS"}) {
    const char *value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    std::string text = value;
    if (std::string(name) == "OMP_NUM_THREADS") text = text.substr(0, text.find(','));  // the outermost level
    n = positive(text);
    if (n > 0) {
      source = name;
      break;
    }
    warning = std::string("cpu: ") + name + "='" + value + "' is not a positive integer; ignored";
  }
  if (n == 0) {
    n = std::min(affinity_count(), kMaxThreads);
    source = "the CPUs this process may run on";
  }
  if (out_source) *out_source = source;
  if (out_warning) *out_warning = warning;
  return n;
}

}  // namespace yirage::cpu
