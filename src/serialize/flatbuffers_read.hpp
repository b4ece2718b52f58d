// Reading flatbuffers that come from outside the process (files, a plugin's host): flatbuffers
// reads 8-byte fields and vector elements with typed loads, and its verifier checks alignment
// relative to the buffer's start only, and for a vector only that of its 4-byte length prefix.
// Damaged bytes or an unaligned caller's buffer would make those loads misaligned (undefined
// behaviour, found by the fuzzers). Every reader of such bytes verifies an aligned copy and reads
// 8-byte vector elements through vector_of.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include <flatbuffers/flatbuffers.h>

namespace yirage::serialize {

// `size` bytes in 8-byte-aligned storage (the first `size` bytes of the result's data).
inline std::vector<uint64_t> aligned_copy(const void *bytes, size_t size) {
  std::vector<uint64_t> aligned((size + 7) / 8);
  if (size > 0) std::memcpy(aligned.data(), bytes, size);
  return aligned;
}

// A vector's elements, each read with memcpy (empty for an absent vector).
template <class T>
std::vector<T> vector_of(const flatbuffers::Vector<T> *v) {
  std::vector<T> out(v ? v->size() : 0);
  for (size_t i = 0; i < out.size(); ++i) {
    T value;
    std::memcpy(&value, v->Data() + i * sizeof(T), sizeof(T));
    out[i] = flatbuffers::EndianScalar(value);
  }
  return out;
}

}  // namespace yirage::serialize
