// A search in shards (docs/distributed.md): the superoptimizer's enumeration split into work
// units that any process can run, whose partial results travel as bytes and merge into exactly
// the answer of one process. Engine-agnostic: yirage-mpi hands units out over MPI, a Python user
// over Ray or Dask.
//
// A plan lists the units: the tasks of every pass (search_pass.hpp: a cut of the graph and a
// grid/loop plan) and, within them, subtrees of the thread-block structure search, split breadth
// first until there are at least `min_units` (one huge task does not stall a run) or 2 * min_units
// nodes were split (a tree of long chains gives fewer units). Planning is
// deterministic, so every process that plans the same graph with the same options gets the same
// units; the plan's request bytes name it, and a partial result of another plan is refused.
// Merging takes each unit's structures in depth-first order, builds them at every size, verifies
// them by fingerprints against the graph (nothing merged in is trusted) and profiles as
// superoptimize does.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "search/block_search.hpp"
#include "search/superoptimizer.hpp"

namespace yirage::search {

struct WorkUnit {
  uint32_t pass = 0;  // of pass_forms
  uint32_t task = 0;  // of the pass
  SearchPath node;    // the subtree it explores, whole
  auto operator<=>(const WorkUnit &) const = default;
};

// One unit run to its end.
struct UnitResult {
  uint32_t unit = 0;                       // its index in the plan
  std::vector<KeyedStructure> structures;  // depth-first
  BlockSearchStats stats;
};

// What a shard found: some of a plan's units.
struct ShardResult {
  std::vector<uint8_t> plan;  // ShardedSearch::request of the plan
  std::vector<UnitResult> units;
  bool complete = true;  // every unit asked for ran to its end (run's answer)
};

class ShardedSearch {
 public:
  using Clock = std::chrono::steady_clock;
  // Plans. Throws invalid_argument for bad options (as superoptimize), Error(kUnsupported) for a
  // graph that superoptimize searches in segments, Error(kTimeout) where the budget ran out
  // while planning. `min_units` >= 1.
  ShardedSearch(const KernelGraph &graph, const SearchOptions &options, uint32_t min_units);
  ~ShardedSearch();
  ShardedSearch(const ShardedSearch &) = delete;
  ShardedSearch &operator=(const ShardedSearch &) = delete;

  size_t num_units() const;
  const WorkUnit &unit(size_t index) const;
  // The plan's canonical bytes: the graph, the target and every option that changes what the
  // units find, and min_units.
  const std::vector<uint8_t> &request() const;

  // Runs units (indices into the plan; repeats are run once) on the options' threads. A unit
  // stopped by the budget (counted from this call) or by `cancelled` is left out. `done` (may be
  // null) is called after each unit, from the thread that ran it, one call at a time.
  ShardResult run(const std::vector<uint32_t> &units,
                  const std::function<void(const UnitResult &)> &done = nullptr) const;

  // The answer of the units in `shards`, as superoptimize gives it with `options` (profiling
  // included), the budget counting from `started`. `options` must plan the same units
  // (invalid_argument otherwise); a shard of another plan is refused (invalid_argument), one
  // naming a unit the plan lacks is corrupt (Error(kCorruptData)); a unit found twice counts
  // once. Units missing from every shard leave the result's end kTimeout.
  SearchResult merge(const std::vector<ShardResult> &shards, const SearchOptions &options,
                     Clock::time_point started) const;

  // A shard's bytes: a search cache entry (schemas/yirage_search_cache.fbs) with units.
  std::vector<uint8_t> to_bytes(const ShardResult &shard) const;
  // Reads a shard's bytes, trusting none of them: Error(kCorruptData) for anything malformed
  // (the graph loader's own errors for a bad structure), invalid_argument for a shard of
  // another plan.
  ShardResult from_bytes(const void *data, size_t size) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace yirage::search
