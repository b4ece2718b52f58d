#include "search/loop_split.hpp"

#include <algorithm>
#include <array>

#include "ir/block_graph.hpp"
#include "ir/ragged_tiles.hpp"
#include "ir/rebuild.hpp"
#include "util/error.hpp"

namespace yirage::search {

namespace {

bool after_loop(const BlockGraph &bg, TensorId t) {
  return bg.tensor(t).phase == LoopPhase::kAfterLoop;
}

// An operator that combines accumulated tiles after the loop (what the second kernel runs).
bool after_the_accumulators(const BlockGraph &bg, const Operator &op) {
  return !is_accumulator(op.kind) && op.kind != OpKind::kInputIterator && op.kind != OpKind::kOutputSaver &&
         after_loop(bg, op.outputs[0]);
}

// Whether `bg` has the shape split_loop rewrites (see loop_split.hpp).
bool splittable(const BlockGraph &bg) {
  bool any_accumulator = false;
  for (const Operator &op : bg.operators()) {
    if (is_accumulator(op.kind)) {
      if (op.kind != OpKind::kAccumSum && op.kind != OpKind::kAccumReduceSum) return false;
      any_accumulator = true;
    } else if (op.kind == OpKind::kOutputSaver) {
      if (!after_loop(bg, op.inputs[0])) return false;
    } else if (after_the_accumulators(bg, op)) {
      if (!is_unary(op.kind) && !is_binary(op.kind)) return false;
      for (TensorId t : op.inputs) {
        if (!after_loop(bg, t)) return false;
      }
    }
  }
  return any_accumulator;
}

// The grid map of a partial sum: the first output saver's omap for the original axes (a tile
// of the same rank), `axis` on the last dim that is left.
std::optional<GridMap> partial_map(const BlockGraph &bg, const Dims &partial_tile, size_t axis) {
  const Operator &saver = bg.operators()[static_cast<size_t>(bg.operator_indices(OpKind::kOutputSaver).at(0))];
  if (bg.tensor(saver.inputs[0]).dims.size() != partial_tile.size()) return std::nullopt;
  GridMap map = saver.attributes.grid_map;
  for (auto d = static_cast<int32_t>(partial_tile.size()); d-- > 0;) {
    if (std::find(map.begin(), map.end(), d) == map.end()) {
      map[axis] = d;
      return map;
    }
  }
  return std::nullopt;
}

struct Split {
  std::shared_ptr<BlockGraph> chunks, total;
};

// Kernel 2 on `grid` (the fused grid, or a finer one), reading the partials that kernel 1's
// output savers `partial_savers` write (one per accumulator of `bg`, in order) along `axis`.
// Throws Error(kInvalidArgument) where a tile does not divide.
std::shared_ptr<BlockGraph> total_graph(const BlockGraph &bg, const BlockGraph &chunks,
                                        const std::vector<size_t> &partial_savers, size_t axis,
                                        const std::array<int64_t, 3> &grid, int64_t parts) {
  BlockGraphConfig config = bg.config();
  config.grid = grid;
  config.forloop_range = parts;
  auto total = std::make_shared<BlockGraph>(config);
  std::vector<TensorId> in_total(bg.num_tensors(), -1);
  size_t next = 0;
  for (const Operator &acc : bg.operators()) {
    if (!is_accumulator(acc.kind)) continue;
    const OpAttributes &saver = chunks.operators().at(partial_savers.at(next++)).attributes;
    GridMap imap = saver.grid_map;
    imap[axis] = -1;
    const TensorId chunk = total->new_input(saver.sizes, DType::kFloat32, imap, saver.grid_map[axis]);
    in_total[static_cast<size_t>(acc.outputs[0])] = total->accumulate(OpKind::kAccumSum, chunk);
  }
  for (const Operator &op : bg.operators()) {
    if (op.kind == OpKind::kOutputSaver) {
      total->new_output(in_total[static_cast<size_t>(op.inputs[0])], op.attributes.grid_map, -1, op.attributes.dtype);
    } else if (after_the_accumulators(bg, op)) {
      std::vector<TensorId> in;
      for (TensorId t : op.inputs) in.push_back(in_total[static_cast<size_t>(t)]);
      in_total[static_cast<size_t>(op.outputs[0])] = add_operator(*total, op, in)[0];
    }
  }
  return total;
}

// Kernel 2 adds `parts` partials per element: with the fused grid it would run a `parts`-th of
// kernel 1's blocks, each reading `parts` times its output, and take a large share of a split
// attention's time, the larger the more parts. Its work is elementwise, so any finer grid is
// right: one of its axes gets up to `parts` times the blocks (the largest factor that divides
// `parts` and leaves whole tiles: ragged ones only where the fused grid has them already), as
// many as kernel 1 runs.
std::shared_ptr<BlockGraph> finest_total_graph(const BlockGraph &bg, const BlockGraph &chunks,
                                               const std::vector<size_t> &partial_savers, size_t axis, int64_t parts) {
  for (int64_t factor = parts; factor > 1; --factor) {
    if (parts % factor != 0) continue;
    for (size_t a = 0; a < 3; ++a) {
      if (bg.config().grid[a] == 1) continue;  // (the parts' axis among them)
      std::array<int64_t, 3> grid = bg.config().grid;
      grid[a] *= factor;
      try {
        std::shared_ptr<BlockGraph> total = total_graph(bg, chunks, partial_savers, axis, grid, parts);
        if (!has_ragged_tiles(*total) || has_ragged_tiles(bg)) return total;
      } catch (const Error &e) {
        if (e.code() != ErrorCode::kInvalidArgument) throw;
      }
    }
  }
  return total_graph(bg, chunks, partial_savers, axis, bg.config().grid, parts);
}

std::optional<Split> split_block_graph(const BlockGraph &bg, int64_t parts) {
  const BlockGraphConfig &config = bg.config();
  if (parts < 2 || config.forloop_range % parts != 0 || !splittable(bg)) return std::nullopt;
  const auto free_axis = std::find(config.grid.begin(), config.grid.end(), 1);
  if (free_axis == config.grid.end()) return std::nullopt;
  const auto axis = static_cast<size_t>(free_axis - config.grid.begin());

  BlockGraphConfig chunk_config = config;
  chunk_config.grid[axis] = parts;
  chunk_config.forloop_range = config.forloop_range / parts;

  // Kernel 1: everything up to the accumulators, each block on a chunk of the loop.
  const OperatorEdit up_to_the_accumulators = [&](size_t i, Operator &op) {
    if (op.kind == OpKind::kOutputSaver || after_the_accumulators(bg, bg.operators()[i])) return false;
    if (op.kind == OpKind::kInputIterator && op.attributes.forloop_dim >= 0) {
      op.attributes.grid_map[axis] = op.attributes.forloop_dim;
    }
    return true;
  };
  Split split{std::make_shared<BlockGraph>(rebuild(bg, chunk_config, up_to_the_accumulators)), nullptr};
  // Kernel 1 writes every accumulator's partial sums; kernel 2 loops over them, then runs the
  // after-loop operators. The accumulators are in the same order in both graphs.
  std::vector<TensorId> partials;
  for (const Operator &op : split.chunks->operators()) {
    if (is_accumulator(op.kind)) partials.push_back(op.outputs[0]);
  }
  std::vector<size_t> partial_savers;
  for (TensorId partial : partials) {
    const std::optional<GridMap> map = partial_map(bg, split.chunks->tensor(partial).dims, axis);
    if (!map) return std::nullopt;
    split.chunks->new_output(partial, *map, -1, DType::kFloat32);
    partial_savers.push_back(split.chunks->operators().size() - 1);
  }
  split.total = finest_total_graph(bg, *split.chunks, partial_savers, axis, parts);
  return split;
}

}  // namespace

std::optional<KernelGraph> split_loop(const KernelGraph &graph, size_t op_index, int64_t parts) {
  const Operator &target = graph.operators().at(op_index);
  if (target.kind != OpKind::kCustomized) return std::nullopt;
  try {
    const std::optional<Split> split = split_block_graph(*target.block_graph, parts);
    if (!split) return std::nullopt;
    KernelGraph g;
    std::vector<TensorId> ids(graph.num_tensors(), -1);
    for (size_t i = 0; i < graph.operators().size(); ++i) {
      const Operator &op = graph.operators()[i];
      std::vector<TensorId> in;
      for (TensorId t : op.inputs) in.push_back(ids[static_cast<size_t>(t)]);
      const std::vector<TensorId> outs =
          i == op_index ? g.customized(g.customized(in, split->chunks), split->total) : add_operator(g, op, in);
      for (size_t o = 0; o < outs.size(); ++o) ids[static_cast<size_t>(op.outputs[o])] = outs[o];
    }
    for (TensorId o : graph.outputs()) g.mark_output(ids[static_cast<size_t>(o)]);
    return g;
  } catch (const Error &e) {
    if (e.code() != ErrorCode::kInvalidArgument) throw;
    return std::nullopt;  // a limit of the target or a shape rule the chunks break
  }
}

}  // namespace yirage::search
