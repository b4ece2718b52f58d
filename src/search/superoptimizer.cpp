#include "search/superoptimizer.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>

#include "ir/block_graph.hpp"
#include "ir/rebuild.hpp"
#include "search/block_search.hpp"
#include "search/cost_model.hpp"
#include "search/dim_classes.hpp"
#include "search/loop_split.hpp"
#include "search/norm_weights.hpp"
#include "search/result_cache.hpp"
#include "search/segments.hpp"
#include "search/terms.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"
#include "verify/equivalence.hpp"

namespace yirage::search {

namespace {

// A fused candidate's loop is also tried split over 2, 4, ... this many blocks (loop_split.hpp);
// beyond kFewLoopParts only for long loops on grids that stay within a few waves.
constexpr int64_t kMaxLoopParts = 128;
constexpr int64_t kFewLoopParts = 16;
constexpr int64_t kMinIterationsPerPart = 8;
// Where candidates are profiled, the search (enumeration and verification) takes this share of
// the budget and profiling the rest.
constexpr double kSearchShareWithProfiling = 0.75;
// Candidates the cost model puts past this many times the input graph's estimate are not
// verified: none measured faster than the input graph in the suites (the model's errors on
// fused candidates run the other way, too fast), and on a large graph a check takes minutes (a
// 262 144-block µGraph of llama3_8b.mlp_up.t256, estimated 700 times the input graph, took 111 s).
constexpr double kHopeless = 10;

size_t kernel_count(const KernelGraph &g) {
  return g.operators().size() - g.inputs().size();
}

// SearchOptions::buildable's answer; true where there is none to ask.
bool builds(const SearchOptions &o, const KernelGraph &g) {
  return !o.buildable || o.buildable(g);
}

}  // namespace

void validate(const SearchOptions &o) {
  targets::validate(o.target);
  auto bad = [](const std::string &what) { invalid_argument("superoptimize: " + what); };
  if (!(o.time_budget_seconds > 0)) bad("time_budget_seconds must be positive");
  if (o.threads < 0) bad("threads must be 0 (all cores) or positive");
  if (o.max_kernel_ops < 1 || o.max_kernel_ops > 8) bad("max_kernel_ops must be in 1..8");
  if (o.max_block_ops < 1 || o.max_block_ops > 16) bad("max_block_ops must be in 1..16");
  if (o.max_grid_axes < 0 || o.max_grid_axes > 3) bad("max_grid_axes must be in 0..3");
  if (o.max_customized_inputs < 1 || o.max_customized_inputs > 16) {
    bad("max_customized_inputs must be in 1..16");
  }
  if (o.max_candidates < 1) bad("max_candidates must be at least 1");
  if (o.verify_trials < 1 || o.verify_trials > 16) bad("verify_trials must be in 1..16");
  if (o.z3_rlimit < 0) bad("z3_rlimit must not be negative");
  for (int64_t g : o.grid_candidates) {
    if (g < 2) bad("grid_candidates must all be at least 2 (an axis of one block is no axis)");
  }
  for (int64_t f : o.forloop_candidates) {
    if (f < 2) bad("forloop_candidates must all be at least 2 (a range of 1 is no loop)");
  }
  if (o.fixed_grid) {
    for (int64_t g : *o.fixed_grid) {
      if (g < 1) bad("fixed_grid sizes must be positive");
    }
  }
  if (o.fixed_forloop && *o.fixed_forloop < 1) bad("fixed_forloop must be positive");
  if (o.profile_top_k < 1) bad("profile_top_k must be at least 1");
  if (o.segment_above_ops < 0) bad("segment_above_ops must be 0 (never in segments) or positive");
  if (o.max_segment_ops < 1) bad("max_segment_ops must be at least 1");
}

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Powers of two p dividing `extent` with 2 <= p <= limit; at most `count` of them, spread over
// the range (largest first).
std::vector<int64_t> spread_powers(int64_t extent, int64_t limit, size_t count) {
  std::vector<int64_t> all;
  for (int64_t p = 2; p <= std::min(extent, limit); p *= 2) {
    if (extent % p == 0) all.push_back(p);
  }
  std::reverse(all.begin(), all.end());
  if (all.size() <= count) return all;
  std::vector<int64_t> picked;
  for (size_t k = 0; k < count; ++k) picked.push_back(all[k * (all.size() - 1) / (count - 1)]);
  return picked;
}

}  // namespace

