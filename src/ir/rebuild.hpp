// Adding an operator described by an Operator value through the builder for its kind, and
// rebuilding whole graphs that way. Everything added passes exactly the validation a graph
// built by hand passes, so graph files are loaded with it (whatever a file says, the graph that
// comes out is valid) and mutation tests use it to make edited copies of a graph.
#pragma once

#include <functional>
#include <vector>

#include "ir/block_graph.hpp"
#include "ir/kernel_graph.hpp"

namespace yirage {

// Adds `op` to `graph` with its inputs replaced by `inputs` (ids in `graph`); returns the ids
// of its outputs. Throws what the builder throws. For kCustomized, op.block_graph must be set.
std::vector<TensorId> add_operator(KernelGraph &graph, const Operator &op, const std::vector<TensorId> &inputs);
std::vector<TensorId> add_operator(BlockGraph &graph, const Operator &op, const std::vector<TensorId> &inputs);

// Called with each operator's index and a copy of it, which it may change, before the operator
// is added; returning false drops the operator, its first output then standing for its first
// input (an output saver, which has none, is just left out).
using OperatorEdit = std::function<bool(size_t index, Operator &op)>;

// A copy of `graph`, built operator by operator (with `config` instead of its own).
BlockGraph rebuild(const BlockGraph &graph, const BlockGraphConfig &config, const OperatorEdit &edit = nullptr);
// A copy of `graph`; outputs are marked in the same order.
KernelGraph rebuild(const KernelGraph &graph, const OperatorEdit &edit = nullptr);

// A copy of `graph` without the operators no graph output depends on (live_operators); every
// input stays, read or not, so that what runs the copy takes the same arguments.
KernelGraph without_dead_operators(const KernelGraph &graph);

}  // namespace yirage
