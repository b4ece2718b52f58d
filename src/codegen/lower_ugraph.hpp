// Lowering a customized operator's µGraph to the loop-level form (docs/codegen.md). One block's
// work becomes steps, one per µGraph operator, in four phases:
//
//   start      accumulators take their starting values
//   invariant  before the for-loop: tiles that do not change in it, and what is computed from
//              them only (their tile bases at it = 0)
//   loop       each iteration: per-iteration tiles, what is computed from them, accumulator
//              updates, per-iteration tiles saved
//   after      after the loop: accumulators' results, what is computed from them, tiles saved
//
// Each step holds its plain code (stmt.hpp) and what it reads and writes, for barrier placement
// (ugraph_walker.hpp). A target prints the steps in order, each as its plain code or as its own
// faster code for that operator; the block's frame (which block it is: bx, by, bz; the arena)
// is the target's.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "codegen/stmt.hpp"
#include "codegen/ugraph_layout.hpp"
#include "ir/ragged_tiles.hpp"

namespace yirage::codegen {

// kFillAbsent: before an operator that reduces a ragged tile (ir/ragged_tiles.hpp), the tile's
// elements past the tensor set to the operator's identity, in place; `op` is that operator.
enum class StepKind {
  kStartAccumulator,
  kLoadTile,
  kCompute,
  kUpdateAccumulator,
  kFinishAccumulator,
  kSaveTile,
  kFillAbsent
};

// An array a step reads or writes, and whether each thread touches only the elements it owns in
// a block-wide loop (element e by thread e % threads), so that a barrier is needed only where
// the array is read elsewhere. Keys: tensor ids (tiles), state_key / max_key (accumulators).
struct Access {
  int64_t key;
  bool same_index;
};
inline int64_t state_key(size_t op) {
  return -2 * static_cast<int64_t>(op) - 2;
}
inline int64_t max_key(size_t op) {
  return -2 * static_cast<int64_t>(op) - 3;
}

struct Step {
  StepKind kind;
  size_t op;      // the µGraph operator
  size_t io = 0;  // kLoadTile: the kernel input; kSaveTile: the kernel output
  Block body;
  std::vector<Access> reads, writes;
  bool barrier_inside = false;  // the body has barriers of its own (every earlier write is then visible)
};

// What the target decides before lowering.
struct UGraphLowering {
  BlockLayout layout;                // plan_block_layout's, with the target's alignment and choices
  std::vector<int64_t> row_pad;      // per tensor, as the layout was planned (empty: none)
  std::vector<bool> inlined;         // per tensor, from inlined_tensors (empty: none)
  std::vector<DType> output_dtypes;  // of the kernel's outputs, in order
  int64_t vector_bytes = 16;         // the widest access a TileCopy may group elements into
  // The device's shared memory per block, in bytes: lower_ugraph refuses a layout that needs more
  // (check_arena_fits). 0: no limit, or the target checks what it adds to the layout itself.
  int64_t max_shared_bytes = 0;
  // Ragged tiles: matmuls get kFillAbsent steps setting their operands' absent elements of k to
  // zero (a target whose matmuls do not stop at Matmul::k_inside).
  bool fill_matmul_operands = false;
};

struct LoweredUGraph {
  std::vector<Step> start, invariant, loop, after;
};

// inlined_tensors (ir/block_graph.hpp) gives UGraphLowering::inlined.

// Whether fill `f` of operator `op` (ragged_tiles.hpp absent_fills) must be done: a zero fill of a
// loaded tile is not (a load leaves zeros past the end), unless another operator's fill writes a
// non-zero identity (a max's −∞) into that tile, in place.
bool fill_needed(const BlockGraph &bg, const std::vector<RaggedDims> &ragged, const Operator &op, const AbsentFill &f);

// How many elements of a ragged tile (ir/ragged_tiles.hpp) lie inside the tensor along `split`'s
// dim in block (bx, by, bz) and iteration `it`: the kernel dim's extent less the tile's start
// (it may exceed the tile).
Expr ragged_inside(const RaggedSplit &split, const Expr &it);

// Throws Error(kUnsupported) where the layout exceeds lowering.max_shared_bytes.
LoweredUGraph lower_ugraph(const BlockGraph &bg, const UGraphLowering &lowering);

// Pieces of the lowering, for targets that print a step their own way.
// A tile as steps name it: its place in the arena, its dims, its (padded) strides.
TensorRef tile_ref(const BlockGraph &bg, const UGraphLowering &lowering, TensorId t);
// What a compute operator reads: at its own output index (elementwise, no broadcast) or anywhere;
// the leaves of an inlined chain where it reads one.
std::vector<Access> compute_reads(const BlockGraph &bg, const UGraphLowering &lowering, const Operator &op);
// Whether accumulator `op` keeps its running sums apart from its result (a reducing accumulator
// with state in the layout), and the array it updates.
bool has_state(const BlockGraph &bg, const UGraphLowering &lowering, size_t op);
int64_t accumulator_key(const BlockGraph &bg, const UGraphLowering &lowering, size_t op);

}  // namespace yirage::codegen
