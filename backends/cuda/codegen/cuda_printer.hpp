// The CUDA printer of the loop-level form (codegen/c_printer.hpp): loops shared by the grid
// (grid-stride) or by a block's threads (counted per thread, so that they unroll), __syncthreads
// barriers, tiles in dynamic shared memory (`smem`), row reductions across warps with shuffles,
// tile copies in 16-byte groups where the tensor is aligned for them (checked once per kernel:
// declare_alignment), and block-level matmuls on the FMA units (TileMatmul without tensor cores;
// the µGraph code takes its matmuls to the tensor cores itself).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "codegen/c_printer.hpp"
#include "cuda/codegen/cuda_loops.hpp"

namespace yirage::codegen::cuda {

// The name of the flag that says whether a kernel parameter is 16-byte aligned.
inline std::string aligned_name(const std::string &tensor) {
  return tensor + "_16";
}
// Declares aligned_name(tensor).
void declare_alignment(Printer &p, const std::string &tensor);

// Where a µGraph block's code runs: the block it computes (C++ expressions for its x, y and z)
// and its shared memory. By default the body declares the kernel's dynamic shared memory as its
// `smem`; a kernel that runs two bodies (cuda_split_pair.hpp) declares it once as `yr_smem`
// (1024-byte aligned) and gives each body `yr_smem` + an offset in floats (a multiple of 256).
struct BodyPlacement {
  std::array<std::string, 3> block = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
  int64_t smem_offset_floats = -1;  // -1: the body declares the dynamic shared memory
};
// The head of a µGraph block's code: `smem` (aligned to 1024 bytes, and checked, where
// `swizzled`) and the block's indices bx, by, bz.
void emit_block_prologue(Printer &p, const BodyPlacement &placement, bool swizzled);

// Converts 16 bytes of elements of the tensor's type, held in `raw` (a uint4), to floats and stores
// them at `tile_at` (16-byte aligned) as float4s.
void store_group(Printer &p, const std::string &tensor, const std::string &raw, const std::string &tile_at,
                 int64_t group);

// A ragged tile (ir/ragged_tiles.hpp) along dim `dim`: `inside`, a C++ expression, says how many
// of its elements lie inside the tensor (it may exceed the tile).
struct CopyBound {
  size_t dim;
  std::string inside;
};
// Whether the element, or the group of `group` elements along the last dim, at index `v` (one
// variable per dim, the last counting groups) lies inside the tensor: a C++ condition, empty
// where there are no bounds. No group straddles the end: vector_group takes groups only where
// they divide the tensor's last dim.
std::string inside_condition(const std::vector<CopyBound> &bounds, const std::vector<std::string> &v, int64_t group);
// `count` (1, or a multiple of 4) zero floats at `at` (16-byte aligned where count > 1).
void store_zeros(Printer &p, const std::string &at, int64_t count);

// Copies between a tile (float, in shared memory, `tile_strides`) and its place in a
// kernel-level tensor (`tensor_strides`): body(index in the tensor, index in the tile) per
// element, or per `group` elements where the tensor's start is 16-byte aligned (aligned_name),
// shared as `share` says; unrolled so that each thread has several global accesses in flight.
// With `bounds`, only elements inside the tensor are copied; absent(index in the tile, count)
// runs for the others (a load's zeros; nullptr for a store, which skips them).
using TransferBody = std::function<void(const std::string &, const std::string &)>;
using AbsentBody = std::function<void(const std::string &, int64_t)>;
void transfer(Printer &p, const ThreadShare &share, const std::string &tensor, const Dims &tile_dims,
              const Dims &tensor_strides, const Dims &tile_strides, int64_t group, const TransferBody &element,
              const TransferBody &vector, const std::vector<CopyBound> &bounds = {},
              const AbsentBody &absent = nullptr);

class CudaPrinter : public CPrinter {
 public:
  // block: the block's shape where the code is a µGraph block's (loops shared by its threads,
  // row reductions' scratch); nullptr at kernel level.
  CudaPrinter(Printer &p, BlockShape *block) : CPrinter(p), block_(block) {}
  std::string int_type() const override { return "int"; }
  void print_barrier() override { p_.line("__syncthreads();"); }

 protected:
  void print_shared_loop(const Loop &loop) override;
  void print_row_reduce(const RowReduce &r) override;
  void print_copy(const TileCopy &c) override;
  void print_matmul(const Matmul &m) override;
  std::string pointer(const BufferRef &buffer) const override;

 private:
  ThreadShare block_share() const;
  BlockShape *block_;
  std::string row_lanes_;  // inside a row reduction's finish: how many threads share the row
};

}  // namespace yirage::codegen::cuda
