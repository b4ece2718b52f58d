#include "search/shards.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <sstream>

#include "ir/rebuild.hpp"
#include "search/result_cache.hpp"
#include "search/search_pass.hpp"
#include "search/segments.hpp"
#include "serialize/flatbuffers_read.hpp"
#include "serialize/graph_file.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"
#include "yirage_search_cache_generated.h"

namespace yirage::search {

namespace {

using Clock = ShardedSearch::Clock;

// The plan's request: the graph, the target, the options the enumeration reads and min_units.
// Profiling, verification and the cost model's loop waits are the merge's business: a rank with
// no device plans the same units as the one that profiles.
std::vector<uint8_t> plan_request(const KernelGraph &graph, const SearchOptions &o, uint32_t min_units) {
  std::vector<uint8_t> bytes = serialize::graph_to_bytes(graph, serialize::GraphFormat::kBinary);
  std::ostringstream s;
  s << target_request_text(o.target) << "sharded plan " << o.max_kernel_ops << ' ' << o.max_block_ops << ' '
    << o.max_grid_axes << ' ' << o.max_customized_inputs << ' ' << o.z3_rlimit << ' ' << o.abstract_pruning << " grid";
  for (int64_t g : o.grid_candidates) s << ' ' << g;
  s << " loop";
  for (int64_t f : o.forloop_candidates) s << ' ' << f;
  if (o.fixed_grid) s << " fixed_grid " << (*o.fixed_grid)[0] << 'x' << (*o.fixed_grid)[1] << 'x' << (*o.fixed_grid)[2];
  if (o.fixed_forloop) s << " fixed_forloop " << *o.fixed_forloop;
  s << " units " << min_units << '\n';
  const std::string text = s.str();
  bytes.insert(bytes.end(), text.begin(), text.end());
  return bytes;
}

// BlockSearchStats as the partial result stores them, in this order.
constexpr int64_t BlockSearchStats::*kCounts[] = {
    &BlockSearchStats::states,           &BlockSearchStats::pruned_shape, &BlockSearchStats::pruned_abstract,
    &BlockSearchStats::pruned_canonical, &BlockSearchStats::pruned_dead,  &BlockSearchStats::structures};

bool starts_with(const SearchPath &path, const SearchPath &prefix) {
  return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

}  // namespace

class ShardedSearch::Impl {
 public:
  Impl(const KernelGraph &graph, const SearchOptions &options, uint32_t min_units)
      : graph_(without_dead_operators(graph)), options_(options), min_units_(min_units) {  // as superoptimize()
    validate(options);
    if (graph.outputs().empty()) invalid_argument("sharded search: the graph has no outputs");
    if (min_units < 1) invalid_argument("sharded search: min_units must be at least 1");
    const std::vector<Segment> segments =
        plan_segments(graph_, options.segment_above_ops, options.max_segment_ops, options.max_customized_inputs);
    if (segments.size() > 1) {
      throw Error(ErrorCode::kUnsupported,
                  "sharded search: a graph of this size is searched in " + std::to_string(segments.size()) +
                      " segments, which a sharded search does not do yet; search each segment's graph on its own");
    }
    // Units only enumerate: nothing is measured, built or estimated while they run.
    options_.measure = nullptr;
    options_.measure_for = nullptr;
    options_.buildable = nullptr;
    options_.backend_estimates = nullptr;
    // Nor do they know whether the backend builds ragged tiles: they search the twins, and the
    // merge offers what it builds on them to the backend (run_passes with `given`).
    options_.ragged_tiles = true;
    request_ = plan_request(graph_, options_, min_units_);
    forms_ = pass_forms(graph_, true);
    fingerprints_ = std::make_unique<verify::FingerprintCheck>(
        graph_, verify::EquivalenceOptions{options_.verify_trials, options_.seed, options_.threads});
    const auto started = Clock::now();
    std::deque<WorkUnit> frontier;
    for (size_t p = 0; p < forms_.size(); ++p) {
      passes_.push_back(std::make_unique<SearchPass>(forms_[p].graph, options_, started, *fingerprints_,
                                                     forms_[p].fusions_only, SearchProgress{}, 1,
                                                     forms_[p].twin ? &*forms_[p].twin : nullptr));
      if (!passes_[p]->prepare() && seconds_since(started) >= 0.8 * options_.time_budget_seconds) out_of_time();
      shallow_.emplace_back(passes_[p]->num_tasks());
      for (size_t t = 0; t < passes_[p]->num_tasks(); ++t) {
        frontier.push_back({static_cast<uint32_t>(p), static_cast<uint32_t>(t), {}});
      }
    }
    // Breadth first: a node taken apart leaves its structures here and its children as units. At
    // most 2 * min_units nodes are taken apart, so planning stays cheap where the tree is a few
    // long chains (fewer units then).
    for (size_t expanded = 0; !frontier.empty() && frontier.size() < min_units_ && expanded < 2 * size_t{min_units_};
         ++expanded) {
      const WorkUnit node = std::move(frontier.front());
      frontier.pop_front();
      SubtreeFound found = passes_[node.pass]->subtree(node.task, Subtree{node.node, 0}, planning_stats_);
      if (!found.complete) out_of_time();
      for (KeyedStructure &s : found.structures) shallow_[node.pass][node.task].push_back(std::move(s));
      for (SearchPath &child : found.beyond) frontier.push_back({node.pass, node.task, std::move(child)});
    }
    units_.assign(frontier.begin(), frontier.end());
    std::sort(units_.begin(), units_.end());
  }

