#include "search/block_search.hpp"

#include <algorithm>

#include "ir/rebuild.hpp"
#include "search/terms.hpp"
#include "util/error.hpp"

namespace yirage::search {

Vocabulary vocabulary_of(const KernelGraph &target) {
  Vocabulary v;
  auto add_kind = [](std::vector<OpKind> &list, OpKind k) {
    if (std::find(list.begin(), list.end(), k) == list.end()) list.push_back(k);
  };
  auto add_attributes = [](std::vector<OpAttributes> &list, const OpAttributes &a) {
    if (std::find(list.begin(), list.end(), a) == list.end()) list.push_back(a);
  };
  for (const Operator &op : target.operators()) {
    if (op.kind == OpKind::kMatmul) v.matmul = true;
    if (op.kind == OpKind::kClamp) add_attributes(v.clamps, op.attributes);
    if (op.kind == OpKind::kMulScalar) add_attributes(v.scalars, op.attributes);
    if (is_unary(op.kind) && op.kind != OpKind::kClamp && op.kind != OpKind::kMulScalar) {
      add_kind(v.unary, op.kind);
    }
    if (is_binary(op.kind)) add_kind(v.binary, op.kind);
    if (op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax) {
      add_kind(v.reductions, op.kind);
    }
    if (op.kind == OpKind::kRmsNorm) {
      OpAttributes a;
      a.sizes = Dims(op.attributes.sizes.size(), 0);  // only the normalized rank matters
      a.eps = op.attributes.eps;
      a.has_weight = op.attributes.has_weight;
      add_attributes(v.rms_norms, a);
    }
  }
  // Σ over the loop always; the reducing accumulators stand in for the target's reductions
  // and norms, with a division after the loop (x / rms(x) is rms_norm).
  v.accumulators.push_back(OpKind::kAccumSum);
  if (std::find(v.reductions.begin(), v.reductions.end(), OpKind::kReduction) != v.reductions.end()) {
    v.accumulators.push_back(OpKind::kAccumReduceSum);
  }
  if (std::find(v.reductions.begin(), v.reductions.end(), OpKind::kReductionMax) != v.reductions.end()) {
    v.accumulators.push_back(OpKind::kAccumMax);
  }
  if (!v.rms_norms.empty()) {
    v.accumulators.push_back(OpKind::kAccumReduceRms);
    add_kind(v.binary, OpKind::kDiv);
  }
  for (const OpAttributes &a : v.rms_norms) {
    if (std::find(v.rms_eps.begin(), v.rms_eps.end(), a.eps) == v.rms_eps.end()) v.rms_eps.push_back(a.eps);
  }
  std::sort(v.binary.begin(), v.binary.end());
  return v;
}

void BlockSearchStats::add(const BlockSearchStats &o) {
  states += o.states;
  pruned_shape += o.pruned_shape;
  pruned_abstract += o.pruned_abstract;
  pruned_canonical += o.pruned_canonical;
  pruned_dead += o.pruned_dead;
  structures += o.structures;
}

namespace {

bool commutative(OpKind k) {
  return k == OpKind::kAdd || k == OpKind::kMul || k == OpKind::kMax;
}

class StructureSearch {
 public:
  StructureSearch(const SearchContext &context, const CustomizedRequest &request, const BlockPlan &plan,
                  const BlockGraphConfig &config, const Subtree &subtree, BlockSearchStats &stats)
      : ctx_(context), request_(request), plan_(plan), graph_(config), subtree_(subtree), stats_(stats) {}

  SubtreeFound run() {
    search();
    found_.complete = !stopped_;
    return std::move(found_);
  }

