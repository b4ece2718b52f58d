#include "search/search_pass.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <optional>
#include <set>

#include "ir/block_graph.hpp"
#include "ir/ragged_tiles.hpp"
#include "ir/rebuild.hpp"
#include "search/cost_model.hpp"
#include "search/dim_classes.hpp"
#include "search/loop_split.hpp"
#include "search/norm_weights.hpp"
#include "search/padded_form.hpp"
#include "search/terms.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/parallel.hpp"

namespace yirage::search {

namespace {

using Clock = SearchPass::Clock;

// The states each task of a pass may take in the enumeration's first round (enumerate); those
// that reach it are searched again, in full, after every task's first round.
constexpr int64_t kFirstRoundStates = 4096;
// Subtrees per search thread that a second round splits each task into (enumerate).
constexpr size_t kSubtreesPerThread = 8;

// A fused candidate's loop is also tried split over 2, 4, ... this many blocks (loop_split.hpp);
// beyond kFewLoopParts only for long loops on grids that stay within a few waves.
constexpr int64_t kMaxLoopParts = 128;
constexpr int64_t kFewLoopParts = 16;
constexpr int64_t kMinIterationsPerPart = 8;
// Candidates the cost model puts past this many times the input graph's estimate are not
// verified: none measured faster than the input graph in the suites (the model's errors on
// fused candidates run the other way, too fast), and on a large graph a check takes minutes (a
// 262 144-block µGraph of llama3_8b.mlp_up.t256, estimated 700 times the input graph, took 111 s).
constexpr double kHopeless = 10;
// One customized operator to find: its request and the plans (grid and loop classes) to try.
struct Cut {
  std::vector<size_t> prefix;  // target operator indices computed by pre-defined kernels first
  CustomizedRequest request;
};

// The cuts of the target: a down-closed set of at most `max_prefix` compute operators runs as
// pre-defined kernels, one customized operator computes the rest from what crosses the cut.
std::vector<Cut> cuts_of(const KernelGraph &g, int max_prefix, int max_inputs) {
  std::vector<size_t> compute;
  for (size_t i = 0; i < g.operators().size(); ++i) {
    if (g.operators()[i].kind != OpKind::kInput) compute.push_back(i);
  }
  std::vector<Cut> cuts;
  std::vector<size_t> chosen;
  std::vector<bool> produced(g.num_tensors(), false);
  for (TensorId t : g.inputs()) produced[static_cast<size_t>(t)] = true;
  auto record = [&]() {
    Cut cut;
    cut.prefix = chosen;
    std::vector<bool> in_prefix(g.operators().size(), false);
    for (size_t i : chosen) in_prefix[i] = true;
    std::vector<bool> needed(g.num_tensors(), false);
    for (size_t i : compute) {
      if (in_prefix[i]) continue;
      for (TensorId t : g.operators()[i].inputs) {
        if (produced[static_cast<size_t>(t)]) needed[static_cast<size_t>(t)] = true;
      }
    }
    for (size_t t = 0; t < needed.size(); ++t) {
      if (needed[t]) cut.request.inputs.push_back(static_cast<TensorId>(t));
    }
    for (TensorId o : g.outputs()) {
      if (!produced[static_cast<size_t>(o)]) cut.request.outputs.push_back(o);
    }
    if (!cut.request.outputs.empty() && !cut.request.inputs.empty() &&
        cut.request.inputs.size() <= static_cast<size_t>(max_inputs)) {
      cuts.push_back(std::move(cut));
    }
  };
  // Subsets in increasing index order, each operator only after all its producers.
  auto grow = [&](auto &&self, size_t from) -> void {
    record();
    if (chosen.size() >= static_cast<size_t>(max_prefix)) return;
    for (size_t k = from; k < compute.size(); ++k) {
      const Operator &op = g.operators()[compute[k]];
      bool ready = true;
      for (TensorId t : op.inputs) ready = ready && produced[static_cast<size_t>(t)];
      if (!ready) continue;
      chosen.push_back(compute[k]);
      for (TensorId t : op.outputs) produced[static_cast<size_t>(t)] = true;
      self(self, k + 1);
      for (TensorId t : op.outputs) produced[static_cast<size_t>(t)] = false;
      chosen.pop_back();
    }
  };
  grow(grow, 0);
  return cuts;
}

// Grid classes: present in every wanted output; loop class: in some input, not on the grid.
std::vector<BlockPlan> plans_for(const CustomizedRequest &r, const DimClasses &classes, int max_axes) {
  std::vector<int> on_grid, loopable;
  for (int c = 0; c < classes.count(); ++c) {
    if (classes.extent(c) < 2) continue;
    bool everywhere = true;
    for (TensorId o : r.outputs) everywhere = everywhere && classes.dim_in(o, c) >= 0;
    if (everywhere) on_grid.push_back(c);
    bool somewhere = false;
    for (TensorId i : r.inputs) somewhere = somewhere || classes.dim_in(i, c) >= 0;
    if (somewhere) loopable.push_back(c);
  }
  std::vector<BlockPlan> plans;
  std::vector<int> axes;
  auto choose = [&](auto &&self, size_t from) -> void {
    BlockPlan p;
    p.grid_classes = axes;
    plans.push_back(p);
    for (int c : loopable) {
      if (std::find(axes.begin(), axes.end(), c) != axes.end()) continue;
      p.loop_class = c;
      plans.push_back(p);
    }
    if (axes.size() >= static_cast<size_t>(max_axes)) return;
    for (size_t k = from; k < on_grid.size(); ++k) {
      axes.push_back(on_grid[k]);
      self(self, k + 1);
      axes.pop_back();
    }
  };
  choose(choose, 0);
  return plans;
}

struct Found {
  KernelGraph graph;
  double seconds;
  std::string description;
  std::shared_ptr<const BlockGraph> structure;  // shared by its instances at other sizes
  bool fully_fused;
};

struct Task {
  size_t cut;
  BlockPlan plan;
};

}  // namespace

class SearchPass::Impl {
 public:
  Impl(const KernelGraph &graph, const SearchOptions &options, Clock::time_point started,
       const verify::FingerprintCheck &fingerprints, bool fusions_only, const SearchProgress &before,
       double enumeration_share, const KernelGraph *twin)
      : graph_(twin ? *twin : graph),
        real_(graph),
        padded_(twin != nullptr),
        options_(options),
        classes_(graph_),
        fusions_only_(fusions_only),
        fingerprint_(fingerprints),
        progress_(before),
        started_(started),
        enumeration_share_(enumeration_share) {}