  [[noreturn]] static void out_of_time() {
    throw Error(ErrorCode::kTimeout, "sharded search: the budget ran out while planning the work units");
  }

  size_t num_units() const { return units_.size(); }
  const WorkUnit &unit(size_t i) const {
    if (i >= units_.size()) {
      invalid_argument("sharded search: unit " + std::to_string(i) + " of a plan of " + std::to_string(units_.size()));
    }
    return units_[i];
  }
  const std::vector<uint8_t> &request() const { return request_; }

  ShardResult run(const std::vector<uint32_t> &indices, const std::function<void(const UnitResult &)> &done) const {
    std::vector<uint32_t> todo = indices;
    std::sort(todo.begin(), todo.end());
    todo.erase(std::unique(todo.begin(), todo.end()), todo.end());
    for (uint32_t u : todo) unit(u);  // every index is checked before anything runs
    const auto started = Clock::now();
    auto stop = [&] {
      return (options_.cancelled && options_.cancelled()) || seconds_since(started) >= options_.time_budget_seconds;
    };
    std::vector<std::optional<UnitResult>> results(todo.size());
    std::mutex mutex;
    SearchProgress progress;
    const int threads = options_.threads > 0 ? options_.threads : default_thread_count();
    parallel_for(static_cast<int64_t>(todo.size()), threads, [&](int64_t k) {
      if (stop()) return;
      const WorkUnit &u = units_[todo[static_cast<size_t>(k)]];
      UnitResult r;
      r.unit = todo[static_cast<size_t>(k)];
      SubtreeFound found = passes_[u.pass]->subtree(u.task, Subtree{u.node, -1}, r.stats, stop);
      if (!found.complete) return;
      r.structures = std::move(found.structures);
      std::lock_guard lock(mutex);
      if (done) done(r);
      if (options_.progress) {
        progress.states += r.stats.states;
        progress.candidates += r.stats.structures;
        progress.seconds = seconds_since(started);
        options_.progress(progress);
      }
      results[static_cast<size_t>(k)] = std::move(r);
    });
    ShardResult shard{request_, {}};
    for (auto &r : results) {
      if (r) shard.units.push_back(std::move(*r));
    }
    shard.complete = shard.units.size() == todo.size();
    return shard;
  }