 private:
  // Nothing to search where the inputs cannot be tiled for the plan.
  void search() {
    const DimClasses &classes = *ctx_.classes;
    for (TensorId t : request_.inputs) {
      GridMap imap = kReplicated;
      for (size_t a = 0; a < plan_.grid_classes.size(); ++a) {
        const int d = classes.dim_in(t, plan_.grid_classes[a]);
        if (d == -2) return;  // two dims of one class: no single imap
        imap[a] = d;
      }
      const int fmap = plan_.loop_class < 0 ? -1 : classes.dim_in(t, plan_.loop_class);
      if (fmap == -2) return;
      const Tensor &kt = ctx_.target->tensor(t);
      try {
        graph_.new_input(kt.dims, kt.dtype, imap, fmap);
      } catch (const Error &) {
        if (subtree_.root.empty()) ++stats_.pruned_shape;
        return;
      }
      terms_.push_back((*ctx_.target_terms)[static_cast<size_t>(t)]);
    }
    for (TensorId w : request_.outputs) {
      wanted_.push_back((*ctx_.target_terms)[static_cast<size_t>(w)]->text);
    }
    expand(0, -1);
  }

  // Above the subtree's root: only the way down is walked, nothing is counted or kept.
  bool on_the_way() const { return path_.size() < subtree_.root.size(); }
  // Whether the search has stopped: the context's should_stop is asked at the first of every 8
  // calls (a clock read at every attempt was a twentieth of the search's time), and once it says
  // stop, every call after says so too.
  bool should_stop() {
    if (!stopped_ && (stop_asks_++ & 7) == 0 && ctx_.should_stop()) stopped_ = true;
    return stopped_;
  }
  // At the subtree's depth: the next level is listed, not explored.
  bool at_depth() const {
    return subtree_.depth >= 0 && path_.size() == subtree_.root.size() + static_cast<size_t>(subtree_.depth);
  }

  void expand(int ops, TensorId last) {
    if (left_) return;
    if (should_stop()) return;
    if (!on_the_way()) try_emit();
    if (ops >= ctx_.max_block_ops) return;
    int32_t children = 0;  // operators added here so far: the next one's ordinal
    const TensorId n = static_cast<TensorId>(graph_.num_tensors());
    const Vocabulary &v = ctx_.vocabulary;
    auto tensor = [&](TensorId t) -> const Tensor & { return graph_.tensor(t); };
    for (TensorId a = 0; a < n; ++a) {
      const Tensor ta = tensor(a);  // a copy: attempts grow and shrink the tensor list
      if (v.matmul && ta.dims.size() >= 2) {
        for (TensorId b = 0; b < n; ++b) {
          const Dims db = tensor(b).dims;
          if (db.size() == ta.dims.size() && db[db.size() - 2] == ta.dims.back()) {
            attempt(OpKind::kMatmul, {a, b}, {}, ops, last, children);
          }
        }
      }
      for (OpKind k : v.unary) attempt(k, {a}, {}, ops, last, children);
      for (const OpAttributes &at : v.clamps) attempt(OpKind::kClamp, {a}, at, ops, last, children);
      for (const OpAttributes &at : v.scalars) attempt(OpKind::kMulScalar, {a}, at, ops, last, children);
      for (OpKind k : v.binary) {
        for (TensorId b = commutative(k) ? a : 0; b < n; ++b) attempt(k, {a, b}, {}, ops, last, children);
      }
      for (OpKind k : v.reductions) {
        for (size_t d = 0; d < ta.dims.size(); ++d) {
          if (ta.dims[d] == 1) continue;
          OpAttributes at;
          at.dim = static_cast<int>(d);
          attempt(k, {a}, at, ops, last, children);
        }
      }
      for (OpAttributes at : v.rms_norms) {
        if (at.sizes.size() > ta.dims.size()) continue;
        at.sizes.assign(ta.dims.end() - static_cast<long>(at.sizes.size()), ta.dims.end());
        if (!at.has_weight) {
          attempt(OpKind::kRmsNorm, {a}, at, ops, last, children);
          continue;
        }
        for (TensorId w = 0; w < n; ++w) attempt(OpKind::kRmsNorm, {a, w}, at, ops, last, children);
      }
      if (ta.phase == LoopPhase::kPerIteration) {
        for (OpKind k : v.accumulators) {
          if (k != OpKind::kAccumReduceRms) {
            attempt(k, {a}, {}, ops, last, children);
            continue;
          }
          for (double eps : v.rms_eps) {
            OpAttributes at;
            at.eps = eps;
            attempt(k, {a}, at, ops, last, children);
          }
        }
      }
    }
  }

