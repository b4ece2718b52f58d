// libFuzzer target: search-cache entries (search/result_cache.hpp), the bytes the superoptimizer
// reads back from its cache folder once their checksum matches, and the partial results of a
// sharded search (search/shards.hpp), the same format with units, which come from other
// processes. Whatever the bytes, the cache reader either returns an entry or throws CORRUPT_DATA
// or VERSION_MISMATCH, and an entry it accepts writes back to bytes that read the same; a plan
// either takes the bytes as a partial result of its own, which it writes back to the same bytes,
// or refuses them with CORRUPT_DATA, VERSION_MISMATCH or INVALID_ARGUMENT (another plan's).
// Anything else (another error, a crash, a sanitizer report) is a bug. The corpus holds a
// partial result of the plan below (shard_partial.yrsc: `search_cache_fuzzer --write-seed`
// writes it again when the plan's request changes).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "search/result_cache.hpp"
#include "search/shards.hpp"
#include "target/target.hpp"
#include "util/error.hpp"

namespace {

using yirage::Error;
using yirage::ErrorCode;
namespace search = yirage::search;

// A plan of RMSNorm then a product, small enough to plan in milliseconds.
const search::ShardedSearch &plan() {
  static const search::ShardedSearch *p = [] {
    yirage::KernelGraph g;
    const yirage::TensorId x = g.new_input({2, 64}, yirage::DType::kFloat16);
    const yirage::TensorId w = g.new_input({64, 96}, yirage::DType::kFloat16);
    g.mark_output(g.matmul(g.rms_norm(x, {64}, 1e-6, std::nullopt), w));
    search::SearchOptions o;
    o.target = yirage::targets::builtin_target("h100");
    o.threads = 1;
    return new search::ShardedSearch(g, o, 4);
  }();
  return *p;
}

void check_entry(const uint8_t *data, size_t size) {
  search::CacheEntry entry;
  try {
    entry = search::cache_entry_from_bytes(data, size);
  } catch (const Error &e) {
    if (e.code() != ErrorCode::kCorruptData && e.code() != ErrorCode::kVersionMismatch) std::abort();
    return;
  }
  const std::vector<uint8_t> again = search::cache_entry_to_bytes(entry);
  const search::CacheEntry reread = search::cache_entry_from_bytes(again.data(), again.size());
  if (reread.request != entry.request || reread.candidates.size() != entry.candidates.size() ||
      search::cache_entry_to_bytes(reread) != again) {
    std::abort();
  }
}

void check_partial(const uint8_t *data, size_t size) {
  search::ShardResult shard;
  try {
    shard = plan().from_bytes(data, size);
  } catch (const Error &e) {
    if (e.code() != ErrorCode::kCorruptData && e.code() != ErrorCode::kVersionMismatch &&
        e.code() != ErrorCode::kInvalidArgument) {
      std::abort();
    }
    return;
  }
  const std::vector<uint8_t> again = plan().to_bytes(shard);
  if (plan().to_bytes(plan().from_bytes(again.data(), again.size())) != again) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp((*argv)[i], "--write-seed") != 0) continue;
    std::vector<uint32_t> all;
    for (size_t u = 0; u < plan().num_units(); ++u) all.push_back(static_cast<uint32_t>(u));
    const std::vector<uint8_t> bytes = plan().to_bytes(plan().run(all));
    FILE *f = std::fopen("shard_partial.yrsc", "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) std::abort();
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_entry(data, size);
  check_partial(data, size);
  return 0;
}
