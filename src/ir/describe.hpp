// A human-readable listing of a kernel graph and the µGraphs of its customized operators, one
// line per operator (yirage_graph_describe, `yirage show`).
#pragma once

#include <string>

#include "ir/kernel_graph.hpp"

namespace yirage {

std::string describe(const KernelGraph &graph);

// The pieces of a listing the DOT writer (ir/dot.hpp) shows too: an operator's attributes as
// " name=value" pairs (empty if it has none), and a grid map as "{x->1,y->0}" (mapped axes only).
std::string describe_attributes(const Operator &op);
std::string describe_grid_map(const GridMap &map);

}  // namespace yirage
