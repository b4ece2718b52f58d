#include "stream_workspaces.hpp"

namespace yirage::cuda {

CUdeviceptr StreamWorkspaces::get(const Driver &driver, CUstream stream, size_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto found = by_stream_.find(stream);
  if (found != by_stream_.end()) return found->second;
  const size_t words = (bytes + 3) / 4;  // whole words, for the memset
  CUdeviceptr workspace = 0;
  driver.check(driver.cuMemAlloc(&workspace, words * 4),
               "cuMemAlloc of " + what_ + " of " + std::to_string(bytes) + " bytes");
  if (zeroed_) {
    const CUresult r = driver.cuMemsetD32Async(workspace, 0, words, stream);
    if (r != CUDA_SUCCESS) {
      driver.cuMemFree(workspace);
      driver.check(r, "cuMemsetD32Async of " + what_);
    }
  }
  by_stream_[stream] = workspace;
  return workspace;
}

void StreamWorkspaces::free_all(const Driver &driver) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &[stream, workspace] : by_stream_) driver.cuMemFree(workspace);
  by_stream_.clear();
}

}  // namespace yirage::cuda
