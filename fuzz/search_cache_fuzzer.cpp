// libFuzzer target: search-cache entries (search/result_cache.hpp), the bytes the superoptimizer
// reads back from its cache folder once their checksum matches. Whatever the bytes, the reader
// either returns an entry or throws CORRUPT_DATA or VERSION_MISMATCH; an entry it accepts writes
// back to bytes that read the same. Anything else (another error, a crash, a sanitizer report)
// is a bug.
#include <cstdint>
#include <cstdlib>

#include "search/result_cache.hpp"
#include "util/error.hpp"

namespace {

using yirage::Error;
using yirage::ErrorCode;
namespace search = yirage::search;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  search::CacheEntry entry;
  try {
    entry = search::cache_entry_from_bytes(data, size);
  } catch (const Error &e) {
    if (e.code() != ErrorCode::kCorruptData && e.code() != ErrorCode::kVersionMismatch) std::abort();
    return 0;
  }
  const std::vector<uint8_t> again = search::cache_entry_to_bytes(entry);
  const search::CacheEntry reread = search::cache_entry_from_bytes(again.data(), again.size());
  if (reread.request != entry.request || reread.candidates.size() != entry.candidates.size() ||
      search::cache_entry_to_bytes(reread) != again) {
    std::abort();
  }
  return 0;
}
