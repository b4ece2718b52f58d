// One pass of the superoptimizer over one form of the input graph (superoptimizer.cpp runs one
// on the graph and one on its weights-apart form): the cuts of the graph and the grid/loop plans
// of each (its tasks), the thread-block structures of each task, their instances at every size,
// verification by fingerprints. A sharded search (shards.hpp) explores the tasks' structures in
// pieces and hands the pass what they found.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "search/block_search.hpp"
#include "search/superoptimizer.hpp"
#include "verify/equivalence.hpp"

namespace yirage::search {

// Where candidates are profiled, the search (enumeration and verification) takes this share of
// the budget and profiling the rest.
constexpr double kSearchShareWithProfiling = 0.75;

inline size_t kernel_count(const KernelGraph &g) {
  return g.operators().size() - g.inputs().size();
}

// SearchOptions::buildable's answer; true where there is none to ask.
inline bool builds(const SearchOptions &o, const KernelGraph &g) {
  return !o.buildable || o.buildable(g);
}

// Per task of a pass, its structures in depth-first order: what a sharded search found.
using TaskStructures = std::vector<std::vector<std::shared_ptr<const BlockGraph>>>;

class SearchPass {
 public:
  using Clock = std::chrono::steady_clock;
  // `started`: when the call began (its budget counts from then). `fingerprints`: the check
  // against the user's graph, shared by the call's passes (its fingerprints are computed once).
  // `fusions_only`: only cuts whose pre-defined part is views (whole-graph fusions). `before`:
  // the progress of an earlier pass of the same call, which this one's reports continue.
  // `enumeration_share`: the part of the enumeration's time (the budget less what verification
  // and profiling keep) by whose end this pass stops enumerating; a call of several passes gives
  // each its turn (run_passes), so that one pass's long search does not leave the next none.
  // `twin`: where given, the pass searches it instead of `graph` and builds what it finds on
  // `graph` (padded_form.hpp); it must be padded_twin(graph).
  SearchPass(const KernelGraph &graph, const SearchOptions &options, Clock::time_point started,
             const verify::FingerprintCheck &fingerprints, bool fusions_only = false, const SearchProgress &before = {},
             double enumeration_share = 1, const KernelGraph *twin = nullptr);
  ~SearchPass();
  SearchPass(const SearchPass &) = delete;
  SearchPass &operator=(const SearchPass &) = delete;

  // The graph's terms, the oracle and the tasks. False where the budget ran out first or the
  // terms are too long to search (kernel_terms_within): the pass finds nothing.
  bool prepare();
  size_t num_tasks() const;
  // Part of task `task`'s structure search (after prepare); `stop` (null: the pass's budget)
  // ends it early. Safe to call from several threads.
  SubtreeFound subtree(size_t task, const Subtree &subtree, BlockSearchStats &stats,
                       const std::function<bool()> &stop = nullptr) const;
  // A kernel graph holding `structure` of task `task` as its one customized operator, reading
  // the task's inputs: how a structure travels in a file (shards.hpp).
  KernelGraph structure_graph(size_t task, std::shared_ptr<const BlockGraph> structure) const;
  // Searches (prepare included), builds every structure at every size, verifies the cheapest.
  // With `given`, the structures are those, one list per task, and nothing is enumerated.
  SearchResult run(const TaskStructures *given = nullptr);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The forms of a graph superoptimize searches, in order: where weighted norms come apart
// (norm_weights.hpp), that form's whole-graph fusions first (a few cuts), then the graph itself.
struct PassForm {
  KernelGraph graph;
  bool fusions_only = false;
  std::optional<KernelGraph> twin;  // padded_twin(graph): searched in its place, if any
};
// `twins`: each form with its padded twin, where it has one.
std::vector<PassForm> pass_forms(const KernelGraph &graph, bool twins);

// Runs a pass over each form, verifying against `graph`, and merges what they found. `given`:
// structures per form (run's `given`).
SearchResult run_passes(const KernelGraph &graph, const SearchOptions &options, SearchPass::Clock::time_point started,
                        const std::vector<TaskStructures> *given);

}  // namespace yirage::search
