// The on-disk cache of superoptimizer results (docs/search.md, "Cache"). A request — the graph
// (its canonical binary file), the target's properties and every option that changes the
// answer — names one file, <folder>/<hash of the request>.yrsc (schemas/yirage_search_cache.fbs).
// The file also holds the request bytes, so a hash collision reads as a miss. Reading never
// trusts the file: its checksum file must match (util/file_cache.hpp), the flatbuffers verifier
// runs and every graph is rebuilt through the validating loader; anything wrong is a miss, and
// the search's answer then replaces the file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "search/superoptimizer.hpp"

namespace yirage::search {

// The yirage version, the search's revision and every property of the target, as text: the
// part of a request that says which search answered it on what.
std::string target_request_text(const targets::TargetProperties &target);

// The canonical bytes of a request.
std::vector<uint8_t> cache_request(const KernelGraph &graph, const SearchOptions &options);

// One cache file's content.
struct CacheEntry {
  std::vector<uint8_t> request;  // cache_request's bytes
  std::vector<SearchCandidate> candidates;
  double search_seconds = 0;  // how long the search that found them took
};

// The bytes of an entry (the same entry always gives the same bytes).
std::vector<uint8_t> cache_entry_to_bytes(const CacheEntry &entry);

// Reads an entry's bytes, trusting none of them (the flatbuffers verifier, then every graph
// through the validating loader). Throws Error(kCorruptData), or the graph loader's
// kVersionMismatch for a graph file of a newer schema.
CacheEntry cache_entry_from_bytes(const void *data, size_t size);

// The cached candidates of `request`, or nothing (missing, unreadable, corrupt or another
// request's file). `why_not`, when given, says why a present file was not used.
std::optional<std::vector<SearchCandidate>> cache_read(const std::string &folder, const std::vector<uint8_t> &request,
                                                       std::string *why_not = nullptr);

// Stores a complete search's candidates with their checksum (written to temporary files, then
// renamed); creates the folder. A cache that cannot be written (a folder that cannot be created,
// a read-only or full disk) costs only the next search: the failure is a warning
// (a warning on stderr, util/log.hpp, once per folder and process), its temporaries are removed and false is
// returned; nothing is thrown. Thread-safe.
bool cache_write(const std::string &folder, const std::vector<uint8_t> &request,
                 const std::vector<SearchCandidate> &candidates, double search_seconds);

// The request of a profiled search's answer: `request` and who measured it
// (SearchOptions::measured_by) and how many candidates were profiled. Its entry holds the
// candidates in measured order, each with its time.
std::vector<uint8_t> measured_request(const std::vector<uint8_t> &request, const SearchOptions &options);

// The file a request is cached in.
std::string cache_path(const std::string &folder, const std::vector<uint8_t> &request);

}  // namespace yirage::search