  bool prepare() {
    if (prepared_) return !tasks_.empty() || !terms_.empty();
    prepared_ = true;
    std::optional<std::vector<Expr>> terms = kernel_terms_within(graph_, [this] { return stop_enumerating(); });
    if (!terms) {
      // Out of time, or terms too long to search at all (kernel_terms_within): nothing found.
      SearchEnd complete = SearchEnd::kComplete;
      end_.compare_exchange_strong(complete, SearchEnd::kTimeout);
      return false;
    }
    terms_ = std::move(*terms);
    input_estimate_ = estimate_cost(real_, options_.target, options_.backend_estimates).seconds;
    if (options_.abstract_pruning) {
      oracle_ = std::make_unique<SubexpressionOracle>(terms_, options_.z3_rlimit);
    }
    context_.target = &graph_;
    context_.classes = &classes_;
    context_.target_terms = &terms_;
    context_.oracle = oracle_.get();
    context_.vocabulary = vocabulary_of(graph_);
    context_.max_block_ops = options_.max_block_ops;
    context_.should_stop = [this] { return stop_enumerating(); };

    cuts_ = cuts_of(graph_, options_.max_kernel_ops - 1, options_.max_customized_inputs);
    if (fusions_only_) {
      std::erase_if(cuts_, [this](const Cut &cut) {
        return std::any_of(cut.prefix.begin(), cut.prefix.end(),
                           [this](size_t i) { return !is_view(graph_.operators()[i].kind); });
      });
    }
    // Whole-graph fusions first, so the time to the first fused candidate is not spent on cuts.
    for (bool fused : {true, false}) {
      for (size_t c = 0; c < cuts_.size(); ++c) {
        if (cuts_[c].prefix.empty() != fused) continue;
        for (BlockPlan &p : plans_for(cuts_[c].request, classes_, options_.max_grid_axes)) {
          tasks_.push_back({c, std::move(p)});
        }
      }
      if (fused) fused_tasks_ = tasks_.size();
    }
    return true;
  }

  size_t num_tasks() const { return tasks_.size(); }

  SubtreeFound subtree(size_t task, const Subtree &subtree, BlockSearchStats &stats,
                       const std::function<bool()> &stop) const {
    const std::optional<std::vector<std::vector<int64_t>>> sizes = sizes_of(tasks_.at(task));
    if (!sizes) return SubtreeFound{{}, {}, true};
    SearchContext context = context_;
    if (stop) context.should_stop = stop;
    return search_block_subtree(context, cuts_[tasks_[task].cut].request, tasks_[task].plan,
                                structure_config(tasks_[task], *sizes), subtree, stats);
  }

