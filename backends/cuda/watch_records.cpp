#include "watch_records.hpp"

#include <atomic>

#include "cuda/codegen/cuda_persistent.hpp"
#include "util/error.hpp"

namespace yirage::cuda {

using codegen::cuda::WatchRecord;

WatchRecords::Record WatchRecords::add(const Driver &driver, const std::string &name, int64_t timeout_ms) {
  Record record;
  void *host = nullptr;
  driver.check(driver.cuMemHostAlloc(&host, WatchRecord::kWords * sizeof(unsigned), CU_MEMHOSTALLOC_DEVICEMAP),
               "cuMemHostAlloc of a persistent kernel's watch record");
  record.host = static_cast<unsigned *>(host);
  for (int w = 0; w < WatchRecord::kWords; ++w) record.host[w] = 0u;
  const CUresult mapped = driver.cuMemHostGetDevicePointer(&record.device, host, 0);
  if (mapped != CUDA_SUCCESS) {
    driver.cuMemFreeHost(host);
    driver.check(mapped, "cuMemHostGetDevicePointer of a persistent kernel's watch record");
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  records_[record.host] = {name, timeout_ms, nullptr};
  return record;
}

void WatchRecords::remove(const Driver &driver, const Record &record) {
  if (record.host == nullptr) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    records_.erase(record.host);
  }
  driver.cuMemFreeHost(record.host);
}

void WatchRecords::launched(const Record &record, CUstream stream) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto found = records_.find(record.host);
  if (found != records_.end()) found->second.stream = stream;
}

void WatchRecords::check(CUstream stream, bool every_stream) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &[host, entry] : records_) {
    volatile unsigned *const w = host;
    if (w[WatchRecord::kSet] == 0u || (!every_stream && entry.stream != stream)) continue;
    std::atomic_thread_fence(std::memory_order_acquire);
    const std::string message =
        "cuda: kernel program \"" + entry.name + "\" (operators in one launch): a block of operator " +
        std::to_string(w[WatchRecord::kOperator]) + " (task " + std::to_string(w[WatchRecord::kTask]) +
        ") waited more than " + std::to_string(entry.timeout_ms) + " ms for " +
        (w[WatchRecord::kTile] == WatchRecord::kEveryTile ? std::string("the blocks")
                                                          : "block " + std::to_string(w[WatchRecord::kTile])) +
        " of operator " + std::to_string(w[WatchRecord::kWaitedFor]) +
        "; the launch was abandoned and its outputs are not written (YIRAGE_CUDA_WAIT_TIMEOUT_MS)";
    for (int i = 0; i < WatchRecord::kWords; ++i) w[i] = 0u;
    throw Error(ErrorCode::kTimeout, message);
  }
}

}  // namespace yirage::cuda
