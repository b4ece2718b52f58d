// Ragged tiles (docs/ugraphs.md, "Edge tiles"): where a grid axis or the for-loop splits a
// kernel dim into parts that do not divide it, every part is ragged_tile_length long and the
// last part ends past the tensor. A tile's elements past the tensor are absent: loads read them
// as zero, saves skip them, and each reduction, matmul and accumulator first sets the absent
// elements it reads to its identity (0, or -inf for a max). What an absent element holds is
// otherwise never read, so any operator may compute garbage there.
//
// The reference interpreter and every code generator apply these rules at the same places
// (absent_fills), which is what makes a ragged µGraph mean one thing everywhere.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/block_graph.hpp"

namespace yirage {

// How the tiles along one dim of a tile are placed in a kernel dim whose extent they overrun.
struct RaggedSplit {
  int64_t extent = 0;        // the kernel dim's element count
  int64_t tile = 0;          // the tile's length along it
  int32_t grid_axis = -1;    // the grid axis whose blocks take successive pieces (-1: none)
  int64_t block_stride = 0;  // elements between neighbouring blocks' starts (grid_axis >= 0)
  bool looped = false;       // each iteration takes the next tile

  bool operator==(const RaggedSplit &) const = default;
};

// Per dim of one tile: its split where the tile is ragged along it, else nullopt.
using RaggedDims = std::vector<std::optional<RaggedSplit>>;

// Per tensor of `bg` (index = TensorId). Throws Error(kInvalidArgument) for what a ragged tile
// cannot take part in (an rms_norm, concat or split along it; a mean or rms accumulator whose
// count would differ between blocks; two operands split differently along one dim).
std::vector<RaggedDims> ragged_dims(const BlockGraph &bg);
bool has_ragged_tiles(const BlockGraph &bg);

// Where block `block`'s tile (in iteration `iteration`) starts along the split dim, and how many
// of its elements lie inside the kernel dim (at least 0, at most split.tile).
int64_t ragged_start(const RaggedSplit &split, const std::array<int64_t, 3> &block, int64_t iteration);
int64_t present_length(const RaggedSplit &split, const std::array<int64_t, 3> &block, int64_t iteration);

// Elements between the starts of neighbouring blocks' tiles along dim `dim` of an input
// iterator's or output saver's kernel tensor: the tile, times the loop for an iterator that the
// loop splits along the same dim.
int64_t block_stride(const BlockGraph &bg, const Operator &io, size_t dim);

// The absent elements operator `op` must see as its identity: for each, which input, along
// which of its dims, and the value (0, or -inf for a max).
struct AbsentFill {
  size_t input = 0;
  std::vector<size_t> dims;
  double value = 0;
};
std::vector<AbsentFill> absent_fills(const BlockGraph &bg, const Operator &op, const std::vector<RaggedDims> &ragged);

// What accum_reduce_mean and accum_reduce_rms divide by: the elements of X's last dim over all
// iterations, absent ones not counted.
int64_t accumulated_count(const BlockGraph &bg, const Operator &accumulator, const std::vector<RaggedDims> &ragged);

}  // namespace yirage
