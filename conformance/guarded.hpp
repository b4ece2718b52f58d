// Memory for checking what a plugin reads and writes around a struct.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace yirage::conformance {

// `size` bytes that end exactly where an inaccessible page begins: a plugin that reads or
// writes one byte past them crashes (the runner reports Crash) instead of going unnoticed.
class GuardPage {
 public:
  explicit GuardPage(size_t size) : size_(size) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    pages_ = (size + page - 1) / page * page + page;
    base_ = static_cast<uint8_t *>(mmap(nullptr, pages_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    mprotect(base_ + pages_ - page, page, PROT_NONE);
    data_ = base_ + pages_ - page - size;
  }
  ~GuardPage() { munmap(base_, pages_); }
  GuardPage(const GuardPage &) = delete;
  GuardPage &operator=(const GuardPage &) = delete;

  // Copies the first `size` bytes of `object` in and returns the address.
  template <class T>
  T *hold(const T &object) {
    std::memcpy(data_, &object, size_ < sizeof object ? size_ : sizeof object);
    return reinterpret_cast<T *>(data_);
  }

 private:
  size_t size_, pages_;
  uint8_t *base_;
  uint8_t *data_;
};

// A struct followed by `tail` canary bytes; untouched() says whether the canary survived.
template <class T>
class WithTail {
 public:
  static constexpr uint8_t kCanary = 0xA5;
  explicit WithTail(size_t tail) : bytes_(sizeof(T) + tail, kCanary) { std::memset(bytes_.data(), 0, sizeof(T)); }
  T *get() { return reinterpret_cast<T *>(bytes_.data()); }
  size_t size() const { return bytes_.size(); }
  bool untouched() const {
    for (size_t i = sizeof(T); i < bytes_.size(); ++i) {
      if (bytes_[i] != kCanary) return false;
    }
    return true;
  }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace yirage::conformance
