#include "ir/block_graph.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "ir/ragged_tiles.hpp"
#include "util/error.hpp"

namespace yirage {

namespace {

constexpr const char *kAxisNames[3] = {"x", "y", "z"};

std::string axis_name(size_t axis) {
  return kAxisNames[axis];
}

}  // namespace

BlockGraph::BlockGraph(const BlockGraphConfig &config) : config_(config) {
  int64_t blocks = 1;
  for (size_t a = 0; a < 3; ++a) {
    if (config.grid[a] < 1 || config.grid[a] > (int64_t{1} << 31) / blocks) {
      invalid_argument("block graph: grid " + to_string(Dims(config.grid.begin(), config.grid.end())) +
                       ": every grid dim must be >= 1 and the grid at most 2^31 blocks");
    }
    blocks *= config.grid[a];
  }
  if (config.block_threads < 1 ||
      (config.max_threads_per_block > 0 && config.block_threads > config.max_threads_per_block)) {
    invalid_argument("block graph: block_threads " + std::to_string(config.block_threads) + " must be >= 1" +
                     (config.max_threads_per_block > 0 ? " and at most " + std::to_string(config.max_threads_per_block)
                                                       : std::string()));
  }
  if (config.forloop_range < 1 || config.forloop_range > (int64_t{1} << 31)) {
    invalid_argument("block graph: forloop_range " + std::to_string(config.forloop_range) +
                     " must be between 1 and 2^31");
  }
  if (config.shared_memory_limit < 0 || config.max_threads_per_block < 0) {
    invalid_argument("block graph: limits must be >= 0 (0 means unchecked)");
  }
}

void BlockGraph::check_grid_map(const char *op, const char *map_name, const GridMap &map, const Dims &dims,
                                bool every_split_axis_mapped) const {
  const auto rank = static_cast<int32_t>(dims.size());
  for (size_t a = 0; a < 3; ++a) {
    const std::string entry = std::string(op) + ": " + map_name + "." + axis_name(a) + " = " + std::to_string(map[a]);
    if (map[a] < -1 || map[a] >= rank) {
      invalid_argument(entry + " is not -1 or a dim of " + to_string(dims));
    }
    if (config_.grid[a] == 1 && map[a] != -1) {
      invalid_argument(entry + " but grid." + axis_name(a) + " has one block: an axis with one block must map to -1");
    }
    if (every_split_axis_mapped && config_.grid[a] > 1 && map[a] == -1) {
      invalid_argument(std::string(op) + ": grid." + axis_name(a) + " has " + std::to_string(config_.grid[a]) +
                       " blocks but " + map_name + "." + axis_name(a) +
                       " is -1: the blocks would write overlapping tiles");
    }
    for (size_t b = 0; b < a; ++b) {
      if (map[a] >= 0 && map[a] == map[b]) {
        invalid_argument(std::string(op) + ": " + map_name + " maps grid axes " + axis_name(b) + " and " +
                         axis_name(a) + " to the same dim " + std::to_string(map[a]));
      }
    }
  }
}

int64_t ragged_tile_length(int64_t extent, int64_t parts) {
  const int64_t even = (extent + parts - 1) / parts;
  if (even * parts == extent) return even;
  for (const int64_t whole : {16, 8}) {
    const int64_t rounded = (even + whole - 1) / whole * whole;
    if ((parts - 1) * rounded < extent) return rounded;
  }
  return even;
}

TensorId BlockGraph::new_input(const Dims &dtensor_dims, DType dtype, const GridMap &imap, int32_t fmap) {
  const char *op = "block new_input";
  check_dims(op, dtensor_dims);
  if (!is_valid_dtype(static_cast<int32_t>(dtype))) {
    invalid_argument(std::string(op) + ": dtype " + std::to_string(static_cast<int32_t>(dtype)) +
                     " is not a yirage_dtype");
  }
  check_grid_map(op, "imap", imap, dtensor_dims, false);
  if (fmap < -1 || fmap >= static_cast<int32_t>(dtensor_dims.size())) {
    invalid_argument(std::string(op) + ": fmap " + std::to_string(fmap) + " is not -1 or a dim of " +
                     to_string(dtensor_dims));
  }
  // Each dim is cut into the parts of the grid axis and the loop that split it: ceil(extent /
  // parts) elements each, the last part ragged where they do not divide (ragged_tiles.hpp), but
  // never empty; ragged tiles are rounded up to whole 16 or 8 elements where that leaves no part
  // empty (ragged_tile_length).
  Dims tile = dtensor_dims;
  for (size_t d = 0; d < tile.size(); ++d) {
    int64_t parts = 1;
    std::string by;
    for (size_t a = 0; a < 3; ++a) {
      if (imap[a] != static_cast<int32_t>(d)) continue;
      parts *= config_.grid[a];
      by = "grid." + axis_name(a) + " = " + std::to_string(config_.grid[a]);
    }
    if (fmap == static_cast<int32_t>(d)) {
      parts *= config_.forloop_range;
      by += (by.empty() ? "" : " and ") + std::string("forloop_range ") + std::to_string(config_.forloop_range);
    }
    if (parts == 1) continue;
    const int64_t extent = dtensor_dims[d];
    tile[d] = ragged_tile_length(extent, parts);
    if ((parts - 1) * tile[d] >= extent) {
      invalid_argument(std::string(op) + ": dim " + std::to_string(d) + " of " + to_string(dtensor_dims) + " (" +
                       std::to_string(extent) + ") cannot be split into " + std::to_string(parts) + " parts (" + by +
                       "): parts of " + std::to_string(tile[d]) + " would leave the last ones empty");
    }
  }
  OpAttributes attributes;
  attributes.sizes = dtensor_dims;
  attributes.grid_map = imap;
  attributes.forloop_dim = fmap;
  attributes.dtype = dtype;
  Transaction transaction(*this);
  const TensorId id = append(OpKind::kInputIterator, {}, attributes, {tile}, dtype,
                             fmap >= 0 ? LoopPhase::kPerIteration : LoopPhase::kInvariant)[0];
  inputs_.push_back(id);
  transaction.commit();
  return id;
}

TensorId BlockGraph::accumulate(OpKind kind, TensorId x_id, double eps) {
  if (!is_accumulator(kind) || kind == OpKind::kAccumRescale) {
    invalid_argument(std::string("accumulate: ") + op_name(kind) + " is not a single-input accumulator");
  }
  if (kind == OpKind::kAccumSumToDimx) {
    invalid_argument("accumulate: accum_sum_todimx needs its dimx: use accumulate_to_dimx");
  }
  const Tensor &x = checked(op_name(kind), "X", x_id);
  if (x.phase == LoopPhase::kAfterLoop) {
    invalid_argument(std::string(op_name(kind)) +
                     ": X is an after-loop tensor; accumulators take per-iteration tensors");
  }
  if (eps != 0 && kind != OpKind::kAccumReduceRms) {
    invalid_argument(std::string(op_name(kind)) + ": only accum_reduce_rms takes an eps");
  }
  if (!std::isfinite(eps) || eps < 0) {
    invalid_argument(std::string(op_name(kind)) + ": eps " + std::to_string(eps) + " must be finite and >= 0");
  }
  Dims out = x.dims;
  if (kind != OpKind::kAccumSum && kind != OpKind::kAccumMax) out.back() = 1;
  OpAttributes attributes;
  attributes.eps = eps;
  return append(kind, {x_id}, attributes, {out}, x.dtype, LoopPhase::kAfterLoop)[0];
}

TensorId BlockGraph::accumulate_to_dimx(TensorId x_id, int64_t dimx) {
  const char *op = "accum_sum_todimx";
  const Tensor &x = checked(op, "X", x_id);
  if (x.phase == LoopPhase::kAfterLoop) {
    invalid_argument(std::string(op) + ": X is an after-loop tensor; accumulators take per-iteration tensors");
  }
  if (dimx < 1 || x.dims.back() % dimx != 0) {
    invalid_argument(std::string(op) + ": X is " + to_string(x.dims) + ": dimx " + std::to_string(dimx) +
                     " must be >= 1 and divide its last dim " + std::to_string(x.dims.back()));
  }
  Dims out = x.dims;
  out.back() = dimx;
  OpAttributes attributes;
  attributes.sizes = {dimx};
  return append(OpKind::kAccumSumToDimx, {x_id}, attributes, {out}, x.dtype, LoopPhase::kAfterLoop)[0];
}

TensorId BlockGraph::accumulate_rescale(TensorId x_id, TensorId m_id) {
  const char *op = "accum_rescale";
  const Tensor &x = checked(op, "X", x_id);
  const Tensor &m = checked(op, "M", m_id);
  if (x.phase == LoopPhase::kAfterLoop || m.phase == LoopPhase::kAfterLoop) {
    invalid_argument(std::string(op) + ": accumulators take per-iteration tensors");
  }
  if (broadcast_dims(op, x.dims, m.dims) != x.dims || x.dtype != m.dtype) {
    invalid_argument(std::string(op) + ": X is " + to_string(x.dims) + ", M is " + to_string(m.dims) +
                     ": M must broadcast to X and share its dtype");
  }
  return append(OpKind::kAccumRescale, {x_id, m_id}, {}, {x.dims}, x.dtype, LoopPhase::kAfterLoop)[0];
}

void BlockGraph::new_output(TensorId s_id, const GridMap &omap, int32_t forloop_dim, std::optional<DType> dtype) {
  const char *op = "block new_output";
  const Tensor &s = checked(op, "S", s_id);
  if (dtype && !is_valid_dtype(static_cast<int32_t>(*dtype))) {
    invalid_argument(std::string(op) + ": dtype " + std::to_string(static_cast<int32_t>(*dtype)) +
                     " is not a yirage_dtype");
  }
  check_grid_map(op, "omap", omap, s.dims, true);
  const bool per_iteration = s.phase == LoopPhase::kPerIteration;
  const auto rank = static_cast<int32_t>(s.dims.size());
  if (forloop_dim < -1 || forloop_dim >= rank || (!per_iteration && forloop_dim != -1) ||
      (per_iteration && forloop_dim == -1 && config_.forloop_range > 1)) {
    invalid_argument(std::string(op) + ": forloop_dim " + std::to_string(forloop_dim) +
                     (per_iteration ? " must name a dim of the per-iteration tile " + to_string(s.dims) +
                                          " (forloop_range is " + std::to_string(config_.forloop_range) + ")"
                                    : " must be -1 for a tile computed once"));
  }
  for (size_t a = 0; a < 3; ++a) {
    if (forloop_dim >= 0 && omap[a] == forloop_dim) {
      invalid_argument(std::string(op) + ": omap." + axis_name(a) + " and forloop_dim both name dim " +
                       std::to_string(forloop_dim) + ": tiles would overlap");
    }
  }
  // The tile times the grid (and the loop) can exceed int64_t for a hostile file's sizes:
  // multiplied with overflow checks, then held to check_dims' bound.
  Dims out = s.dims;
  auto scale = [&](int32_t dim, int64_t factor) {
    int64_t &d = out[static_cast<size_t>(dim)];
    if (__builtin_mul_overflow(d, factor, &d)) {
      invalid_argument(std::string(op) + ": the tile " + to_string(s.dims) +
                       " over the grid and loop holds more than 2^56 elements");
    }
  };
  for (size_t a = 0; a < 3; ++a) {
    if (omap[a] >= 0) scale(omap[a], config_.grid[a]);
  }
  if (forloop_dim >= 0) scale(forloop_dim, config_.forloop_range);
  // A ragged tile's dim is saved into the extent it was read from, laid out as it was read.
  if (has_ragged_tiles(*this)) {
    const RaggedDims ragged = ragged_dims(*this)[static_cast<size_t>(s_id)];
    for (size_t d = 0; d < ragged.size(); ++d) {
      if (!ragged[d]) continue;
      int32_t axis = -1;
      for (size_t a = 0; a < 3; ++a) {
        if (omap[a] == static_cast<int32_t>(d)) axis = static_cast<int32_t>(a);
      }
      const RaggedSplit &r = *ragged[d];
      const bool looped = forloop_dim == static_cast<int32_t>(d);
      if (r.grid_axis != axis || r.looped != looped || (axis >= 0 && r.block_stride != r.tile)) {
        invalid_argument(std::string(op) + ": dim " + std::to_string(d) + " of the tile " + to_string(s.dims) +
                         " is ragged (tiles of " + std::to_string(r.tile) + " over " + std::to_string(r.extent) +
                         "), and this omap and forloop_dim would not lay its tiles out as they were read");
      }
      out[d] = r.extent;
    }
  }
  check_dims(op, out);
  OpAttributes attributes;
  attributes.sizes = out;
  attributes.grid_map = omap;
  attributes.forloop_dim = forloop_dim;
  attributes.dtype = dtype.value_or(s.dtype);
  Transaction transaction(*this);
  append(OpKind::kOutputSaver, {s_id}, attributes, {}, s.dtype, s.phase);
  outputs_.push_back(s_id);
  transaction.commit();
}

std::vector<int32_t> BlockGraph::operator_indices(OpKind kind) const {
  std::vector<int32_t> indices;
  for (size_t i = 0; i < operators_.size(); ++i) {
    if (operators_[i].kind == kind) indices.push_back(static_cast<int32_t>(i));
  }
  return indices;
}

bool BlockGraph::loop_only_sums_inputs() const {
  std::vector<int> readers(tensors_.size(), -1);  // of each input tile; -1: not an input tile
  for (const Operator &op : operators_) {
    if (op.kind == OpKind::kInputIterator) readers[static_cast<size_t>(op.outputs[0])] = 0;
  }
  for (const Operator &op : operators_) {
    if (op.kind == OpKind::kInputIterator) continue;
    for (TensorId t : op.inputs) {
      const bool input_tile = readers[static_cast<size_t>(t)] >= 0;
      if (input_tile != (op.kind == OpKind::kAccumSum)) return false;
      if (input_tile && ++readers[static_cast<size_t>(t)] > 1) return false;
    }
  }
  return std::none_of(readers.begin(), readers.end(), [](int r) { return r == 0; });
}

int64_t BlockGraph::tile_bytes(const Dims &dims, DType dtype, LoopPhase phase) const {
  return num_elements(dims) * (phase == LoopPhase::kAfterLoop ? 4 : static_cast<int64_t>(dtype_size(dtype)));
}

int64_t BlockGraph::shared_memory_bytes() const {
  int64_t total = 0;
  for (const Tensor &t : tensors_) total += tile_bytes(t.dims, t.dtype, t.phase);
  return total;
}

LoopPhase BlockGraph::result_phase(const char *op, const std::vector<TensorId> &inputs) const {
  bool per_iteration = false, after_loop = false;
  for (TensorId id : inputs) {
    const LoopPhase phase = checked(op, "an operand", id).phase;
    per_iteration = per_iteration || phase == LoopPhase::kPerIteration;
    after_loop = after_loop || phase == LoopPhase::kAfterLoop;
  }
  if (per_iteration && after_loop) {
    invalid_argument(std::string(op) + ": cannot combine a per-iteration tensor with an after-loop tensor");
  }
  return after_loop ? LoopPhase::kAfterLoop : per_iteration ? LoopPhase::kPerIteration : LoopPhase::kInvariant;
}

void BlockGraph::check_new_tensors(const char *op, const std::vector<Dims> &dims, DType dtype, LoopPhase phase) const {
  if (config_.shared_memory_limit == 0) return;
  int64_t total = shared_memory_bytes();
  for (const Dims &d : dims) total += tile_bytes(d, dtype, phase);
  if (total > config_.shared_memory_limit) {
    invalid_argument(std::string(op) + ": the block graph would use " + std::to_string(total) +
                     " bytes of shared memory, over the limit of " + std::to_string(config_.shared_memory_limit));
  }
}

std::vector<bool> inlined_tensors(const BlockGraph &bg, const std::function<bool(const Operator &)> &keep) {
  const auto elementwise = [](OpKind kind) { return is_unary(kind) || is_binary(kind); };
  std::vector<bool> result(bg.num_tensors(), false);
  std::vector<int> readers(bg.num_tensors(), 0);
  for (const Operator &op : bg.operators()) {
    for (TensorId t : op.inputs) ++readers[static_cast<size_t>(t)];
  }
  for (const Operator &op : bg.operators()) {
    if (!elementwise(op.kind)) continue;
    for (TensorId t : op.inputs) {
      const Operator &made_by = bg.operators()[static_cast<size_t>(bg.tensor(t).producer)];
      if (!elementwise(made_by.kind) || readers[static_cast<size_t>(t)] != 1 ||
          bg.tensor(t).dims != bg.tensor(op.outputs[0]).dims || bg.tensor(t).phase != bg.tensor(op.outputs[0]).phase ||
          (keep && keep(made_by))) {
        continue;
      }
      result[static_cast<size_t>(t)] = true;
    }
  }
  return result;
}

}  // namespace yirage