  KernelGraph structure_graph(size_t task, std::shared_ptr<const BlockGraph> structure) const {
    KernelGraph g;
    std::vector<TensorId> in;
    for (TensorId t : cuts_[tasks_.at(task).cut].request.inputs) {
      in.push_back(g.new_input(graph_.tensor(t).dims, graph_.tensor(t).dtype));
    }
    for (TensorId o : g.customized(in, std::move(structure))) g.mark_output(o);
    return g;
  }

  SearchResult run(const TaskStructures *given) {
    if (given_ = given; !prepare()) {
      finish_stats();
      return std::move(result_);
    }
    if (given_ && given_->size() != tasks_.size()) {
      throw Error(ErrorCode::kInternal, "superoptimize: " + std::to_string(given_->size()) + " tasks' structures for " +
                                            std::to_string(tasks_.size()) + " tasks");
    }
    verify(enumerate(0, fused_tasks_));
    verify(enumerate(fused_tasks_, tasks_.size()));
    std::stable_sort(
        result_.candidates.begin(), result_.candidates.end(),
        [](const SearchCandidate &a, const SearchCandidate &b) { return a.estimated_seconds < b.estimated_seconds; });
    finish_stats();
    return std::move(result_);
  }

 private:
  // Cancelled, or `fraction` of the budget spent (one clock read: the block search asks before
  // every attempt).
  bool past(double fraction) {
    SearchEnd complete = SearchEnd::kComplete;
    if (options_.cancelled && options_.cancelled()) {
      end_.compare_exchange_strong(complete, SearchEnd::kCancelled);
      return true;
    }
    if (seconds_since(started_) >= fraction * options_.time_budget_seconds) {
      end_.compare_exchange_strong(complete, SearchEnd::kTimeout);
      return true;
    }
    return false;
  }
  // Verification ends with the budget, or where candidates are profiled after the search, at
  // kSearchShareWithProfiling of it; enumeration leaves a fifth of that to verification.
  double search_share() const { return options_.measure ? kSearchShareWithProfiling : 1.0; }
  bool stopped() { return past(search_share()); }
  bool stop_enumerating() { return past(0.8 * search_share() * enumeration_share_); }

  // Tasks [begin, end): their structures at every size, by estimate (configurations first).
  // In two rounds: every task up to kFirstRoundStates states, then again from the start, with
  // no limit, those that reached it. One task's tree may hold most of a search's states and
  // none of its candidates, and taken in turn it kept the budget from the tasks after it
  // (docs/search.md, "Time budget"). A complete search finds what one round finds: a task's
  // second round replaces its first, states and all; one the budget stopped keeps whichever
  // round went further. On several threads the second round splits each task's tree
  // (second_round_in_subtrees).
  std::vector<Found> enumerate(size_t begin, size_t end) {
    const size_t n = end - begin;
    std::vector<std::vector<Found>> per_task(n);
    std::vector<BlockSearchStats> stats(n);
    const int threads = options_.threads > 0 ? options_.threads : default_thread_count();
    parallel_for(static_cast<int64_t>(n), threads, [&](int64_t k) {
      if (stop_enumerating()) return;
      const size_t i = static_cast<size_t>(k);
      per_task[i] = run_task(begin + i, stats[i], kFirstRoundStates);
      if (stats[i].states < kFirstRoundStates) report(stats[i].states, per_task[i].size());
    });
    std::vector<size_t> unfinished;
    for (size_t i = 0; i < n; ++i) {
      if (stats[i].states >= kFirstRoundStates) unfinished.push_back(i);
    }
    if (threads > 1 && !given_) {
      second_round_in_subtrees(begin, unfinished, threads, per_task, stats);
    } else {
      parallel_for(static_cast<int64_t>(unfinished.size()), threads, [&](int64_t k) {
        const size_t i = unfinished[static_cast<size_t>(k)];
        if (!stop_enumerating()) {
          BlockSearchStats whole;
          std::vector<Found> found = run_task(begin + i, whole, 0);
          if (whole.states >= stats[i].states) {
            per_task[i] = std::move(found);
            stats[i] = whole;
          }
        }
        report(stats[i].states, per_task[i].size());  // the first round's where it did not run
      });
    }
    std::vector<Found> all;
    for (size_t k = 0; k < n; ++k) {
      block_stats_.add(stats[k]);
      for (Found &f : per_task[k]) all.push_back(std::move(f));
    }
    result_.stats.plans += static_cast<int64_t>(n);
    std::stable_sort(all.begin(), all.end(), [](const Found &a, const Found &b) { return a.seconds < b.seconds; });
    return configurations_first(std::move(all));
  }

