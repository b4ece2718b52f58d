#include "generated_kernels.hpp"

namespace yirage::cuda {

std::shared_ptr<const GeneratedKernel> GeneratedKernels::get(int32_t device, const void *program, size_t size,
                                                             const std::function<GeneratedKernel()> &generate) {
  std::string key = std::to_string(device) + ":";
  key.append(static_cast<const char *>(program), size);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = index_.find(key);
    if (found != index_.end()) {
      entries_.splice(entries_.begin(), entries_, found->second);
      const Entry &e = *found->second;
      if (!e.kernel) throw Error(e.code, e.message);
      return e.kernel;
    }
  }
  // Generated outside the lock: two threads asking for the same new program both generate it
  // (the same source), which is rarer and cheaper than holding every other program up.
  Entry e{key, nullptr, ErrorCode::kInternal, ""};
  try {
    e.kernel = std::make_shared<const GeneratedKernel>(generate());
  } catch (const Error &error) {
    e.code = error.code();
    e.message = error.what();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (index_.count(key) == 0) {
      entries_.push_front(e);
      index_[key] = entries_.begin();
      while (entries_.size() > capacity_) {
        index_.erase(entries_.back().key);
        entries_.pop_back();
      }
    }
  }
  if (!e.kernel) throw Error(e.code, e.message);
  return e.kernel;
}

size_t GeneratedKernels::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace yirage::cuda
