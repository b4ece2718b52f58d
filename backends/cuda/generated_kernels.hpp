// The kernels the CUDA plugin generated for the programs it was asked about, so that supports(),
// estimate() and compile() of one candidate generate its source once. Keyed by the device and
// the program's bytes; at most `capacity` entries, the least recently used leaving first. A
// generator's refusal (Error) is kept too and thrown again. Thread-safe: the search asks from
// several threads.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/codegen/cuda_source.hpp"
#include "util/error.hpp"

namespace yirage::cuda {

struct GeneratedKernel {
  codegen::CudaKernel kernel;
  std::vector<size_t> input_bytes, output_bytes;  // what a launch's buffers must hold
  std::string name;                               // the program's, for errors
};

class GeneratedKernels {
 public:
  explicit GeneratedKernels(size_t capacity = 256) : capacity_(capacity) {}

  // The kernel for `program` (`size` bytes) on `device`, made by `generate` the first time.
  std::shared_ptr<const GeneratedKernel> get(int32_t device, const void *program, size_t size,
                                             const std::function<GeneratedKernel()> &generate);
  size_t size() const;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const GeneratedKernel> kernel;  // null where generation failed
    ErrorCode code = ErrorCode::kInternal;
    std::string message;
  };
  mutable std::mutex mutex_;
  size_t capacity_;
  std::list<Entry> entries_;  // most recently used first
  std::map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace yirage::cuda