  // The second round of tasks begin + `unfinished` on `threads` threads. Each task's tree is
  // split breadth first into subtrees, as a sharded search splits it (shards.hpp), until it has
  // kSubtreesPerThread per thread; the threads take the subtrees in turn, so a task holding most
  // of the states no longer runs on one thread while the others wait. A task's structures are
  // its subtrees' in depth-first order: what the whole tree gives, states and all.
  void second_round_in_subtrees(size_t begin, const std::vector<size_t> &unfinished, int threads,
                                std::vector<std::vector<Found>> &per_task, std::vector<BlockSearchStats> &stats) {
    struct Split {
      std::vector<KeyedStructure> structures;  // of the nodes taken apart, then of every subtree
      std::vector<SearchPath> subtrees;
      BlockSearchStats stats;
    };
    const auto stop = [this] { return stop_enumerating(); };
    const size_t wanted = kSubtreesPerThread * static_cast<size_t>(threads);
    std::vector<Split> splits(unfinished.size());
    parallel_for(static_cast<int64_t>(unfinished.size()), threads, [&](int64_t k) {
      Split &split = splits[static_cast<size_t>(k)];
      std::deque<SearchPath> frontier{SearchPath{}};
      for (size_t taken = 0; !frontier.empty() && frontier.size() < wanted && taken < 2 * wanted; ++taken) {
        SubtreeFound found =
            subtree(begin + unfinished[static_cast<size_t>(k)], Subtree{frontier.front(), 0}, split.stats, stop);
        frontier.pop_front();
        for (KeyedStructure &s : found.structures) split.structures.push_back(std::move(s));
        for (SearchPath &child : found.beyond) frontier.push_back(std::move(child));
        if (!found.complete) return;  // stopped: no subtrees, the states so far
      }
      split.subtrees.assign(frontier.begin(), frontier.end());
    });
    std::vector<std::pair<size_t, size_t>> jobs;  // (split, subtree)
    for (size_t k = 0; k < splits.size(); ++k) {
      report(splits[k].stats.states, 0);  // the nodes taken apart
      for (size_t t = 0; t < splits[k].subtrees.size(); ++t) jobs.emplace_back(k, t);
    }
    std::vector<SubtreeFound> done(jobs.size());
    std::vector<BlockSearchStats> job_stats(jobs.size());
    parallel_for(static_cast<int64_t>(jobs.size()), threads, [&](int64_t j) {
      const auto [k, t] = jobs[static_cast<size_t>(j)];
      if (stop_enumerating()) return;
      done[static_cast<size_t>(j)] =
          subtree(begin + unfinished[k], Subtree{splits[k].subtrees[t], -1}, job_stats[static_cast<size_t>(j)], stop);
      report(job_stats[static_cast<size_t>(j)].states, 0);  // progress while a big task runs
    });
    for (size_t j = 0; j < jobs.size(); ++j) {
      Split &split = splits[jobs[j].first];
      split.stats.add(job_stats[j]);
      for (KeyedStructure &s : done[j].structures) split.structures.push_back(std::move(s));
    }
    parallel_for(static_cast<int64_t>(splits.size()), threads, [&](int64_t k) {
      Split &split = splits[static_cast<size_t>(k)];
      const size_t i = unfinished[static_cast<size_t>(k)];
      if (split.stats.states >= stats[i].states) {  // stopped by the budget: the round that went further
        per_task[i] = at_every_size(begin + i, in_depth_first_order(std::move(split.structures)));
        stats[i] = split.stats;
      }
      report(0, per_task[i].size());  // its states were reported as its subtrees ended
    });
  }

  // The kernels' grids and loop ranges: what structures found for the same sizes share.
  static std::string configuration(const KernelGraph &g) {
    std::string key;
    for (const Operator &op : g.operators()) {
      key += op_name(op.kind);
      if (op.block_graph) {
        const BlockGraphConfig &c = op.block_graph->config();
        key += "(" + std::to_string(c.grid[0]) + "x" + std::to_string(c.grid[1]) + "x" + std::to_string(c.grid[2]) +
               " loop " + std::to_string(c.forloop_range) + ")";
      }
      key += ";";
    }
    return key;
  }
  // Candidates sorted by estimate, each configuration's cheapest first, then the others: the
  // places verification fills (and profiling measures) go to different configurations before
  // further structures of one. Structures of the same configuration often estimate the same,
  // and several of them would take every place (attention's three forms of Σ E at 8 query rows
  // per block took 3 of 4 places, estimated just below the faster 16-row blocks: docs/search.md).
  static std::vector<Found> configurations_first(std::vector<Found> sorted) {
    std::set<std::string> seen;
    std::vector<Found> first, rest;
    for (Found &f : sorted) (seen.insert(configuration(f.graph)).second ? first : rest).push_back(std::move(f));
    for (Found &f : rest) first.push_back(std::move(f));
    return first;
  }

