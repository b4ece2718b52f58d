#include "ir/split_pair.hpp"

#include <algorithm>

#include "ir/block_graph.hpp"
#include "ir/rebuild.hpp"

namespace yirage {

std::optional<SplitPair> split_pair(const KernelGraph &graph) {
  const auto &ops = graph.operators();
  std::vector<size_t> kernels;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != OpKind::kInput) kernels.push_back(i);
  }
  if (kernels.size() != 2) return std::nullopt;
  const Operator &chunks = ops[kernels[0]], &total = ops[kernels[1]];
  if (chunks.kind != OpKind::kCustomized || total.kind != OpKind::kCustomized) return std::nullopt;
  if (chunks.inputs != graph.inputs() || total.inputs != chunks.outputs || total.outputs != graph.outputs()) {
    return std::nullopt;
  }
  const BlockGraph &a = *chunks.block_graph, &b = *total.block_graph;
  const std::vector<int32_t> savers = a.operator_indices(OpKind::kOutputSaver);
  const std::vector<int32_t> readers = b.operator_indices(OpKind::kInputIterator);
  if (savers.empty() || savers.size() != readers.size()) return std::nullopt;
  auto attributes = [](const BlockGraph &bg, int32_t op) -> const OpAttributes & {
    return bg.operators()[static_cast<size_t>(op)].attributes;
  };

  SplitPair pair;
  pair.chunks = kernels[0];
  pair.total = kernels[1];
  const int32_t parts_dim = attributes(b, readers[0]).forloop_dim;
  const GridMap &first = attributes(a, savers[0]).grid_map;
  const auto axis = std::find(first.begin(), first.end(), parts_dim);
  if (parts_dim < 0 || axis == first.end()) return std::nullopt;
  pair.axis = static_cast<int>(axis - first.begin());
  pair.parts = a.config().grid[static_cast<size_t>(pair.axis)];
  if (pair.parts < 2 || b.config().forloop_range != pair.parts ||
      b.config().grid[static_cast<size_t>(pair.axis)] != 1) {
    return std::nullopt;
  }
  for (size_t x = 0; x < 3; ++x) {
    if (static_cast<int>(x) != pair.axis) pair.tiles[x] = a.config().grid[x];
  }
  // Elementwise: its sums over the parts, then unary and binary operators.
  for (const Operator &op : b.operators()) {
    const bool elementwise = op.kind == OpKind::kInputIterator || op.kind == OpKind::kOutputSaver ||
                             op.kind == OpKind::kAccumSum || is_unary(op.kind) || is_binary(op.kind);
    if (!elementwise) return std::nullopt;
  }
  for (size_t i = 0; i < savers.size(); ++i) {
    const OpAttributes &saved = attributes(a, savers[i]), &read = attributes(b, readers[i]);
    const Dims &dims = graph.tensor(chunks.outputs[i]).dims;
    if (graph.tensor(chunks.outputs[i]).dtype != DType::kFloat32) return std::nullopt;  // as split_loop writes them
    if (saved.forloop_dim >= 0 || read.forloop_dim != parts_dim ||
        saved.grid_map[static_cast<size_t>(pair.axis)] != parts_dim ||
        read.grid_map[static_cast<size_t>(pair.axis)] != -1 || dims[static_cast<size_t>(parts_dim)] % pair.parts != 0) {
      return std::nullopt;
    }
    for (size_t x = 0; x < 3; ++x) {
      if (static_cast<int>(x) == pair.axis) continue;
      const int32_t d = read.grid_map[x];
      if (d != saved.grid_map[x]) return std::nullopt;
      // A tile of the parts not mapped along an axis with several blocks would be every block's.
      if (d < 0 ? pair.tiles[x] > 1 : dims[static_cast<size_t>(d)] % pair.tiles[x] != 0) return std::nullopt;
    }
  }
  return pair;
}

BlockGraph unsplit_sum(const KernelGraph &graph, const SplitPair &pair) {
  const BlockGraph &sum = *graph.operators().at(pair.total).block_graph;
  BlockGraphConfig config = sum.config();
  config.grid = pair.tiles;
  return rebuild(sum, config);
}

}  // namespace yirage
