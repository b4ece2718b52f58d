// A human-readable listing of a kernel graph and the µGraphs of its customized operators, one
// line per operator (yirage_graph_describe, `yirage show`).
#pragma once

#include <string>

#include "ir/kernel_graph.hpp"

namespace yirage {

std::string describe(const KernelGraph &graph);

}  // namespace yirage