std::vector<int64_t> grid_sizes(const SearchOptions &o, int64_t extent, size_t axis) {
  if (o.fixed_grid) {
    const int64_t g = (*o.fixed_grid)[axis];
    return extent % g == 0 && g > 1 ? std::vector<int64_t>{g} : std::vector<int64_t>{};
  }
  if (!o.grid_candidates.empty()) {
    std::vector<int64_t> fit;
    for (int64_t g : o.grid_candidates) {
      if (extent % g == 0) fit.push_back(g);
    }
    return fit;
  }
  const targets::TargetProperties &t = o.target;
  const int64_t slots = t.compute_units * std::max<int64_t>(1, t.max_blocks_per_compute_unit);
  std::vector<int64_t> sizes = spread_powers(extent, std::max<int64_t>(2, 4 * slots), 3);
  // Tiles 1, 2 and 4 times as tall as the matrix unit, where that leaves fewer blocks than
  // compute units (an axis the spread above jumps over: attention's 256 query rows get 256, 32
  // and 2 blocks; 16 blocks of 16 rows, one mma tile each, run it fastest unsplit, and 4 blocks
  // of 64 rows split over 16 key chunks faster still than 16 rows over 4 chunks: the fewer rows
  // a block takes, the more often K and V are read).
  const int64_t rows = t.matrix_unit[0];
  for (int64_t tiles = 1; rows > 1 && tiles <= 4; tiles *= 2) {
    if (extent % (rows * tiles) != 0) break;
    const int64_t blocks = extent / (rows * tiles);
    if (blocks >= 2 && blocks < t.compute_units && (blocks & (blocks - 1)) == 0 &&
        std::find(sizes.begin(), sizes.end(), blocks) == sizes.end()) {
      sizes.push_back(blocks);
    }
  }
  // One and two waves of blocks on a GPU (the powers of two nearest its compute units): a
  // memory-bound product streams its weights at full rate only with every unit loading, and the
  // spread above can jump over both (6144 columns: 2048, 64 and 2 blocks on an H100's 132). And
  // tiles of 32: the columns one block of CUDA's weight-product kernel streams (16-bit weights,
  // backends/cuda/codegen/cuda_matmul.hpp), which takes a µGraph of a few rows only at that grid.
  if (t.kind != targets::TargetKind::kCpu) {
    int64_t wave = 1;
    while (wave * 2 <= t.compute_units) wave *= 2;
    for (int64_t blocks : {wave, 2 * wave, extent % 32 == 0 ? extent / 32 : 0}) {
      if (blocks >= 2 && extent % blocks == 0 && std::find(sizes.begin(), sizes.end(), blocks) == sizes.end()) {
        sizes.push_back(blocks);
      }
    }
  }
  std::sort(sizes.rbegin(), sizes.rend());
  return sizes;
}

namespace {

std::vector<int64_t> loop_sizes(const SearchOptions &o, int64_t extent) {
  std::vector<int64_t> fit;
  if (o.fixed_forloop) {
    if (*o.fixed_forloop > 1 && extent % *o.fixed_forloop == 0) fit.push_back(*o.fixed_forloop);
    return fit;
  }
  if (!o.forloop_candidates.empty()) {
    for (int64_t f : o.forloop_candidates) {
      if (extent % f == 0) fit.push_back(f);
    }
    return fit;
  }
  // Tiles of at least 16 elements along the loop, so each iteration feeds the matrix unit.
  return spread_powers(extent, std::max<int64_t>(2, extent / 16), 3);
}

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

class Superoptimizer {
 public:
  // `started`: when the call began (its budget counts from then). `fingerprints`: the check
  // against the user's graph, shared by the call's passes (its fingerprints are computed once).
  // `fusions_only`: only cuts whose pre-defined part is views (whole-graph fusions). `before`:
  // the progress of an earlier pass of the same call, which this one's reports continue.
  Superoptimizer(const KernelGraph &graph, const SearchOptions &options, Clock::time_point started,
                 const verify::FingerprintCheck &fingerprints, bool fusions_only = false,
                 const SearchProgress &before = {})
      : graph_(graph),
        options_(options),
        classes_(graph),
        fusions_only_(fusions_only),
        fingerprint_(fingerprints),
        progress_(before),
        started_(started) {}

