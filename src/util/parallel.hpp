// parallel_for: the one way the core spreads independent work over threads.
#pragma once

#include <algorithm>
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

// Calls body(i) for i in [0, n) on up to `threads` threads (the calling thread included), each
// taking a contiguous range. The first exception thrown by any call is rethrown here after all
// threads have finished.
template <class Body>
void parallel_for(int64_t n, int threads, Body body) {
  const int64_t workers = std::clamp<int64_t>(threads, 1, std::max<int64_t>(n, 1));
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&](int64_t w) {
    try {
      for (int64_t i = n * w / workers; i < n * (w + 1) / workers; ++i) body(i);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers - 1));
  for (int64_t w = 1; w < workers; ++w) pool.emplace_back(run, w);
  run(0);
  for (std::thread &t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace yirage