  SearchResult merge(const std::vector<ShardResult> &shards, const SearchOptions &options,
                     Clock::time_point started) const {
    validate(options);
    if (plan_request(graph_, options, min_units_) != request_) {
      invalid_argument(
          "sharded search: the merge's options plan other units than the plan's (target, kernel and block "
          "operator limits, grid axes, inputs, grid and loop sizes, Z3 limit and pruning must be the same)");
    }
    std::vector<const UnitResult *> by_unit(units_.size(), nullptr);
    for (const ShardResult &shard : shards) {
      if (shard.plan != request_) refuse_foreign();
      for (const UnitResult &u : shard.units) {
        check_unit(u);
        if (!by_unit[u.unit]) by_unit[u.unit] = &u;
      }
    }
    std::vector<std::vector<std::vector<KeyedStructure>>> keyed = shallow_;
    size_t missing = 0;
    BlockSearchStats units_stats = planning_stats_;
    for (size_t i = 0; i < units_.size(); ++i) {
      if (!by_unit[i]) {
        ++missing;
        continue;
      }
      units_stats.add(by_unit[i]->stats);
      auto &list = keyed[units_[i].pass][units_[i].task];
      list.insert(list.end(), by_unit[i]->structures.begin(), by_unit[i]->structures.end());
    }
    // In the one-process search's order: depth first within each task.
    std::vector<TaskStructures> given(keyed.size());
    for (size_t p = 0; p < keyed.size(); ++p) {
      for (auto &list : keyed[p]) given[p].push_back(in_depth_first_order(std::move(list)));
    }
    SearchResult result = superoptimize_from(graph_, options, &given, started);
    add_block_counts(result.stats, units_stats);
    if (missing > 0 && result.end == SearchEnd::kComplete) result.end = SearchEnd::kTimeout;
    return result;
  }

  std::vector<uint8_t> to_bytes(const ShardResult &shard) const {
    if (shard.plan != request_) refuse_foreign();
    flatbuffers::FlatBufferBuilder builder;
    std::vector<flatbuffers::Offset<fb::ShardUnit>> units;
    for (const UnitResult &u : shard.units) {
      check_unit(u);
      const WorkUnit &w = units_[u.unit];
      std::vector<flatbuffers::Offset<fb::ShardStructure>> structures;
      for (const KeyedStructure &s : u.structures) {
        const auto graph = serialize::graph_to_bytes(passes_[w.pass]->structure_graph(w.task, s.graph),
                                                     serialize::GraphFormat::kBinary);
        structures.push_back(
            fb::CreateShardStructure(builder, builder.CreateVector(s.node), builder.CreateVector(graph)));
      }
      std::vector<int64_t> counts;
      for (auto field : kCounts) counts.push_back(u.stats.*field);
      units.push_back(
          fb::CreateShardUnit(builder, u.unit, builder.CreateVector(structures), builder.CreateVector(counts)));
    }
    const auto request = builder.CreateVector(shard.plan);
    const auto list = builder.CreateVector(units);
    builder.Finish(fb::CreateSearchCacheEntry(builder, request, 0, 0, list), fb::SearchCacheEntryIdentifier());
    return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
  }