  SearchResult run() {
    std::optional<std::vector<Expr>> terms = kernel_terms_within(graph_, [this] { return stop_enumerating(); });
    if (!terms) {
      // Out of time, or terms too long to search at all (kernel_terms_within): nothing found.
      SearchEnd complete = SearchEnd::kComplete;
      end_.compare_exchange_strong(complete, SearchEnd::kTimeout);
      finish_stats();
      return std::move(result_);
    }
    terms_ = std::move(*terms);
    input_estimate_ = estimate_cost(graph_, options_.target, options_.loop_waits).seconds;
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
    std::vector<Task> fused_tasks, other_tasks;
    for (size_t c = 0; c < cuts_.size(); ++c) {
      for (BlockPlan &p : plans_for(cuts_[c].request, classes_, options_.max_grid_axes)) {
        (cuts_[c].prefix.empty() ? fused_tasks : other_tasks).push_back({c, std::move(p)});
      }
    }
    // Whole-graph fusions first, so the time to the first fused candidate is not spent on cuts.
    verify(enumerate(fused_tasks));
    verify(enumerate(other_tasks));
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
    if (since(started_) >= fraction * options_.time_budget_seconds) {
      end_.compare_exchange_strong(complete, SearchEnd::kTimeout);
      return true;
    }
    return false;
  }
  // Verification ends with the budget, or where candidates are profiled after the search, at
  // kSearchShareWithProfiling of it; enumeration leaves a fifth of that to verification.
  double search_share() const { return options_.measure ? kSearchShareWithProfiling : 1.0; }
  bool stopped() { return past(search_share()); }
  bool stop_enumerating() { return past(0.8 * search_share()); }

  std::vector<Found> enumerate(const std::vector<Task> &tasks) {
    std::vector<std::vector<Found>> per_task(tasks.size());
    std::vector<BlockSearchStats> stats(tasks.size());
    const int threads = options_.threads > 0 ? options_.threads : default_thread_count();
    parallel_for(static_cast<int64_t>(tasks.size()), threads, [&](int64_t k) {
      if (stop_enumerating()) return;
      per_task[static_cast<size_t>(k)] = run_task(tasks[static_cast<size_t>(k)], stats[static_cast<size_t>(k)]);
      report(stats[static_cast<size_t>(k)].states, per_task[static_cast<size_t>(k)].size());
    });
    std::vector<Found> all;
    for (size_t k = 0; k < tasks.size(); ++k) {
      block_stats_.add(stats[k]);
      for (Found &f : per_task[k]) all.push_back(std::move(f));
    }
    result_.stats.plans += static_cast<int64_t>(tasks.size());
    std::stable_sort(all.begin(), all.end(), [](const Found &a, const Found &b) { return a.seconds < b.seconds; });
    return configurations_first(std::move(all));
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
    progress_.seconds = since(started_);
    if (options_.progress) options_.progress(progress_);
  }

