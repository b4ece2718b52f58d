// Where a µGraph block keeps its tiles, and where each block's tiles lie in the kernel-level
// tensors (docs/codegen.md). Shared by every target's lowering of customized operators.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/expr.hpp"
#include "ir/block_graph.hpp"

namespace yirage::codegen {

// Float offsets into the block's arena (GPU shared memory, a CPU thread's cache-resident arena),
// each rounded up to `align` floats; -1 where an operator has no such array.
struct BlockLayout {
  std::vector<int64_t> tile;         // per tensor
  std::vector<int64_t> state;        // per operator: a reducing accumulator's sums, or the new
                                     // running max during an online-softmax (rescale) update
  std::vector<int64_t> running_max;  // per operator: a rescale accumulator's running max, or an
                                     // rms accumulator's running peak |x| per element
  int64_t floats = 0;                // the arena's size
  std::vector<DType> stored;         // per tensor: what its tile holds (float32 unless narrow)
};
// row_pad (empty, or one entry per tensor): floats left after each row (last dim) of a tile;
// elsewhere (empty, or one entry per tensor): tensors whose values the target keeps elsewhere
// (they get no room); sums_elsewhere (empty, or one entry per operator): reducing accumulators
// whose running sums the target keeps elsewhere (they get no state); narrow (empty, or one entry
// per tensor, from narrow_input_tiles): tiles kept in their 16-bit dtype, two to a float.
BlockLayout plan_block_layout(const BlockGraph &bg, int64_t align, const std::vector<int64_t> &row_pad = {},
                              const std::vector<bool> &elsewhere = {}, const std::vector<bool> &sums_elsewhere = {},
                              const std::vector<bool> &narrow = {});

// The tiles of input iterators over 16-bit tensors: copies of the tensor's values, which their
// dtype holds exactly, so a target short of shared memory can keep them at half the size.
std::vector<bool> narrow_input_tiles(const BlockGraph &bg);

// Throws Error(kUnsupported) naming both sizes when a block's arena of `bytes` exceeds the
// device's `limit` of shared memory per block (0: no limit).
void check_arena_fits(int64_t bytes, int64_t limit);

// The element offset, in the kernel-level tensor, of the tile that input iterator or output
// saver `op` handles in block (bx, by, bz) at for-loop iteration `it`.
Expr tile_base(const BlockGraph &bg, const Operator &op, const Dims &tile_dims, const Expr &it = var("it"));
// The largest number every term of that offset is a multiple of, whatever the block and
// iteration (0 when the offset is always 0).
int64_t tile_base_granule(const BlockGraph &bg, const Operator &op, const Dims &tile_dims);

// Elements of `dtype` in `bytes` bytes: one vector access.
inline int64_t vector_elements(DType dtype, int64_t bytes) {
  return bytes / static_cast<int64_t>(dtype_size(dtype));
}
// How many consecutive elements of the tile that input iterator or output saver `op` moves can go
// as one access of `vector_bytes` bytes of `dtype`: that many, when every such group starts at a
// multiple of it in the tensor and in the tile (the tensor's base aligned), else 1.
int64_t vector_group(const BlockGraph &bg, const Operator &op, const Dims &tile_dims, DType dtype,
                     int64_t vector_bytes);

}  // namespace yirage::codegen
