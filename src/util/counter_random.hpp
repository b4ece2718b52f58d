// Counter-based random numbers: value i of the stream `key` is a hash of (key, i) — splitmix64's
// i-th output from a state derived from the key — so any part of a stream can be made on any
// thread, and a tensor filled in parallel holds the same values whatever the thread count.
// Fingerprint trials and measurement inputs of large graphs (hundreds of millions of values)
// are filled this way; a sequential generator made them cost seconds.
#pragma once

#include <algorithm>
#include <cstdint>

#include "util/parallel.hpp"

namespace yirage {

// splitmix64's finalizer: a good 64-bit mixing function.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The key of stream `stream` of seed `seed` (streams of one seed are independent).
inline uint64_t random_key(uint64_t seed, uint64_t stream) {
  return mix64(mix64(seed) ^ (stream * 0xd1b54a32d192ed03ull));
}

// Value `index` of the stream with key `key`: uniform over 64 bits.
inline uint64_t counter_random(uint64_t key, uint64_t index) {
  return mix64(key + index * 0x9e3779b97f4a7c15ull);
}

// A uniform 64-bit value mapped onto [0, m) (Lemire's multiply-shift: bias below m / 2^64).
inline uint64_t below(uint64_t r, uint64_t m) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * m) >> 64);
}

// A uniform 64-bit value mapped onto [-1, 1) in steps of 2^-52.
inline double symmetric_unit(uint64_t r) {
  return static_cast<double>(r >> 11) * 0x1.0p-52 - 1.0;
}

// Calls fill(first, last) over [0, n) in chunks on up to `threads` threads; small ranges stay on
// the calling thread.
template <class Fill>
void fill_in_chunks(int64_t n, int threads, Fill fill) {
  constexpr int64_t kChunk = int64_t{1} << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, chunks > 1 ? threads : 1, [&](int64_t c) { fill(c * kChunk, std::min(n, (c + 1) * kChunk)); });
}

}  // namespace yirage