  // Adds one operator if it passes every rule, explores below it (or lists it, at the subtree's
  // depth; or, above the root, goes down only to the root), and takes it back. `children`: the
  // operators added at this node so far.
  void attempt(OpKind kind, std::vector<TensorId> inputs, const OpAttributes &attributes, int ops, TensorId last,
               int32_t &children) {
    if (left_) return;
    if (should_stop()) return;
    const bool counted = !on_the_way();
    Operator op{kind, std::move(inputs), {}, attributes, nullptr};
    const std::vector<TensorId> &ins = op.inputs;
    std::vector<Expr> in;
    in.reserve(ins.size());
    for (TensorId t : ins) in.push_back(terms_[static_cast<size_t>(t)]);
    Expr term;
    try {
      term = operator_term(graph_, op, in, graph_.config().forloop_range);
    } catch (const Error &) {
      stats_.pruned_shape += counted;
      return;
    }
    // Canonical order: an operator either reads the previous one's result or sorts after it;
    // and nothing is computed twice.
    const bool reads_last = std::find(ins.begin(), ins.end(), last) != ins.end();
    if ((!reads_last && last >= 0 && term->text <= terms_[static_cast<size_t>(last)]->text) || known(term->text) >= 0) {
      stats_.pruned_canonical += counted;
      return;
    }
    if (ctx_.oracle && !ctx_.oracle->occurs(term)) {
      stats_.pruned_abstract += counted;
      return;
    }
    const auto checkpoint = graph_.checkpoint();
    std::vector<TensorId> out;
    try {
      out = add_operator(graph_, op, ins);
    } catch (const Error &) {
      stats_.pruned_shape += counted;
      return;
    }
    const int32_t ordinal = children++;
    const size_t level = path_.size();
    const bool listed = counted && at_depth();  // at this node: its children are listed
    path_.push_back(ordinal);
    if (!counted) {
      // Above the root: only its next step is explored, and after it nothing more.
      if (ordinal == subtree_.root[level]) {
        descend(ops, out[0], term);
        left_ = true;
      }
    } else if (listed) {
      ++stats_.states;
      found_.beyond.push_back(path_);
    } else {
      ++stats_.states;
      descend(ops, out[0], term);
    }
    path_.pop_back();
    graph_.rollback(checkpoint);
  }

  // The first tensor of graph_ whose term has this text, or -1.
  TensorId known(const std::string &text) const {
    for (size_t t = 0; t < terms_.size(); ++t) {
      if (terms_[t]->text == text) return static_cast<TensorId>(t);
    }
    return -1;
  }

  void descend(int ops, TensorId result, const Expr &term) {
    terms_.push_back(term);
    expand(ops + 1, result);
    terms_.pop_back();
  }

  // If every wanted term is a savable tile and nothing computed goes unused, records the graph.
  void try_emit() {
    std::vector<TensorId> tiles;
    for (const std::string &w : wanted_) {
      const TensorId t = known(w);
      if (t < 0) return;
      tiles.push_back(t);
    }
    std::vector<bool> used(graph_.num_tensors(), false);
    for (const Operator &op : graph_.operators()) {
      for (TensorId t : op.inputs) used[static_cast<size_t>(t)] = true;
    }
    for (TensorId t : tiles) used[static_cast<size_t>(t)] = true;
    if (std::find(used.begin(), used.end(), false) != used.end()) {
      ++stats_.pruned_dead;
      return;
    }
    const auto checkpoint = graph_.checkpoint();
    try {
      for (size_t o = 0; o < tiles.size(); ++o) save(tiles[o], request_.outputs[o]);
      found_.structures.push_back({path_, std::make_shared<BlockGraph>(graph_)});
      ++stats_.structures;
    } catch (const Error &) {
      ++stats_.pruned_shape;
    }
    graph_.rollback(checkpoint);
  }

