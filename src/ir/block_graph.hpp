// The thread-block graph (µGraph) inside a customized operator (ARCHITECTURE.md §3).
//
// It runs on a grid of grid.x · grid.y · grid.z blocks, each with block_threads threads, for
// forloop_range iterations. Input iterators give each block, in each iteration, one tile of a
// kernel-level input: for every grid axis with more than one block, imap names the tensor dim
// split across that axis's blocks (-1: every block gets the whole dim), and fmap names the dim
// split across iterations (-1: the same tile every iteration). A dim cut into parts is cut into
// tiles of ragged_tile_length (below); where that overruns the dim, the last tiles are ragged
// (ragged_tiles.hpp: their elements past the dim are absent), but no part may be empty. Compute operators
// work on tiles; accumulators combine a per-iteration tile over all iterations; output savers
// write a tile per block (omap: for every grid axis with more than one block, the output dim the
// blocks are laid out along, distinct per axis so that tiles never overlap).
//
// Every tile has a LoopPhase: input tiles with fmap -1 are invariant, those with an fmap are
// per-iteration; accumulators turn per-iteration (or invariant) tiles into after-loop ones.
// A compute operator cannot mix per-iteration and after-loop operands.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <vector>

#include "ir/operator_graph.hpp"

namespace yirage {

struct BlockGraphConfig {
  std::array<int64_t, 3> grid = {1, 1, 1};
  int64_t block_threads = 1;
  int64_t forloop_range = 1;
  // Limits from the target device, checked while building; 0 means not checked.
  int64_t shared_memory_limit = 0;  // bytes; see BlockGraph::shared_memory_bytes
  int64_t max_threads_per_block = 0;

  bool operator==(const BlockGraphConfig &) const = default;
};

// The tile length along a dim of `extent` elements cut into `parts` (docs/ugraphs.md, "Edge
// tiles"): extent / parts where that divides; else ceil(extent / parts) rounded up to a multiple
// of 16, or else of 8, where that leaves the last part non-empty (whole groups for matrix units
// and 16-byte copies, tiles starting at aligned elements), else ceil(extent / parts).
int64_t ragged_tile_length(int64_t extent, int64_t parts);

class BlockGraph : public OperatorGraph {
 public:
  explicit BlockGraph(const BlockGraphConfig &config);

  const BlockGraphConfig &config() const { return config_; }

  // A tile of a kernel-level input of dims `dtensor_dims`.
  TensorId new_input(const Dims &dtensor_dims, DType dtype, const GridMap &imap, int32_t fmap);
  // kAccumSum, kAccumReduceSum, kAccumReduceMean, kAccumReduceRms or kAccumMax. `eps` (finite,
  // >= 0; only kAccumReduceRms takes one) is added to the mean square before its root, as
  // rms_norm adds it: sqrt(Σ x² / n + eps).
  TensorId accumulate(OpKind kind, TensorId x, double eps = 0);
  // Mirage's "sum_todimx": Σ over iterations, the last dim folded to `dimx` by adding its
  // slices of dimx (kAccumSumToDimx); dimx must divide the last dim.
  TensorId accumulate_to_dimx(TensorId x, int64_t dimx);
  // Σ_i x_i · exp(m_i − M), M = max_i m_i, for online softmax; m broadcasts to x.
  TensorId accumulate_rescale(TensorId x, TensorId m);
  // Writes tile `s` to the next kernel-level output. For a per-iteration tile, forloop_dim names
  // the output dim the iterations' tiles are laid out along (-1 allowed only if
  // forloop_range is 1); otherwise it must be -1. `dtype` is the element type written (the
  // tile's by default): a partial sum that its consumer still adds up is kept in float32.
  void new_output(TensorId s, const GridMap &omap, int32_t forloop_dim, std::optional<DType> dtype = std::nullopt);

  // Indices (into operators()) of the operators of `kind`, in creation order.
  std::vector<int32_t> operator_indices(OpKind kind) const;
  // Whether the for-loop only adds up its input tiles: each input iterator's tile is read by one
  // operator, a kAccumSum, and every kAccumSum reads one (a split loop's sum of parts). No
  // iteration then waits for another: all of their loads can be in flight at once.
  bool loop_only_sums_inputs() const;
  // How many times a block waits for its tile loads over the for-loop, as the cost model counts
  // them unless the backend knows better (yirage_backend_kernel_estimate::loop_waits): once per
  // iteration, or once in all where the loop only sums its input tiles.
  int64_t loop_waits() const { return loop_only_sums_inputs() ? 1 : config_.forloop_range; }
  // The estimate checked against shared_memory_limit: every tile's element count times its
  // dtype size, accumulators at 4 bytes (float32), without reuse.
  int64_t shared_memory_bytes() const;

 protected:
  LoopPhase result_phase(const char *op, const std::vector<TensorId> &inputs) const override;
  void check_new_tensors(const char *op, const std::vector<Dims> &dims, DType dtype, LoopPhase phase) const override;

 private:
  int64_t tile_bytes(const Dims &dims, DType dtype, LoopPhase phase) const;
  // Checks a map against the grid: entries in [-1, rank), -1 on axes with one block, distinct.
  void check_grid_map(const char *op, const char *map_name, const GridMap &map, const Dims &dims,
                      bool every_split_axis_mapped) const;

  BlockGraphConfig config_;
};

// Tensors made by an elementwise operator and read once, by an elementwise operator at its own
// output index (same dims) in the same loop phase: code generators compute them in that reader's
// own loop (the chain's values stay in registers, no tile, no barrier between), and cost models
// charge no tile for them. `keep(op)` may keep an operator's result stored all the same.
std::vector<bool> inlined_tensors(const BlockGraph &bg, const std::function<bool(const Operator &)> &keep = nullptr);

}  // namespace yirage
