// The abstract term of every tensor of a graph (abstract_expr.hpp), one rule per operator kind,
// shared by kernel graphs, thread-block graphs and the search's partial graphs.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "ir/block_graph.hpp"
#include "ir/kernel_graph.hpp"
#include "search/abstract_expr.hpp"

namespace yirage::search {

// The term of output `output` of `op` in `graph`, given the terms of its inputs (in op.inputs
// order). Input iterators take the term of the kernel tensor they read, which is `inputs[0]`.
// Error(kUnsupported) for an operator with no term (customized: use kernel_terms).
Expr operator_term(const OperatorGraph &graph, const Operator &op, const std::vector<Expr> &inputs,
                   int64_t forloop_range, size_t output = 0);

// Terms of every tensor of a kernel graph (index = TensorId); input i is variable i, and the
// outputs of a customized operator are the terms of its saved tiles with its inputs substituted.
std::vector<Expr> kernel_terms(const KernelGraph &graph);

// The same, or nullopt where `stop` (asked after each operator) says so or the terms' texts
// pass kMaxTermTextBytes: a term's text grows with its depth, so a chain of n operators that do
// not cancel out (exp after exp) has texts of n² characters in all — gigabytes at 20,000.
inline constexpr size_t kMaxTermTextBytes = size_t{64} << 20;
std::optional<std::vector<Expr>> kernel_terms_within(const KernelGraph &graph, const std::function<bool()> &stop);

// Terms of every tensor of a block graph whose input iterators read `inputs` (one per iterator).
std::vector<Expr> block_terms(const BlockGraph &graph, const std::vector<Expr> &inputs);

}  // namespace yirage::search