  ShardResult from_bytes(const void *bytes, size_t size) const {
    auto corrupt = [](const std::string &what) {
      return Error(ErrorCode::kCorruptData, "sharded search: partial result: " + what);
    };
    if (bytes == nullptr && size > 0) invalid_argument("sharded search: partial result: NULL bytes");
    const std::vector<uint64_t> storage = serialize::aligned_copy(bytes, size);
    const auto *data = reinterpret_cast<const uint8_t *>(storage.data());
    flatbuffers::Verifier verifier(data, size, 32, 1u << 24);
    if (!fb::VerifySearchCacheEntryBuffer(verifier)) throw corrupt("not a search cache file");
    const fb::SearchCacheEntry *stored = fb::GetSearchCacheEntry(data);
    if (!stored->units()) throw corrupt("a search cache entry without units (a cached answer, not a partial result)");
    if (!stored->request()) throw corrupt("no plan request");
    ShardResult shard;
    shard.plan.assign(stored->request()->begin(), stored->request()->end());
    if (shard.plan != request_) refuse_foreign();
    for (const fb::ShardUnit *u : *stored->units()) {
      UnitResult r;
      r.unit = u->unit();
      if (r.unit >= units_.size()) {
        throw corrupt("unit " + std::to_string(r.unit) + " of a plan of " + std::to_string(units_.size()));
      }
      const std::vector<int64_t> counts = serialize::vector_of(u->counts());
      if (counts.size() != std::size(kCounts)) throw corrupt("unit " + std::to_string(r.unit) + " has no counts");
      for (size_t c = 0; c < counts.size(); ++c) {
        if (counts[c] < 0) throw corrupt("unit " + std::to_string(r.unit) + " has a negative count");
        r.stats.*kCounts[c] = counts[c];
      }
      if (u->structures()) {
        for (const fb::ShardStructure *s : *u->structures()) {
          if (!s->graph()) throw corrupt("a structure without a graph");
          const std::vector<int32_t> node = serialize::vector_of(s->node());
          // The graph loader's own errors (CORRUPT_DATA, VERSION_MISMATCH) say what is wrong.
          const KernelGraph g = serialize::graph_from_bytes(s->graph()->data(), s->graph()->size());
          const std::vector<Operator> &ops = g.operators();
          if (ops.empty() || !ops.back().block_graph || kernel_count(g) != 1) {
            throw corrupt("a structure's graph is not one customized operator");
          }
          r.structures.push_back({node, ops.back().block_graph});
        }
      }
      check_unit(r);
      shard.units.push_back(std::move(r));
    }
    return shard;
  }

 private:
  [[noreturn]] static void refuse_foreign() {
    invalid_argument(
        "sharded search: a partial result of another plan (another graph, target, options or min_units, or another "
        "yirage)");
  }

  // A unit of this plan whose structures lie in its subtree, in depth-first order.
  void check_unit(const UnitResult &u) const {
    auto corrupt = [&](const std::string &what) {
      throw Error(ErrorCode::kCorruptData, "sharded search: unit " + std::to_string(u.unit) + ": " + what);
    };
    if (u.unit >= units_.size()) corrupt("not in a plan of " + std::to_string(units_.size()) + " units");
    for (size_t i = 0; i < u.structures.size(); ++i) {
      if (!u.structures[i].graph) corrupt("a structure without a graph");
      if (!starts_with(u.structures[i].node, units_[u.unit].node)) corrupt("a structure outside its subtree");
      if (i > 0 && !(u.structures[i - 1].node < u.structures[i].node)) corrupt("structures out of depth-first order");
    }
  }

  KernelGraph graph_;
  SearchOptions options_;
  uint32_t min_units_;
  std::vector<uint8_t> request_;
  std::vector<PassForm> forms_;
  std::unique_ptr<verify::FingerprintCheck> fingerprints_;  // the passes need one; units never verify
  std::vector<std::unique_ptr<SearchPass>> passes_;
  std::vector<WorkUnit> units_;
  // Per pass and task: the structures of the nodes planning took apart, and what it tried there.
  std::vector<std::vector<std::vector<KeyedStructure>>> shallow_;
  BlockSearchStats planning_stats_;
};

ShardedSearch::ShardedSearch(const KernelGraph &graph, const SearchOptions &options, uint32_t min_units)
    : impl_(std::make_unique<Impl>(graph, options, min_units)) {}

ShardedSearch::~ShardedSearch() = default;

size_t ShardedSearch::num_units() const {
  return impl_->num_units();
}

const WorkUnit &ShardedSearch::unit(size_t index) const {
  return impl_->unit(index);
}

const std::vector<uint8_t> &ShardedSearch::request() const {
  return impl_->request();
}

ShardResult ShardedSearch::run(const std::vector<uint32_t> &units,
                               const std::function<void(const UnitResult &)> &done) const {
  return impl_->run(units, done);
}

SearchResult ShardedSearch::merge(const std::vector<ShardResult> &shards, const SearchOptions &options,
                                  Clock::time_point started) const {
  return impl_->merge(shards, options, started);
}

std::vector<uint8_t> ShardedSearch::to_bytes(const ShardResult &shard) const {
  return impl_->to_bytes(shard);
}

ShardResult ShardedSearch::from_bytes(const void *data, size_t size) const {
  return impl_->from_bytes(data, size);
}

}  // namespace yirage::search
