// Recognizes a loop split over blocks and the sum of its parts (search/loop_split.hpp) in a
// kernel program of two customized operators, for backends that run the two in one launch
// (plugin ABI 1.4, multi-operator programs): the first's blocks write partial sums of one tile of
// the unsplit grid each, and the second is elementwise (its loop adds the parts up, then unary and
// binary operators), so it may run on the unsplit grid: the last of a tile's `parts` blocks to
// finish runs the sum of that tile (unsplit_sum).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ir/block_graph.hpp"
#include "ir/kernel_graph.hpp"

namespace yirage {

struct SplitPair {
  size_t chunks = 0, total = 0;  // operator indices: the loop's parts, then their sum
  int axis = 0;                  // the chunks' grid axis over the loop's parts
  int64_t parts = 0;             // chunks' grid[axis] = total's forloop_range
  // The unsplit grid (chunks' with `axis` at 1): one tile per `parts` blocks of chunks.
  std::array<int64_t, 3> tiles = {1, 1, 1};

  int64_t tile_count() const { return tiles[0] * tiles[1] * tiles[2]; }
};

// `graph` (a program's: its inputs, then operators) as such a pair, or nullopt: exactly two
// customized operators, the first reading the graph's inputs in order, the second reading exactly
// the first's outputs (which are not graph outputs) and writing the graph's outputs; the second's
// inputs loop over the first's parts axis and are tiled like the first's outputs on the other
// axes, every mapped dim divided evenly; the partial sums float32; the second elementwise.
std::optional<SplitPair> split_pair(const KernelGraph &graph);

// The pair's sum on the unsplit grid (one block per tile of the parts); Error(kInvalidArgument)
// where its tiles break a limit of its config.
BlockGraph unsplit_sum(const KernelGraph &graph, const SplitPair &pair);

}  // namespace yirage
