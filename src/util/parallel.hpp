// parallel_for: the one way the core spreads independent work over threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace yirage {

// The number of threads to use when the caller did not say: the hardware's, at least 1.
inline int default_thread_count() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// Calls body(i) for i in [0, n) on up to `threads` threads (the calling thread included). Each
// thread takes the next index not yet taken, so items of very different cost (a search's tasks:
// one may hold most of its states) keep every thread busy until the last ones. After a call
// throws no thread takes a new index; the first exception is rethrown here once all threads
// have finished.
template <class Body>
void parallel_for(int64_t n, int threads, Body body) {
  const int64_t workers = std::clamp<int64_t>(threads, 1, std::max<int64_t>(n, 1));
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&] {
    try {
      for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
           i = next.fetch_add(1, std::memory_order_relaxed)) {
        body(i);
      }
    } catch (...) {
      next.store(n, std::memory_order_relaxed);
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers - 1));
  for (int64_t w = 1; w < workers; ++w) pool.emplace_back(run);
  run();
  for (std::thread &t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace yirage
