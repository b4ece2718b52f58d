// Enumeration of the thread-block graphs of one customized operator (docs/search.md): for a
// plan (the dim class each grid axis splits, the class the for-loop splits) and one block
// count / loop range per class, it adds block operators depth first — matmul, the target's
// elementwise, reduction and normalisation operators, accumulators — and saves the tiles whose
// terms are the wanted outputs'. A partial graph is cut when a builder refuses it (shapes,
// tiles, loop phases, shared memory), when an operator is out of canonical order or recomputes
// a term it already has, or when its new term does not occur in the target's.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "ir/block_graph.hpp"
#include "ir/kernel_graph.hpp"
#include "search/abstract_expr.hpp"
#include "search/dim_classes.hpp"
#include "search/subexpression.hpp"

namespace yirage::search {

// Which grid axis splits which dim class; loop_class -1: no for-loop.
struct BlockPlan {
  std::vector<int> grid_classes;
  int loop_class = -1;
};

// Operators of the target a block graph may use, with the attributes they had there.
struct Vocabulary {
  std::vector<OpKind> unary;                  // exp, silu, … (clamp, mul_scalar: see below)
  std::vector<OpAttributes> clamps, scalars;  // each clamp / mul_scalar of the target
  std::vector<OpKind> binary;
  std::vector<OpKind> reductions;       // kReduction, kReductionMax
  std::vector<OpAttributes> rms_norms;  // their normalized rank, eps and weight flag
  bool matmul = false;
  std::vector<OpKind> accumulators;
  std::vector<double> rms_eps;  // kAccumReduceRms is tried with each norm's eps
};
Vocabulary vocabulary_of(const KernelGraph &target);

// Shared by every structure search of one superoptimize call.
struct SearchContext {
  const KernelGraph *target = nullptr;
  const DimClasses *classes = nullptr;
  const std::vector<Expr> *target_terms = nullptr;  // per target tensor
  SubexpressionOracle *oracle = nullptr;            // null: no abstract pruning
  Vocabulary vocabulary;
  int max_block_ops = 8;
  std::function<bool()> should_stop;  // time budget or cancellation
};

struct BlockSearchStats {
  int64_t states = 0, pruned_shape = 0, pruned_abstract = 0, pruned_canonical = 0, pruned_dead = 0, structures = 0;
  void add(const BlockSearchStats &o);
};

// The customized operator wanted: which target tensors it reads and which it must produce.
struct CustomizedRequest {
  std::vector<TensorId> inputs;  // target tensor ids, in iterator order
  std::vector<TensorId> outputs;
};

// A node of the depth-first search tree of one plan: from the root (the inputs alone), the
// ordinal of the operator added at each level among those that passed every rule there. Paths
// compare in depth-first order (a node before its subtree, std::vector's `<`).
using SearchPath = std::vector<int32_t>;

struct KeyedStructure {
  SearchPath node;  // where it was complete
  std::shared_ptr<const BlockGraph> graph;
};

// Part of the search tree (shards.hpp): the subtree under `root`, `depth` levels deep
// (-1: all of it; 0: only the root). The nodes one level past `depth` are listed, not explored.
struct Subtree {
  SearchPath root;
  int depth = -1;
};

struct SubtreeFound {
  std::vector<KeyedStructure> structures;  // in depth-first order
  std::vector<SearchPath> beyond;          // the nodes past the depth, in order
  bool complete = false;                   // false: stopped (SearchContext::should_stop)
};

// The graphs of structures found in subtrees of one tree, in the order one search of the whole
// tree gives them: depth first by node.
std::vector<std::shared_ptr<const BlockGraph>> in_depth_first_order(std::vector<KeyedStructure> structures);

// The block graphs of `subtree` for `plan` under `config`. Counts what is tried at the subtree's
// nodes (a node listed past the depth is a state; the root's own state is its parent's), so that
// subtrees that partition the tree add up to the whole tree's counts.
// A root that does not exist finds nothing (complete).
SubtreeFound search_block_subtree(const SearchContext &context, const CustomizedRequest &request, const BlockPlan &plan,
                                  const BlockGraphConfig &config, const Subtree &subtree, BlockSearchStats &stats);

// Every complete block graph for `plan` under `config`, in a deterministic order.
std::vector<std::shared_ptr<const BlockGraph>> search_block_graphs(const SearchContext &context,
                                                                   const CustomizedRequest &request,
                                                                   const BlockPlan &plan,
                                                                   const BlockGraphConfig &config,
                                                                   BlockSearchStats &stats);

}  // namespace yirage::search