  void report(int64_t states, size_t candidates) {
    std::lock_guard lock(mutex_);
    progress_.states += states;
    progress_.candidates += static_cast<int64_t>(candidates);
    progress_.seconds = seconds_since(started_);
    if (options_.progress) options_.progress(progress_);
  }

  // The block counts per grid axis, then the loop ranges, of a task; nothing where no size fits
  // it (or the fixed grid or loop asks for other axes).
  std::optional<std::vector<std::vector<int64_t>>> sizes_of(const Task &task) const {
    std::vector<std::vector<int64_t>> sizes;
    for (size_t a = 0; a < task.plan.grid_classes.size(); ++a) {
      sizes.push_back(grid_sizes(options_, classes_.extent(task.plan.grid_classes[a]), a));
    }
    if (task.plan.loop_class >= 0) {
      sizes.push_back(loop_sizes(options_, classes_.extent(task.plan.loop_class)));
    }
    if (options_.fixed_grid) {
      size_t split = 0;
      for (int64_t g : *options_.fixed_grid) split += g > 1;
      if (split != task.plan.grid_classes.size()) return std::nullopt;
    }
    if (options_.fixed_forloop && (*options_.fixed_forloop > 1) != (task.plan.loop_class >= 0)) {
      return std::nullopt;
    }
    for (const auto &s : sizes) {
      if (s.empty()) return std::nullopt;
    }
    return sizes;
  }

  // Structures do not depend on the sizes (a term sums the same elements however they are
  // tiled), so they are searched once, at the smallest tiles (the likeliest to fit).
  BlockGraphConfig structure_config(const Task &task, const std::vector<std::vector<int64_t>> &sizes) const {
    std::vector<int64_t> smallest_tiles;
    for (const auto &s : sizes) smallest_tiles.push_back(*std::max_element(s.begin(), s.end()));
    return config_for(task.plan, smallest_tiles);
  }

  // Searches structures at one size (or takes the given ones), then builds every structure at
  // every size. `max_states` > 0 stops the structure search there (or just past it: the stop is
  // asked every few states).
  std::vector<Found> run_task(size_t index, BlockSearchStats &stats, int64_t max_states) {
    const Task &task = tasks_[index];
    const std::optional<std::vector<std::vector<int64_t>>> sizes = sizes_of(task);
    if (!sizes) return {};
    if (given_) return at_every_size(index, (*given_)[index]);
    SearchContext context = context_;
    if (max_states > 0) context.should_stop = [&] { return stats.states >= max_states || stop_enumerating(); };
    return at_every_size(
        index, search_block_graphs(context, cuts_[task.cut].request, task.plan, structure_config(task, *sizes), stats));
  }

  // Task `index`'s structures built at every size its plan allows.
  std::vector<Found> at_every_size(size_t index, const std::vector<std::shared_ptr<const BlockGraph>> &structures) {
    const Task &task = tasks_[index];
    const Cut &cut = cuts_[task.cut];
    const std::optional<std::vector<std::vector<int64_t>>> found_sizes = sizes_of(task);
    if (!found_sizes) return {};
    const std::vector<std::vector<int64_t>> &sizes = *found_sizes;
    std::vector<Found> found;
    std::vector<size_t> pick(sizes.size(), 0);
    for (;;) {
      std::vector<int64_t> chosen;
      for (size_t k = 0; k < sizes.size(); ++k) chosen.push_back(sizes[k][pick[k]]);
      const BlockGraphConfig config = config_for(task.plan, chosen);
      for (const auto &s : structures) instantiate(cut, s, config, found);
      size_t k = 0;
      while (k < pick.size() && ++pick[k] == sizes[k].size()) pick[k++] = 0;
      if (k == pick.size()) break;
    }
    return found;
  }

  BlockGraphConfig config_for(const BlockPlan &plan, const std::vector<int64_t> &sizes) const {
    BlockGraphConfig c;
    for (size_t a = 0; a < plan.grid_classes.size(); ++a) c.grid[a] = sizes[a];
    if (plan.loop_class >= 0) c.forloop_range = sizes.back();
    const targets::TargetProperties &t = options_.target;
    c.block_threads = t.kind == targets::TargetKind::kCpu ? 1 : std::min<int64_t>(128, t.max_threads_per_block);
    c.shared_memory_limit = t.shared_memory_per_block;
    c.max_threads_per_block = t.max_threads_per_block;
    return c;
  }

