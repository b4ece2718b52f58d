// The watch records of persistent kernels (codegen/cuda_persistent.hpp): a few words of host
// memory the device writes where a launch's wait for a tile timed out and the launch was
// abandoned, one per executable, with the stream it last ran on. The instance keeps the list;
// synchronize() checks the records of the stream it waited for (all, for the whole device) and
// buffer_read() all of them, so that a hung dependency is reported as an error naming the kernel
// program rather than a hang of the host. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "driver.hpp"

namespace yirage::cuda {

class WatchRecords {
 public:
  struct Record {
    unsigned *host = nullptr;  // WatchRecord::kWords words, zero until a launch writes them
    CUdeviceptr device = 0;    // the same memory, for the kernel's yr_watch
  };
  // A record for the kernel program `name`, whose waits time out after `timeout_ms`.
  Record add(const Driver &driver, const std::string &name, int64_t timeout_ms);
  // Forgets and frees it; the device context must be current.
  void remove(const Driver &driver, const Record &record);
  // The record's kernel is launched on `stream` (where it runs: a recording's replay stream).
  void launched(const Record &record, CUstream stream);
  // Throws Error(kTimeout) saying what waited for what, for the first record a launch on
  // `stream` wrote (any stream where `every_stream`), which it clears (the kernel has readied its
  // workspace for the next launch already).
  void check(CUstream stream, bool every_stream);

 private:
  struct Entry {
    std::string name;
    int64_t timeout_ms = 0;
    CUstream stream = nullptr;  // of its last launch
  };
  std::mutex mutex_;
  std::map<unsigned *, Entry> records_;
};

}  // namespace yirage::cuda
