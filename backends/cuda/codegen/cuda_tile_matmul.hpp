// A matmul of tiles at block level (µGraph code): on tensor cores where the target and the tiles
// allow (mma.sync in TF32 or on 16-bit operands, transposed for few rows, ldmatrix from 16-bit
// stages), on AMD's matrix cores in HIP for gfx90a (MFMA, cuda_tile_mfma.hpp), else float4 or
// scalar FMA loops shared by the block's threads. A unary operator that
// is the matmul's only reader may be applied to its results before they are stored (an
// epilogue), and for-loop sums of the result may be updated in registers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cuda/codegen/cuda_loops.hpp"
#include "cuda/codegen/cuda_ref.hpp"
#include "ir/operator.hpp"

namespace yirage::codegen::cuda {

class TileMatmul {
 public:
  // tensor_cores: the matmul may use TF32 mma (only where rounding operands to TF32 stays within
  // the graph's dtype tolerance: 16-bit graphs).
  TileMatmul(Printer &p, const ThreadShare &s, BlockShape &block, bool tensor_cores)
      : p_(p), s_(s), block_(&block), tensor_cores_(tensor_cores) {}

  // HIP on 64-lane wavefronts: the matmul on MFMA (cuda_tile_mfma.hpp), which takes every
  // shape of float tiles, before any other path.
  void set_mfma(bool mfma) { mfma_ = mfma; }
  // A unary operator applied to a tensor-core matmul's results before they are stored, into
  // `out` instead of the matmul's own output (which then is never written). fused() says
  // whether emit() could.
  void set_epilogue(const Operator *unary, const Ref &out);
  bool fused() const { return fused_; }
  // Running sums (for-loop accumulators, laid out like the result) that the tensor-core path
  // adds its results to in registers, as it stores them or, where `store_result` is false (no
  // other reader), instead. accumulated() says whether emit() did; devices before sm_80 (the
  // #else branch) store the result and leave the sums to the caller. A sum that only matters
  // row by row (its accumulator totals each row after the loop) takes a lane's two results of a
  // row as one addition.
  struct Sum {
    std::string ptr;
    bool row_total;
  };
  void set_sums(std::vector<Sum> sums, bool store_result);
  bool accumulated() const { return accumulated_; }
  // The transposed path takes A's operands from `fragments`, a per-lane register array that
  // register_fragments() filled before the loop (for an A that does not change in it).
  void set_a_fragments(std::string fragments) { a_fragments_ = std::move(fragments); }
  // Where the transposed path reads A from and stores its results instead of the tiles
  // (a private copy with padded rows, see cuda_ugraph_plan.hpp).
  void set_views(std::optional<Ref> a_view, std::optional<Ref> out_view);
  // The most rows of A that skinny_tensor_core_matmul takes (4 mma tiles of 8).
  static constexpr int64_t kMaxTransposedRows = 32;
  // Whether skinny_tensor_core_matmul takes the matmul a·b = o.
  static bool transposes(const Ref &a, const Ref &b, const Ref &o, bool tensor_cores);
  // Whether A's values are B's 16-bit type widened: the mma then takes them repacked, exactly.
  static bool exact_a(const Ref &a, const Ref &b) { return a.widened_16bit && a.element == b.element; }

  // For a transposed matmul whose A (without batch dims) does not change in the loop: declares
  // `name`, the lane's A operands for every mma tile and k16 step (2 registers per step on
  // 16-bit mma, 4 on TF32; tile j's from j · k / 8 or j · k / 4), and fills it from A's tile.
  // Returns false (emitting nothing) where it does not apply or would take more than 32
  // registers.
  bool register_fragments(const std::string &name, const Ref &a, const Ref &b, const Ref &o);

  // Emits o = a·b; returns whether every output element e was written by the thread that owns e
  // in a shared loop (what the barrier placement needs to know).
  bool emit(const Ref &a, const Ref &b, const Ref &o);