  // Saves tile s as target tensor w, whose dims the blocks' (and iterations') tiles must tile.
  void save(TensorId s, TensorId w) {
    const Tensor &tile = graph_.tensor(s);
    // A tile of another rank than the output (a view's operand, say) cannot be saved as it.
    if (tile.dims.size() != ctx_.target->tensor(w).dims.size()) {
      throw Error(ErrorCode::kInvalidArgument, "the tile's rank is not the output's");
    }
    Dims full = tile.dims;
    GridMap omap = kReplicated;
    const auto &config = graph_.config();
    for (size_t a = 0; a < plan_.grid_classes.size(); ++a) {
      omap[a] = ctx_.classes->dim_in(w, plan_.grid_classes[a]);
      if (omap[a] < 0) throw Error(ErrorCode::kInvalidArgument, "no dim for the grid axis");
      full[static_cast<size_t>(omap[a])] *= config.grid[a];
    }
    int32_t forloop_dim = -1;
    if (tile.phase == LoopPhase::kPerIteration) {
      forloop_dim = ctx_.classes->dim_in(w, plan_.loop_class);
      if (forloop_dim < 0) throw Error(ErrorCode::kInvalidArgument, "no dim for the loop");
      full[static_cast<size_t>(forloop_dim)] *= config.forloop_range;
    }
    if (full != ctx_.target->tensor(w).dims) {
      throw Error(ErrorCode::kInvalidArgument, "tiles do not make up the output");
    }
    graph_.new_output(s, omap, forloop_dim);
  }

  const SearchContext &ctx_;
  const CustomizedRequest &request_;
  const BlockPlan &plan_;
  BlockGraph graph_;
  const Subtree &subtree_;
  BlockSearchStats &stats_;
  SearchPath path_;          // the node being explored
  bool left_ = false;        // the subtree is done: the walk above it only unwinds
  bool stopped_ = false;     // should_stop ended it
  uint32_t stop_asks_ = 0;   // should_stop's calls
  std::vector<Expr> terms_;  // per tensor of graph_
  std::vector<std::string> wanted_;
  SubtreeFound found_;
};

}  // namespace

std::vector<std::shared_ptr<const BlockGraph>> search_block_graphs(const SearchContext &context,
                                                                   const CustomizedRequest &request,
                                                                   const BlockPlan &plan,
                                                                   const BlockGraphConfig &config,
                                                                   BlockSearchStats &stats) {
  std::vector<std::shared_ptr<const BlockGraph>> graphs;
  for (KeyedStructure &s : search_block_subtree(context, request, plan, config, Subtree{}, stats).structures) {
    graphs.push_back(std::move(s.graph));
  }
  return graphs;
}

std::vector<std::shared_ptr<const BlockGraph>> in_depth_first_order(std::vector<KeyedStructure> structures) {
  std::stable_sort(structures.begin(), structures.end(),
                   [](const KeyedStructure &a, const KeyedStructure &b) { return a.node < b.node; });
  std::vector<std::shared_ptr<const BlockGraph>> graphs;
  graphs.reserve(structures.size());
  for (KeyedStructure &s : structures) graphs.push_back(std::move(s.graph));
  return graphs;
}

SubtreeFound search_block_subtree(const SearchContext &context, const CustomizedRequest &request, const BlockPlan &plan,
                                  const BlockGraphConfig &config, const Subtree &subtree, BlockSearchStats &stats) {
  return StructureSearch(context, request, plan, config, subtree, stats).run();
}

}  // namespace yirage::search
