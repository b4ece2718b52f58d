// The superoptimizer (ARCHITECTURE.md §5, docs/search.md): given a kernel graph of pre-defined
// operators and a target, finds equivalent kernel graphs that fuse the work into customized
// operators, verifies each with fingerprints and ranks them with the cost model.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/block_graph.hpp"
#include "ir/kernel_graph.hpp"
#include "search/cost_model.hpp"
#include "target/target.hpp"

namespace yirage::search {

struct SearchProgress {
  int64_t states = 0;      // partial graphs explored so far
  int64_t candidates = 0;  // complete candidates found so far (before verification)
  double seconds = 0;
};

// How a measurement's timed runs spread: a run slowed down by a busy machine widens it.
struct Spread {
  double min_seconds = -1, max_seconds = -1;  // -1: not timed (or not recorded, as in a cached answer)
  int samples = 0;                            // timed runs
};

// What profiling a candidate on a device found (runtime::Measurer fills it).
struct Measured {
  bool correct = false;
  double seconds = -1;         // median device time; -1 when not correct
  double relative_error = -1;  // against the reference executor; -1 if never compared
  std::string error;           // why it was dropped
  Spread spread{};
  // The candidate with kernels marked to run as one program (KernelGraph::set_launch_with_next),
  // where the device takes them and that form measured faster beyond the noise: the figures
  // above are then its, and the search keeps it instead (the input graph too: the same
  // computation, launched so).
  std::shared_ptr<const KernelGraph> faster_form = nullptr;
};

struct SearchOptions {
  targets::TargetProperties target;
  // The whole call: building the target's terms, enumeration, verification and profiling. The
  // input graph is measured first, whatever the time (there is always a checked answer), its
  // timed runs within the budget's first quarter; where profiling follows, the search stops at
  // 3/4 of the budget; each candidate's measurement is trimmed to the time left, and none starts
  // with less time left than the longest so far took.
  double time_budget_seconds = 60;
  int threads = 0;                                   // 0: the hardware's count
  uint64_t seed = 1;                                 // fingerprint inputs derive from it
  int max_kernel_ops = 2;                            // kernel-level operators per candidate, the fused one included
  int max_block_ops = 8;                             // compute operators per thread-block graph (savers excluded)
  int max_grid_axes = 2;                             // grid axes with more than one block
  int max_customized_inputs = 4;                     // kernel tensors one customized operator reads
  std::vector<int64_t> grid_candidates;              // block counts per axis; empty: from the target
  std::vector<int64_t> forloop_candidates;           // for-loop ranges; empty: from the target
  std::optional<std::array<int64_t, 3>> fixed_grid;  // only this grid (like Mirage's override)
  std::optional<int64_t> fixed_forloop;              // only this for-loop range
  // Verified candidates returned, cheapest first (at least 1.5 × profile_top_k where profiling); where
  // candidates of another kernel count than the rest pass, the last place goes to the cheapest of
  // them (see measure).
  int max_candidates = 4;
  int verify_trials = 2;  // fingerprint trials per candidate
  // Z3 resource limit per query (deterministic, unlike a time limit; 10000 is a few ms);
  // 0: no Z3, the subterm index alone prunes.
  int z3_rlimit = 10000;
  bool abstract_pruning = true;  // false: only shapes and canonical order prune (for comparison)
  std::function<void(const SearchProgress &)> progress;  // called from search threads, serialised
  std::function<bool()> cancelled;                       // polled; true stops the search
  // Empty: no cache. With profiling and a `measured_by`, a profiled answer is cached too and
  // answers a later request at once (no search, no measurement) unless `remeasure`.
  std::string cache_dir;
  std::string measured_by;  // who profiles: plugin file, version and device (profile_on_device)
  bool remeasure = false;   // a cached profiled answer is measured again
  // Profiling: called on the profile_top_k cheapest verified candidates, where they all have one
  // kernel count the last of them replaced by the cheapest with another (the cost model ranks
  // graphs of one shape better than it compares shapes: a loop split over two kernels against
  // the one-kernel µGraph), one at a time, after the search (and after a hit of the search's
  // cache; a hit of the profiled answers' cache is not measured again, see cache_dir), then on
  // the input graph.
  // Incorrect ones (failing to build or run, or wrong) are dropped, each place going to the
  // cheapest candidate not yet profiled; the correct ones come first, fastest first, so the input graph
  // itself is the result when no fused candidate beats it, or when the search verified none (it
  // is measured then too). Null: no profiling.
  // `deadline`: when the budget ends; a measurement makes fewer timed runs to end near it.
  using Measure = std::function<Measured(const KernelGraph &, std::chrono::steady_clock::time_point deadline)>;
  Measure measure;
  // A `measure` against another reference graph: a segment of the input graph, searched on its
  // own (segments.hpp), is profiled with it. Null: segments are searched without profiling.
  std::function<Measure(const KernelGraph &reference)> measure_for;
  int profile_top_k = 4;
  // A graph of more than `segment_above_ops` operators (views not counted) is searched in
  // segments of at most `max_segment_ops` (segments.hpp); 0: never in segments.
  int segment_above_ops = 12;
  int max_segment_ops = 6;
  // The backend's word on whether it can build a candidate's kernels: called on each candidate
  // that passes its fingerprints, before it takes a place; false drops it (stats.unbuildable). The shared-memory limit
  // the search checks is an estimate (BlockGraph::shared_memory_bytes); the backend's code generator knows what a
  // µGraph really needs (the CUDA one keeps tiles in float32 with load stages beside them, or attention's in
  // registers). Null: every candidate is taken as buildable.
  std::function<bool(const KernelGraph &)> buildable;
  // Whether the backend builds µGraphs with ragged tiles (ir/ragged_tiles.hpp): where it does, dims
  // no power of two divides are searched on a padded twin of the graph (padded_form.hpp); where it
  // does not, they are split only where a size happens to divide them. profile_on_device asks the
  // plugin (ragged_probe); part of the result cache's key. A sharded search's units know no
  // device and always search the twins; its merge offers the backend what it builds on them.
  bool ragged_tiles = true;
  // The backend's estimate of a customized kernel, for the cost model (runtime::backend_estimate:
  // how often its blocks wait for their tiles over the for-loop, how long they move tiles through
  // shared memory): called on every candidate while the search enumerates, from its threads.
  // Null: the cost model counts alone. `backend_estimates_source` names it in the result cache's
  // key (the plugin's build: its name, version and file), so that a ranking made with another
  // backend's estimates, or another build's, is not reused.
  BackendEstimates backend_estimates;
  std::string backend_estimates_source;
};

// Throws invalid_argument naming the first option out of range.
void validate(const SearchOptions &options);

struct SearchCandidate {
  KernelGraph graph;
  double estimated_seconds = 0;
  int verified_trials = 0;
  std::string description;       // e.g. "customized grid 2x16x1 loop 16 (7 block ops)"
  double measured_seconds = -1;  // -1: not profiled, and not_measured says why
  Spread spread{};
  std::string not_measured{};
};

struct ProfileRecord {
  std::string description;
  double estimated_seconds = 0;
  Measured measured;
};

struct SearchStats {
  int64_t states = 0;                // partial graphs built
  int64_t pruned_shape = 0;          // builder refused (shapes, tiles, phases, shared memory)
  int64_t pruned_abstract = 0;       // a term that does not occur in the target's
  int64_t pruned_canonical = 0;      // not in canonical order, or recomputes an existing term
  int64_t pruned_dead = 0;           // complete but computing something unused
  int64_t plans = 0;                 // grid/loop class assignments searched
  int64_t structures = 0;            // complete µGraph structures found
  int64_t candidates = 0;            // complete candidates (structures × sizes) that built
  int64_t infeasible = 0;            // candidates the cost model ruled out (or put past 10x the input graph)
  int64_t oracle_queries = 0;        // subexpression questions (memo hits included)
  int64_t oracle_index_answers = 0;  // settled by the subterm index
  int64_t z3_queries = 0;
  int64_t z3_proved = 0;
  int64_t z3_unknown = 0;
  double z3_seconds = 0;
  int64_t fingerprint_checks = 0;
  int64_t fingerprint_rejected = 0;
  double fingerprint_seconds = 0;
  int64_t unbuildable = 0;          // passed, but the backend cannot build it (buildable)
  double first_fused_seconds = -1;  // when the first verified fully fused candidate was found
  double seconds = 0;
  bool from_cache = false;
};

enum class SearchEnd { kComplete, kTimeout, kCancelled };

struct SearchResult {
  // Verified; profiled correct ones first (fastest first), then the rest by estimate.
  std::vector<SearchCandidate> candidates;
  std::vector<ProfileRecord> profiled;  // in profiling order
  SearchStats stats;
  SearchEnd end = SearchEnd::kComplete;
};

SearchResult superoptimize(const KernelGraph &graph, const SearchOptions &options);

// Which of `candidates` (cheapest estimate first) the profiler measures, by index: the `k`
// cheapest, except that a twin (an estimate within kTwinEstimate of one taken already, which the
// model cannot tell apart: a pre-defined product then the same small kernel on another grid)
// waits until every candidate with an estimate of its own is taken, and the last place goes to
// the cheapest candidate with another kernel count where all those taken share one. Exposed for
// tests.
inline constexpr double kTwinEstimate = 1e-3;
std::vector<size_t> candidates_to_profile(const std::vector<SearchCandidate> &candidates, int k);

// What superoptimize does after choosing not to search in segments, its budget counting from
// `started`; with `given` (a sharded search's structures, per pass of search_pass.hpp's
// pass_forms, per task), nothing is enumerated and the cache is neither read nor written.
SearchResult superoptimize_from(const KernelGraph &graph, const SearchOptions &options,
                                const std::vector<std::vector<std::vector<std::shared_ptr<const BlockGraph>>>> *given,
                                std::chrono::steady_clock::time_point started);

// Seconds from `start` to now.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The structure search's counts (block_search.hpp) added to `s`'s.
struct BlockSearchStats;
void add_block_counts(SearchStats &s, const BlockSearchStats &b);

// `other`'s counts added to `s`'s (states, prunings, checks, Z3 and fingerprint seconds), the
// earlier first fusion kept; seconds are left as they are.
void add_counts(SearchStats &s, const SearchStats &other);

// The block counts the search tries on grid axis `axis` (0-2) over `extent` elements, largest
// first: options.fixed_grid's or options.grid_candidates' that divide it, else up to three
// powers of two spread from the most that fill the device to 2, and the count whose tiles are as
// tall as the target's matrix unit where that leaves fewer blocks than compute units.
std::vector<int64_t> grid_sizes(const SearchOptions &options, int64_t extent, size_t axis);

// The for-loop ranges the search tries over `extent` elements: options.fixed_forloop's or
// options.forloop_candidates' that divide it, else up to three powers of two leaving tiles of at
// least 16 elements.
std::vector<int64_t> loop_sizes(const SearchOptions &options, int64_t extent);

}  // namespace yirage::search