 private:
  // A matmul of shared-memory tiles (block level) on tensor cores, for compact tiles whose n and
  // k are multiples of 8: each warp computes 16×8 output tiles with mma.m16n8k8 in TF32 (float32
  // accumulation), rows past m reading row m − 1 and never stored. Devices before sm_80 get the
  // float4 or scalar loop instead (#else). Returns false (emitting nothing) where it does not
  // apply. Every lane of a warp runs the same items: mma is warp-synchronous.
  bool tensor_core_matmul(const Ref &a, const Ref &b, const Ref &o);

  // A matmul of at most 32 rows against a 16-bit B tile that the mma reads from its stage,
  // computed transposed: Cᵀ = Bᵀ·Aᵀ puts 16 of B's columns in the mma's 16 rows and A's rows in
  // its 8 columns, where the plain form would spend half of every mma on rows of zeros (and
  // moves to make them). ldmatrix .trans reads Bᵀ's fragments, four 8×8 tiles per instruction.
  // A warp's item is 16 columns of all of A's rows: one ldmatrix of B per k16 step feeds an mma
  // for each 8 of A's rows (B's fragments, the costly part, are read once per block of rows, not
  // once per 8 rows). Where A's values are widened from B's type (exact), each k16 step is one
  // mma.m16n8k16 per 8 rows on A repacked; otherwise two TF32 mma.m16n8k8 on B widened and A
  // rounded to TF32, k permuted so that a lane's two k are adjacent (one float2 of A, one
  // ldmatrix pair of B). Returns false (emitting nothing) where it does not apply.
  bool skinny_tensor_core_matmul(const Ref &a, const Ref &b, const Ref &o);

  // The mma tiles of 8 columns that a transposed matmul of m rows takes.
  static int64_t row_tiles(int64_t m) { return (m + 7) / 8; }

  // The address of the first A value a lane of a transposed matmul reads for the mma tile whose
  // rows start at `first`: row first + lane / 4 of the m rows at `base` (where the tile is
  // `partial`, rows past m read row m − 1, whose results are never stored), column 2·(lane % 4).
  // Its next values are 8 columns apart (one k8 block each).
  static std::string transposed_a_lane(const std::string &base, int64_t m, int64_t row_stride, const std::string &first,
                                       bool partial);
  // A tensor-core result after the unary epilogue, if there is one.
  std::string epilogue_value(const std::string &c) const;

  // The warps' share of `items` (of a warp each), starting after the warps the previous
  // tensor-core operator left busiest.
  ThreadShare warp_items(const Dims &items);

  // Ends a tensor-core matmul: devices before sm_80 (#else) get the float4 or scalar loop, and
  // the epilogue's unary after it, over the stored results.
  void finish_tensor_cores(const Ref &a, const Ref &b, const Ref &o);

  // An mma operand from a float of `x`: rounded to TF32, or its bits as they are where the value
  // is a widened 16-bit float (exact: the rounding would change nothing).
  static std::string tf32(const Ref &x, const std::string &value);

  // A matmul of shared-memory tiles (block level) whose n is a multiple of 4: each iteration
  // computes 4 adjacent outputs of a row, reading A once and B as one float4 per k, with four
  // independent FMA chains. Returns false (emitting nothing) where it does not apply.
  bool tiled_matmul(const Ref &a, const Ref &b, const Ref &o);

  // One output element per iteration: Σ_p A[…, i, p] · B[…, p, j] in float32. Operands may be
  // strided views; batch dims of size 1 broadcast.
  void matmul(const Ref &a, const Ref &b, const Ref &o);

  Printer &p_;
  ThreadShare s_;
  BlockShape *block_;
  bool tensor_cores_;
  bool mfma_ = false;
  const Operator *epilogue_ = nullptr;
  Ref epilogue_out_;
  bool fused_ = false;
  std::vector<Sum> sums_;
  bool store_result_ = true, accumulated_ = false;
  std::string a_fragments_;
  std::optional<Ref> a_view_, out_view_;
};

}  // namespace yirage::codegen::cuda