  // Searches structures at one size, then builds every structure at every size.
  std::vector<Found> run_task(const Task &task, BlockSearchStats &stats) {
    const Cut &cut = cuts_[task.cut];
    std::vector<std::vector<int64_t>> sizes;  // per grid axis, then the loop
    for (size_t a = 0; a < task.plan.grid_classes.size(); ++a) {
      sizes.push_back(grid_sizes(options_, classes_.extent(task.plan.grid_classes[a]), a));
    }
    if (task.plan.loop_class >= 0) {
      sizes.push_back(loop_sizes(options_, classes_.extent(task.plan.loop_class)));
    }
    if (options_.fixed_grid) {
      size_t split = 0;
      for (int64_t g : *options_.fixed_grid) split += g > 1;
      if (split != task.plan.grid_classes.size()) return {};
    }
    if (options_.fixed_forloop && (*options_.fixed_forloop > 1) != (task.plan.loop_class >= 0)) {
      return {};
    }
    for (const auto &s : sizes) {
      if (s.empty()) return {};
    }
    // Structures do not depend on the sizes (a term sums the same elements however they are
    // tiled), so they are searched once, at the smallest tiles (the likeliest to fit).
    std::vector<int64_t> smallest_tiles;
    for (const auto &s : sizes) smallest_tiles.push_back(*std::max_element(s.begin(), s.end()));
    const auto structures =
        search_block_graphs(context_, cut.request, task.plan, config_for(task.plan, smallest_tiles), stats);
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
      auto block = std::make_shared<BlockGraph>(rebuild(*structure, config));
      KernelGraph g;
      std::vector<TensorId> ids(graph_.num_tensors(), -1);
      for (TensorId t : graph_.inputs()) {
        ids[static_cast<size_t>(t)] = g.new_input(graph_.tensor(t).dims, graph_.tensor(t).dtype);
      }
      for (size_t i : cut.prefix) {
        const Operator &op = graph_.operators()[i];
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
      for (TensorId o : graph_.outputs()) g.mark_output(ids[static_cast<size_t>(o)]);
      const CostEstimate cost = estimate_cost(g, options_.target, options_.loop_waits);
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
        const CostEstimate split_cost = estimate_cost(*split, options_.target, options_.loop_waits);
        if (!split_cost.feasible) continue;
        auto key = split->operators()[customized].block_graph;
        out.push_back(Found{std::move(*split), split_cost.seconds,
                            what + ", loop split over " + std::to_string(parts) + " blocks", std::move(key),
                            cut.prefix.empty()});
      }
      out.push_back(Found{std::move(g), cost.seconds, std::move(what), structure, cut.prefix.empty()});
    } catch (const Error &e) {
      // These sizes do not divide the tensors or overflow shared memory: not a candidate. A
      // backend's failure (its estimate) ends the search.
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
    verify::EquivalenceResult r;
    try {
      r = fingerprint_.check(f.graph, [this] { return stopped(); });
    } catch (const Error &e) {
      if (e.code() != ErrorCode::kTimeout) throw;
      return;  // stopped() recorded the end
    }
    ++result_.stats.fingerprint_checks;
    result_.stats.fingerprint_seconds += r.seconds;
    if (!r.equivalent) {
      ++result_.stats.fingerprint_rejected;
      rejected_.insert(f.structure.get());
      return;
    }
    // Only this size is refused: the same structure with smaller tiles may build.
    if (!builds(options_, f.graph)) {
      ++result_.stats.unbuildable;
      return;
    }
    if (f.fully_fused && result_.stats.first_fused_seconds < 0) {
      result_.stats.first_fused_seconds = since(started_);
    }
    kernel_counts_.insert(kernel_count(f.graph));
    result_.candidates.push_back(SearchCandidate{std::move(f.graph), f.seconds, r.trials, std::move(f.description)});
  }

  void finish_stats() {
    SearchStats &s = result_.stats;
    s.states = block_stats_.states;
    s.pruned_shape = block_stats_.pruned_shape;
    s.pruned_abstract = block_stats_.pruned_abstract;
    s.pruned_canonical = block_stats_.pruned_canonical;
    s.pruned_dead = block_stats_.pruned_dead;
    s.structures = block_stats_.structures;
    if (oracle_) {
      const OracleStats o = oracle_->stats();
      s.oracle_queries = o.queries;
      s.oracle_index_answers = o.index_yes + o.index_no;
      s.z3_queries = o.z3_queries;
      s.z3_proved = o.z3_yes;
      s.z3_unknown = o.z3_unknown;
      s.z3_seconds = o.z3_seconds;
    }
    s.seconds = since(started_);
    result_.end = end_;
  }

  const KernelGraph &graph_;
  const SearchOptions &options_;
  DimClasses classes_;
  bool fusions_only_;
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
  std::mutex mutex_;
};

}  // namespace

