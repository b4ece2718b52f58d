#include "search/result_cache.hpp"

#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>

#include "serialize/flatbuffers_read.hpp"
#include "serialize/graph_file.hpp"
#include "util/error.hpp"
#include "util/file_cache.hpp"
#include "util/log.hpp"
#include "yirage_search_cache_generated.h"

namespace yirage::search {

namespace {

// The enumeration's revision, part of every request: a result cached by a search that tried
// other candidates (other grid sizes, no split loops) answers another question. Raised whenever
// what the search enumerates or keeps changes (3: configurations first, and split loops summed on
// a finer grid; 4: tiles of 2 and 4 matrix-unit heights, L2 re-reads at the blocks' share of L2,
// one wait for a loop that only sums its tiles; 5: ragged tiles rounded up to whole 16s or 8s,
// built by the CUDA plugin; 6: block products off the matrix unit's n priced as scalar code;
// 7: kernels run as one program where faster; 8: the CPU's grouped forms, and its decode products
// charged for walking B's rows; 9: scalar block products wait on their sums' chains, re-reads by
// blocks of one wave come from L2).
constexpr int kSearchRevision = 9;

}  // namespace

std::string target_request_text(const targets::TargetProperties &t) {
  std::ostringstream s;
  s.precision(17);
  s << "yirage " << YIRAGE_VERSION_STRING << " search revision " << kSearchRevision << '\n';
  s << "target " << t.name << ' ' << static_cast<int>(t.kind) << ' ' << t.compute_units << ' '
    << t.max_threads_per_block << ' ' << t.max_blocks_per_compute_unit << ' ' << t.threads_per_compute_unit << ' '
    << t.shared_memory_per_block << ' ' << t.shared_memory_per_compute_unit << ' ' << t.warp_width << ' '
    << t.memory_bytes << ' ' << t.memory_bandwidth << ' ' << t.l2_bytes << ' ' << t.l2_bandwidth << ' '
    << t.peak_flops_float16 << ' ' << t.peak_flops_bfloat16 << ' ' << t.peak_flops_float32 << ' '
    << t.vector_flops_float32 << ' ' << t.matrix_unit[0] << ' ' << t.matrix_unit[1] << ' ' << t.matrix_unit[2] << ' '
    << t.launch_overhead_seconds << ' ' << t.loop_iteration_seconds << '\n';
  return s.str();
}

namespace {

// Every property and option as text: readable when debugging, and exact.
std::string request_text(const SearchOptions &o) {
  std::ostringstream s;
  s.precision(17);
  s << target_request_text(o.target);
  s << "backend estimates from " << (o.backend_estimates ? o.backend_estimates_source : "none") << '\n';
  s << "options " << o.seed << ' ' << o.max_kernel_ops << ' ' << o.max_block_ops << ' ' << o.max_grid_axes << ' '
    << o.max_customized_inputs << ' ' << o.max_candidates << ' ' << o.verify_trials << ' ' << o.z3_rlimit << ' '
    << o.abstract_pruning << " grid";
  for (int64_t g : o.grid_candidates) s << ' ' << g;
  s << " loop";
  for (int64_t f : o.forloop_candidates) s << ' ' << f;
  if (o.fixed_grid) s << " fixed_grid " << (*o.fixed_grid)[0] << 'x' << (*o.fixed_grid)[1] << 'x' << (*o.fixed_grid)[2];
  if (o.fixed_forloop) s << " fixed_forloop " << *o.fixed_forloop;
  s << (o.ragged_tiles ? " ragged tiles" : " no ragged tiles");
  s << '\n';
  return s.str();
}

}  // namespace

std::vector<uint8_t> cache_request(const KernelGraph &graph, const SearchOptions &options) {
  std::vector<uint8_t> bytes = serialize::graph_to_bytes(graph, serialize::GraphFormat::kBinary);
  const std::string text = request_text(options);
  bytes.insert(bytes.end(), text.begin(), text.end());
  return bytes;
}

std::vector<uint8_t> measured_request(const std::vector<uint8_t> &request, const SearchOptions &options) {
  std::vector<uint8_t> bytes = request;
  const std::string text =
      "measured by " + options.measured_by + " top " + std::to_string(options.profile_top_k) + " candidates\n";
  bytes.insert(bytes.end(), text.begin(), text.end());
  return bytes;
}

std::string cache_path(const std::string &folder, const std::vector<uint8_t> &request) {
  // The kernel cache's key (util/file_cache.hpp); the file holds the request, so a collision is a miss.
  return (std::filesystem::path(folder) / (util::hash_hex(std::string(request.begin(), request.end())) + ".yrsc"))
      .string();
}

std::vector<uint8_t> cache_entry_to_bytes(const CacheEntry &entry) {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<flatbuffers::Offset<fb::CachedCandidate>> candidates;
  for (const SearchCandidate &c : entry.candidates) {
    const auto graph = serialize::graph_to_bytes(c.graph, serialize::GraphFormat::kBinary);
    candidates.push_back(fb::CreateCachedCandidate(builder, builder.CreateVector(graph), c.estimated_seconds,
                                                   c.verified_trials, builder.CreateString(c.description),
                                                   c.measured_seconds, c.spread.min_seconds, c.spread.max_seconds,
                                                   c.spread.samples));
  }
  const auto request = builder.CreateVector(entry.request);
  const auto list = builder.CreateVector(candidates);
  builder.Finish(fb::CreateSearchCacheEntry(builder, request, list, entry.search_seconds),
                 fb::SearchCacheEntryIdentifier());
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

CacheEntry cache_entry_from_bytes(const void *bytes, size_t size) {
  auto corrupt = [](const std::string &what) { return Error(ErrorCode::kCorruptData, "search cache entry: " + what); };
  const std::vector<uint64_t> storage = serialize::aligned_copy(bytes, size);
  const auto *data = reinterpret_cast<const uint8_t *>(storage.data());
  flatbuffers::Verifier verifier(data, size, 32, 1u << 20);
  if (!fb::VerifySearchCacheEntryBuffer(verifier)) throw corrupt("not a valid cache entry");
  const fb::SearchCacheEntry *stored = fb::GetSearchCacheEntry(data);
  if (!stored->request()) throw corrupt("no request");
  CacheEntry entry;
  entry.request.assign(stored->request()->begin(), stored->request()->end());
  entry.search_seconds = stored->search_seconds();
  if (stored->candidates()) {
    for (const fb::CachedCandidate *c : *stored->candidates()) {
      if (!c->graph()) throw corrupt("a candidate without a graph");
      // The graph loader's own errors (CORRUPT_DATA, VERSION_MISMATCH) say what is wrong.
      entry.candidates.push_back(
          SearchCandidate{serialize::graph_from_bytes(c->graph()->data(), c->graph()->size()), c->estimated_seconds(),
                          c->verified_trials(), c->description() ? c->description()->str() : "", c->measured_seconds(),
                          Spread{c->measured_min_seconds(), c->measured_max_seconds(), c->measured_samples()}, ""});
    }
  }
  return entry;
}

std::optional<std::vector<SearchCandidate>> cache_read(const std::string &folder, const std::vector<uint8_t> &request,
                                                       std::string *why_not) {
  auto miss = [&](const std::string &why) -> std::optional<std::vector<SearchCandidate>> {
    if (why_not) *why_not = why;
    return std::nullopt;
  };
  const std::string path = cache_path(folder, request);
  // The checksum file (util/file_cache.hpp) catches what the reader cannot: a flipped bit that
  // leaves a well-formed graph computing something else. No entry comes near 1 GiB (a few KB);
  // a file that does is not read into memory.
  std::string why;
  const std::optional<std::string> bytes = util::read_cached(path, &why, uint64_t{1} << 30);
  if (!bytes) return miss(why.empty() ? "" : path + ": " + why);
  CacheEntry entry;
  try {
    entry = cache_entry_from_bytes(bytes->data(), bytes->size());
  } catch (const Error &e) {
    return miss(path + ": " + e.what());
  }
  if (entry.request != request) return miss(path + ": another request's entry");
  return std::move(entry.candidates);
}

bool cache_write(const std::string &folder, const std::vector<uint8_t> &request,
                 const std::vector<SearchCandidate> &candidates, double search_seconds) {
  const std::string path = cache_path(folder, request);
  const std::vector<uint8_t> bytes = cache_entry_to_bytes({request, candidates, search_seconds});
  try {
    // store_cached creates the folder; when it cannot, its write says why.
    util::store_cached(path, std::string(bytes.begin(), bytes.end()));
    return true;
  } catch (const Error &e) {
    // Once per folder and process: a profiled search writes twice, a session searches often.
    static std::mutex mutex;
    static std::set<std::string> said;
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      first = said.insert(folder).second;
    }
    if (first)
      util::log_line(util::LogLevel::kWarning,
                     std::string("search cache: the answer is returned but not stored: ") + e.what());
    return false;
  }
}

}  // namespace yirage::search
