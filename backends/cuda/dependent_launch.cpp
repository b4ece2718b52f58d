#include "dependent_launch.hpp"

namespace yirage::cuda {

int64_t dependent_shared_bytes(int64_t blocks, int64_t multiprocessors, int64_t shared_bytes, int64_t max_shared_bytes,
                               const std::function<int64_t(int64_t)> &blocks_per_multiprocessor) {
  if (blocks <= 0 || multiprocessors <= 0) return shared_bytes;
  const int64_t spread = (blocks + multiprocessors - 1) / multiprocessors;
  if (shared_bytes >= max_shared_bytes || blocks_per_multiprocessor(shared_bytes) <= spread) return shared_bytes;
  // Occupancy falls as shared memory grows: the least KiB step that reaches `spread`.
  constexpr int64_t kStep = 1024;
  int64_t low = shared_bytes / kStep + 1, high = max_shared_bytes / kStep;
  if (high < low || blocks_per_multiprocessor(high * kStep) > spread) return max_shared_bytes;
  while (low < high) {
    const int64_t middle = low + (high - low) / 2;
    if (blocks_per_multiprocessor(middle * kStep) <= spread) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low * kStep;
}

}  // namespace yirage::cuda