  void instantiate(const Cut &cut, const std::shared_ptr<const BlockGraph> &structure, const BlockGraphConfig &config,
                   std::vector<Found> &out) {
    try {
      // On the graph itself: the twin's operators are its operators, dims apart.
      std::shared_ptr<BlockGraph> block;
      if (padded_) {
        std::vector<Dims> dims;
        for (TensorId t : cut.request.inputs) dims.push_back(real_.tensor(t).dims);
        block = std::make_shared<BlockGraph>(on_dims(*structure, config, dims));
      } else {
        block = std::make_shared<BlockGraph>(rebuild(*structure, config));
      }
      KernelGraph g;
      std::vector<TensorId> ids(real_.num_tensors(), -1);
      for (TensorId t : real_.inputs()) {
        ids[static_cast<size_t>(t)] = g.new_input(real_.tensor(t).dims, real_.tensor(t).dtype);
      }
      for (size_t i : cut.prefix) {
        const Operator &op = real_.operators()[i];
        std::vector<TensorId> in;
        for (TensorId t : op.inputs) in.push_back(ids[static_cast<size_t>(t)]);
        const auto outs = add_operator(g, op, in);
        for (size_t o = 0; o < outs.size(); ++o) ids[static_cast<size_t>(op.outputs[o])] = outs[o];
      }
      std::vector<TensorId> in;
      for (TensorId t : cut.request.inputs) in.push_back(ids[static_cast<size_t>(t)]);
      const auto outs = g.customized(in, block);
      for (size_t o = 0; o < outs.size(); ++o) {
        ids[static_cast<size_t>(cut.request.outputs[o])] = outs[o];
      }
      for (TensorId o : real_.outputs()) g.mark_output(ids[static_cast<size_t>(o)]);
      const CostEstimate cost = estimate_cost(g, options_.target, options_.backend_estimates);
      if (!cost.feasible) {
        std::lock_guard lock(mutex_);
        ++result_.stats.infeasible;
        return;
      }
      size_t views = 0;
      for (size_t i : cut.prefix) views += is_view(graph_.operators()[i].kind);
      std::string what;
      if (cut.prefix.size() > views) what = std::to_string(cut.prefix.size() - views) + " pre-defined kernel(s), ";
      if (views > 0) what += std::to_string(views) + " view(s), ";
      if (!what.empty()) what.replace(what.size() - 2, 2, ", then ");
      what += "customized grid " + std::to_string(config.grid[0]) + "x" + std::to_string(config.grid[1]) + "x" +
              std::to_string(config.grid[2]) + " loop " + std::to_string(config.forloop_range) + " (" +
              std::to_string(structure->operators().size()) + " block operators)";
      // The loop split over more blocks, where the blocks fill at most half of the device; each
      // split is its own structure for verification. (A grid that already fills the device,
      // gated_mlp's, measured slower split in 2: the cost model's per-iteration term overrates
      // shorter loops.) Past kFewLoopParts, only while the split grid stays within four waves
      // and each part keeps kMinIterationsPerPart iterations: a decode attention over 32 K keys
      // (8 blocks, 2048 iterations) streams its cache fastest over hundreds of blocks.
      const size_t customized = g.operators().size() - 1;
      const int64_t blocks = config.grid[0] * config.grid[1] * config.grid[2];
      const int64_t units = options_.target.compute_units;
      for (int64_t parts = 2; parts <= kMaxLoopParts && 2 * blocks <= units; parts *= 2) {
        if (parts > kFewLoopParts &&
            (parts * blocks > 4 * units || config.forloop_range / parts < kMinIterationsPerPart)) {
          break;
        }
        std::optional<KernelGraph> split = split_loop(g, customized, parts);
        if (!split) continue;
        const CostEstimate split_cost = estimate_cost(*split, options_.target, options_.backend_estimates);
        if (!split_cost.feasible) continue;
        auto key = split->operators()[customized].block_graph;
        out.push_back(Found{std::move(*split), split_cost.seconds,
                            what + ", loop split over " + std::to_string(parts) + " blocks", std::move(key),
                            cut.prefix.empty()});
      }
      out.push_back(Found{std::move(g), cost.seconds, std::move(what), structure, cut.prefix.empty()});
    } catch (const Error &e) {
      // These sizes cut a dim into empty parts or overflow shared memory, or a ragged tile meets
      // what it cannot do (ragged_tiles.hpp): not a candidate. A backend's failure (its
      // estimate) ends the search.
      if (e.code() == ErrorCode::kBackend) throw;
    }
  }