namespace {

// The input graph's measurement, made before the search whatever the time: it is correct by
// definition, and without it a search that verified nothing (a budget too short) has no answer;
// made first, its check falls within the budget like the search. `deadline` ends its timed runs. Its estimate stands
// beside the candidates' so that the model's ranking can be checked against the measurements on every graph
// (benchmarks/models/).
struct InputMeasurement {
  SearchCandidate candidate;
  ProfileRecord record;
  Clock::duration took;
};

InputMeasurement measure_input(const KernelGraph &graph, const SearchOptions &options, Clock::time_point deadline) {
  const double estimate = estimate_cost(graph, options.target, options.loop_waits).seconds;
  const auto started = Clock::now();
  InputMeasurement m{SearchCandidate{graph, estimate, 0, "the input graph, unchanged", -1},
                     ProfileRecord{"the input graph, unchanged", estimate, options.measure(graph, deadline)},
                     Clock::duration{}};
  m.took = Clock::now() - started;
  if (m.record.measured.correct) {
    m.candidate.measured_seconds = m.record.measured.seconds;
    m.candidate.spread = m.record.measured.spread;
  }
  return m;
}

// Profiles the cheapest candidates while the budget lasts (see SearchOptions::measure), after
// the input graph's measurement; the input graph joins them. Returns false where the budget ran
// out before every chosen candidate was measured.
bool profile(SearchResult &result, const SearchOptions &options, Clock::time_point deadline, InputMeasurement in) {
  SearchCandidate input = std::move(in.candidate);
  result.profiled.push_back(std::move(in.record));
  // A measurement starts only while the time left is at least the longest one so far (a
  // compile takes most of it, and cannot be stopped halfway).
  Clock::duration longest = in.took;
  Clock::time_point started;
  // The profile_top_k cheapest, the last of them replaced by the cheapest candidate with another
  // kernel count where they all share one.
  std::vector<size_t> chosen;
  for (size_t i = 0; i < result.candidates.size() && static_cast<int>(i) < options.profile_top_k; ++i) {
    chosen.push_back(i);
  }
  std::set<size_t> counts;
  for (size_t i : chosen) counts.insert(kernel_count(result.candidates[i].graph));
  if (chosen.size() >= 2 && counts.size() == 1) {
    for (size_t i = chosen.size(); i < result.candidates.size(); ++i) {
      if (counts.count(kernel_count(result.candidates[i].graph)) == 0) {
        chosen.back() = i;
        break;
      }
    }
  }
  // A place whose candidate does not run correctly (it fails to compile or launch, or its
  // results are wrong) goes to the cheapest candidate not yet profiled.
  std::vector<bool> taken(result.candidates.size(), false), ran(result.candidates.size(), false);
  for (size_t i : chosen) taken[i] = true;
  size_t spare = 0;
  bool in_time = true;
  for (size_t q = 0; q < chosen.size(); ++q) {
    started = Clock::now();
    if (started + longest > deadline) {
      in_time = false;
      for (size_t r = q; r < chosen.size(); ++r) {  // returned unmeasured
        taken[chosen[r]] = false;
        result.candidates[chosen[r]].not_measured = "the budget ran out before its turn";
      }
      break;
    }
    SearchCandidate &c = result.candidates[chosen[q]];
    ProfileRecord record{c.description, c.estimated_seconds, options.measure(c.graph, deadline)};
    longest = std::max(longest, Clock::now() - started);
    if (record.measured.correct) {
      c.measured_seconds = record.measured.seconds;
      c.spread = record.measured.spread;
      ran[chosen[q]] = true;
    } else {
      while (spare < taken.size() && taken[spare]) ++spare;
      if (spare < taken.size()) {
        taken[spare] = true;
        chosen.push_back(spare);
      }
    }
    result.profiled.push_back(std::move(record));
  }
  std::vector<SearchCandidate> correct, rest;
  for (size_t i = 0; i < result.candidates.size(); ++i) {
    if (ran[i]) {
      correct.push_back(std::move(result.candidates[i]));
    } else if (!taken[i]) {
      SearchCandidate &c = result.candidates[i];
      if (c.not_measured.empty()) {
        c.not_measured = "not among the " + std::to_string(options.profile_top_k) + " cheapest estimates profiled";
      }
      rest.push_back(std::move(c));
    }
  }
  if (input.measured_seconds >= 0) correct.push_back(std::move(input));
  std::stable_sort(correct.begin(), correct.end(), [](const SearchCandidate &a, const SearchCandidate &b) {
    return a.measured_seconds < b.measured_seconds;
  });
  for (SearchCandidate &c : rest) correct.push_back(std::move(c));
  result.candidates = std::move(correct);
  return in_time;
}

// Says why each candidate without a measurement has none, where profiling has not said.
void explain_unmeasured(SearchResult &result, const SearchOptions &options) {
  for (SearchCandidate &c : result.candidates) {
    if (c.measured_seconds >= 0 || !c.not_measured.empty()) continue;
    c.not_measured = !options.measure ? "the search had no device to profile on"
                                      : "not measured when this cached answer was profiled";
  }
}

}  // namespace

void add_counts(SearchStats &s, const SearchStats &o) {
  for (auto field :
       {&SearchStats::states, &SearchStats::pruned_shape, &SearchStats::pruned_abstract, &SearchStats::pruned_canonical,
        &SearchStats::pruned_dead, &SearchStats::plans, &SearchStats::structures, &SearchStats::candidates,
        &SearchStats::infeasible, &SearchStats::oracle_queries, &SearchStats::oracle_index_answers,
        &SearchStats::z3_queries, &SearchStats::z3_proved, &SearchStats::z3_unknown, &SearchStats::fingerprint_checks,
        &SearchStats::fingerprint_rejected, &SearchStats::unbuildable}) {
    s.*field += o.*field;
  }
  s.z3_seconds += o.z3_seconds;
  s.fingerprint_seconds += o.fingerprint_seconds;
  if (s.first_fused_seconds < 0 || (o.first_fused_seconds >= 0 && o.first_fused_seconds < s.first_fused_seconds)) {
    s.first_fused_seconds = o.first_fused_seconds;
  }
}

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

