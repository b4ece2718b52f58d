// Recognizes a loop split over blocks and the sum of its parts (search/loop_split.hpp) in a
// kernel program of two customized operators, for backends that run the two in one launch
// (plugin ABI 1.4, multi-operator programs): the first's blocks write partial sums, and the
// second's blocks each read only the partials of one tile of the unsplit grid, all its parts. So
// the last of a tile's `parts` blocks to finish may run the second operator's blocks of that tile.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ir/kernel_graph.hpp"

namespace yirage {

struct SplitPair {
  size_t chunks = 0, total = 0;  // operator indices: the loop's parts, then their sum
  int axis = 0;                  // the chunks' grid axis over the loop's parts
  int64_t parts = 0;             // chunks' grid[axis] = total's forloop_range
  // The unsplit grid (chunks' with `axis` at 1): one tile per `parts` blocks of chunks.
  std::array<int64_t, 3> tiles = {1, 1, 1};
  // total's grid over `tiles`, per axis (total's grid[x] = tiles[x] · finer[x]): the total's
  // blocks of tile t are t · finer + [0, finer) on each axis.
  std::array<int64_t, 3> finer = {1, 1, 1};

  int64_t tile_count() const { return tiles[0] * tiles[1] * tiles[2]; }
  int64_t blocks_per_tile() const { return finer[0] * finer[1] * finer[2]; }
};

// `graph` (a program's: its inputs, then operators) as such a pair, or nullopt: exactly two
// customized operators, the first reading the graph's inputs in order, the second reading exactly
// the first's outputs (which are not graph
// outputs) and writing the graph's outputs; the second's inputs loop over the first's parts axis
// and are tiled like the first's outputs on the other axes, its grid a whole multiple of the
// unsplit grid, every mapped dim divided evenly.
std::optional<SplitPair> split_pair(const KernelGraph &graph);

}  // namespace yirage