  // Verifies candidates cheapest first until max_candidates pass. The last place goes to a
  // candidate with another kernel count than all the others where one passes: the cost model
  // compares graphs of one shape better than shapes (see SearchOptions::measure).
  void verify(std::vector<Found> found) {
    result_.stats.candidates += static_cast<int64_t>(found.size());
    size_t passed_over = found.size();  // the first candidate passed over for that place
    for (size_t i = 0; i < found.size() && room() && !stopped(); ++i) {
      if (keeps_place_for_another_shape(found[i])) {
        passed_over = std::min(passed_over, i);
        continue;
      }
      admit(found[i]);
    }
    // No other kernel count passed: the place goes to the cheapest of the rest.
    for (size_t i = passed_over; i < found.size() && room() && !stopped(); ++i) admit(found[i]);
    rejected_.clear();  // the structures die with `found`
  }

  bool room() const { return static_cast<int>(result_.candidates.size()) < options_.max_candidates; }

  bool keeps_place_for_another_shape(const Found &f) const {
    return options_.max_candidates >= 2 && static_cast<int>(result_.candidates.size()) + 1 == options_.max_candidates &&
           kernel_counts_.size() == 1 && kernel_counts_.count(kernel_count(f.graph)) != 0;
  }

  // Fingerprints `f` and keeps it if it passes and the backend can build it. A candidate the
  // cost model puts past kHopeless times the input graph is not checked (on a large graph a
  // check costs seconds to minutes); a check still running at the budget's end is stopped.
  void admit(Found &f) {
    if (rejected_.count(f.structure.get())) return;  // a wrong structure is wrong at every size
    if (f.seconds > kHopeless * input_estimate_) {
      ++result_.stats.infeasible;
      return;
    }
    // Ragged tiles only some backends build: asked first, before the fingerprint's cost.
    const bool ragged = padded_ && has_ragged(f.graph);
    if (ragged && !builds(options_, f.graph)) {
      ++result_.stats.unbuildable;
      return;
    }
    verify::EquivalenceResult r;
    try {
      r = fingerprint_.check(f.graph, [this] { return stopped(); });
    } catch (const Error &e) {
      if (e.code() == ErrorCode::kTimeout) return;  // stopped() recorded the end
      // What the fingerprints cannot evaluate (exp of a value computed with exp:
      // docs/verification.md), in the candidate or the graph itself, is never admitted.
      if (e.code() != ErrorCode::kUnsupported) throw;
      util::log_line(util::LogLevel::kDebug, "search: " + f.description + " not checked: " + e.what());
      return;
    }
    ++result_.stats.fingerprint_checks;
    result_.stats.fingerprint_seconds += r.seconds;
    if (!r.equivalent) {
      ++result_.stats.fingerprint_rejected;
      rejected_.insert(f.structure.get());
      return;
    }
    // Only this size is refused: the same structure with smaller tiles may build.
    if (!ragged && !builds(options_, f.graph)) {
      ++result_.stats.unbuildable;
      return;
    }
    if (f.fully_fused && result_.stats.first_fused_seconds < 0) {
      result_.stats.first_fused_seconds = seconds_since(started_);
    }
    kernel_counts_.insert(kernel_count(f.graph));
    result_.candidates.push_back(SearchCandidate{std::move(f.graph), f.seconds, r.trials, std::move(f.description)});
  }

  void finish_stats() {
    SearchStats &s = result_.stats;
    add_block_counts(s, block_stats_);
    if (oracle_) {
      const OracleStats o = oracle_->stats();
      s.oracle_queries = o.queries;
      s.oracle_index_answers = o.index_yes + o.index_no;
      s.z3_queries = o.z3_queries;
      s.z3_proved = o.z3_yes;
      s.z3_unknown = o.z3_unknown;
      s.z3_seconds = o.z3_seconds;
    }
    s.seconds = seconds_since(started_);
    result_.end = end_;
  }

  static bool has_ragged(const KernelGraph &g) {
    return std::any_of(g.operators().begin(), g.operators().end(), [](const Operator &op) {
      return op.kind == OpKind::kCustomized && has_ragged_tiles(*op.block_graph);
    });
  }