SearchResult superoptimize(const KernelGraph &graph, const SearchOptions &requested) {
  validate(requested);
  if (graph.outputs().empty()) invalid_argument("superoptimize: the graph has no outputs");
  const std::vector<Segment> segments =
      plan_segments(graph, requested.segment_above_ops, requested.max_segment_ops, requested.max_customized_inputs);
  if (segments.size() > 1) return superoptimize_in_segments(graph, requested, segments);
  // Profiling takes the cheapest verified candidates: the search keeps at least as many, and half
  // as many again to replace those that do not run (profile).
  SearchOptions options = requested;
  if (options.measure) {
    options.max_candidates = std::max(options.max_candidates, options.profile_top_k + (options.profile_top_k + 1) / 2);
  }
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(std::min(options.time_budget_seconds, 1e9)));
  std::vector<uint8_t> request, measured;
  SearchResult result;
  std::optional<std::vector<SearchCandidate>> cached;
  if (!options.cache_dir.empty()) {
    request = cache_request(graph, options);
    // A profiled answer from the same plugin build and device: the answer, nothing measured.
    if (options.measure && !options.measured_by.empty()) {
      measured = measured_request(request, options);
      std::optional<std::vector<SearchCandidate>> answer;
      if (!options.remeasure) answer = cache_read(options.cache_dir, measured);
      if (answer && !answer->empty() && answer->front().measured_seconds >= 0) {
        result.candidates = std::move(*answer);
        result.stats.candidates = static_cast<int64_t>(result.candidates.size());
        result.stats.from_cache = true;
        result.end = SearchEnd::kComplete;
        explain_unmeasured(result, options);
        result.stats.seconds = since(started);
        return result;
      }
    }
    cached = cache_read(options.cache_dir, request);
  }
  // The input graph's timed runs take at most the first quarter of the budget.
  std::optional<InputMeasurement> input;
  if (options.measure) input = measure_input(graph, options, started + (deadline - started) / 4);
  if (cached) {
    // The cache holds what passed verification; what builds depends on the backend asking now.
    for (SearchCandidate &c : *cached) {
      if (!builds(options, c.graph)) {
        ++result.stats.unbuildable;
      } else {
        result.candidates.push_back(std::move(c));
      }
    }
    result.stats.candidates = static_cast<int64_t>(cached->size());
    result.stats.from_cache = true;
  } else {
    // Weighted norms before products fuse whole as a norm times their weight (norm_weights.hpp):
    // that form's whole-graph fusions (first: a few cuts) join the graph's own candidates.
    const KernelGraph apart = weights_apart(graph);
    const bool weights_split = apart.operators().size() != graph.operators().size();
    const verify::FingerprintCheck fingerprints(graph, {options.verify_trials, options.seed, options.threads});
    SearchResult fusions;
    if (weights_split) fusions = Superoptimizer(apart, options, started, fingerprints, true).run();
    result = Superoptimizer(graph, options, started, fingerprints, false,
                            SearchProgress{fusions.stats.states, fusions.stats.candidates, 0})
                 .run();
    if (weights_split) merge(result, std::move(fusions));
    // Only a search that ran to the end is the answer to its request.
    if (!options.cache_dir.empty() && result.end == SearchEnd::kComplete) {
      cache_write(options.cache_dir, request, result.candidates, result.stats.seconds);
    }
  }
  const bool profiled_in_time = !input || profile(result, options, deadline, std::move(*input));
  if (!profiled_in_time && result.end == SearchEnd::kComplete) result.end = SearchEnd::kTimeout;
  // The profiled answer of a complete search (or of its cached candidates).
  if (!measured.empty() && profiled_in_time && (cached || result.end == SearchEnd::kComplete) &&
      !result.candidates.empty() && result.candidates.front().measured_seconds >= 0) {
    cache_write(options.cache_dir, measured, result.candidates, result.stats.seconds);
  }
  explain_unmeasured(result, options);
  result.stats.seconds = since(started);
  return result;
}

}  // namespace yirage::search
