// Device memory that a launch needs besides its operands (cuBLASLt's workspace, a generated
// kernel's: CudaKernel::workspace_bytes), one allocation per stream: launches on one stream run
// in order and may share it, launches on two streams at once must not. Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "driver.hpp"

namespace yirage::cuda {

class StreamWorkspaces {
 public:
  // `what` names the memory in errors; `zeroed`: each workspace is set to zeros on its stream
  // before its first use (a kernel that leaves it so may then rely on zeros).
  StreamWorkspaces(std::string what, bool zeroed) : what_(std::move(what)), zeroed_(zeroed) {}
  StreamWorkspaces(const StreamWorkspaces &) = delete;
  StreamWorkspaces &operator=(const StreamWorkspaces &) = delete;

  // `stream`'s workspace of `bytes` (the same for every call of one owner), allocated at its
  // first use; throws (NativeError: cuMemAlloc's OUT_OF_MEMORY) with nothing kept or queued.
  CUdeviceptr get(const Driver &driver, CUstream stream, size_t bytes);
  // Frees them all; the device context must be current.
  void free_all(const Driver &driver);

 private:
  std::string what_;
  bool zeroed_;
  std::mutex mutex_;
  std::map<CUstream, CUdeviceptr> by_stream_;
};

}  // namespace yirage::cuda