  const KernelGraph &graph_;  // what is searched: the graph, or its twin
  const KernelGraph &real_;   // what candidates are built on: the graph
  const bool padded_;
  const SearchOptions &options_;
  DimClasses classes_;
  bool fusions_only_;
  bool prepared_ = false;
  std::vector<Task> tasks_;  // whole-graph fusions first, then the cuts
  size_t fused_tasks_ = 0;
  const TaskStructures *given_ = nullptr;
  std::vector<Expr> terms_;
  std::unique_ptr<SubexpressionOracle> oracle_;
  SearchContext context_;
  std::vector<Cut> cuts_;
  const verify::FingerprintCheck &fingerprint_;
  std::set<const BlockGraph *> rejected_;
  std::set<size_t> kernel_counts_;  // of the candidates verified
  double input_estimate_ = 0;       // the cost model's of the input graph
  BlockSearchStats block_stats_;
  SearchResult result_;
  SearchProgress progress_;
  std::atomic<SearchEnd> end_{SearchEnd::kComplete};
  const Clock::time_point started_;
  const double enumeration_share_;  // of the enumeration's time: by its end this pass stops enumerating
  std::mutex mutex_;
};

namespace {

// `other`'s candidates and counts added to `result`'s (candidates by estimate again).
void merge(SearchResult &result, SearchResult other) {
  for (SearchCandidate &c : other.candidates) result.candidates.push_back(std::move(c));
  std::stable_sort(
      result.candidates.begin(), result.candidates.end(),
      [](const SearchCandidate &a, const SearchCandidate &b) { return a.estimated_seconds < b.estimated_seconds; });
  add_counts(result.stats, other.stats);
  result.stats.seconds = std::max(result.stats.seconds, other.stats.seconds);
  if (result.end == SearchEnd::kComplete) result.end = other.end;
}

}  // namespace

std::vector<PassForm> pass_forms(const KernelGraph &graph, bool twins) {
  // Weighted norms before products fuse whole as a norm times their weight (norm_weights.hpp):
  // that form's whole-graph fusions join the graph's own candidates.
  std::vector<PassForm> forms;
  KernelGraph apart = weights_apart(graph);
  if (apart.operators().size() != graph.operators().size()) forms.push_back({std::move(apart), true, std::nullopt});
  forms.push_back({graph, false, std::nullopt});
  if (twins) {
    for (PassForm &f : forms) f.twin = padded_twin(f.graph);
  }
  return forms;
}

SearchResult run_passes(const KernelGraph &graph, const SearchOptions &options, Clock::time_point started,
                        const std::vector<TaskStructures> *given) {
  // A sharded search's structures (`given`) were found on the twins: its units know no device.
  const std::vector<PassForm> forms = pass_forms(graph, options.ragged_tiles || given != nullptr);
  if (given && given->size() != forms.size()) {
    throw Error(ErrorCode::kInternal, "superoptimize: structures for " + std::to_string(given->size()) +
                                          " passes, not " + std::to_string(forms.size()));
  }
  const verify::FingerprintCheck fingerprints(graph, {options.verify_trials, options.seed, options.threads});
  SearchResult result;
  for (size_t p = 0; p < forms.size(); ++p) {
    // Pass p of n stops enumerating at (p + 1) / n of the enumeration's time: a pass done early
    // leaves its time to the next.
    const double share = static_cast<double>(p + 1) / static_cast<double>(forms.size());
    SearchResult found = SearchPass(forms[p].graph, options, started, fingerprints, forms[p].fusions_only,
                                    SearchProgress{result.stats.states, result.stats.candidates, 0}, share,
                                    forms[p].twin ? &*forms[p].twin : nullptr)
                             .run(given ? &(*given)[p] : nullptr);
    if (p == 0) {
      result = std::move(found);
    } else {
      // The graph's own candidates first among equal estimates, as they always were.
      merge(found, std::move(result));
      result = std::move(found);
    }
  }
  return result;
}

SearchPass::SearchPass(const KernelGraph &graph, const SearchOptions &options, Clock::time_point started,
                       const verify::FingerprintCheck &fingerprints, bool fusions_only, const SearchProgress &before,
                       double enumeration_share, const KernelGraph *twin)
    : impl_(std::make_unique<Impl>(graph, options, started, fingerprints, fusions_only, before, enumeration_share,
                                   twin)) {}

SearchPass::~SearchPass() = default;

bool SearchPass::prepare() {
  return impl_->prepare();
}

size_t SearchPass::num_tasks() const {
  return impl_->num_tasks();
}

SubtreeFound SearchPass::subtree(size_t task, const Subtree &subtree, BlockSearchStats &stats,
                                 const std::function<bool()> &stop) const {
  return impl_->subtree(task, subtree, stats, stop);
}

KernelGraph SearchPass::structure_graph(size_t task, std::shared_ptr<const BlockGraph> structure) const {
  return impl_->structure_graph(task, std::move(structure));
}

SearchResult SearchPass::run(const TaskStructures *given) {
  return impl_->run(given);
}

}  // namespace yirage::search
