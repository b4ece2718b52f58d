// A Graphviz (DOT) picture of a kernel graph (yirage_graph_to_dot, `yirage show --format dot`).
//
// Kernel tensors are boxes (name, shape, dtype; inputs and outputs say so), kernel operators are
// rounded boxes between them. Each customized operator is a cluster drawing its µGraph: the
// label gives the grid, the threads per block, the for-loop range and the tile bytes; input
// iterators (imap, fmap) take the edges of the kernel tensors they read, output savers (omap)
// give the edges of the tensors they write, and the block operators between them are joined by
// edges labelled with their tiles' shapes. Operators on per-iteration tiles sit in a nested
// "for-loop" cluster; accumulators, which turn them into after-loop tiles, sit just outside it.
// The text depends only on the graph (no addresses or hash order), so it can be compared.
#pragma once

#include <string>

#include "ir/kernel_graph.hpp"

namespace yirage {

std::string to_dot(const KernelGraph &graph);

}  // namespace yirage
