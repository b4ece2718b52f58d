// The CUDA generator's plan for one µGraph block, made before anything is printed
// (cuda_ugraph.cpp prints it over the shared lowering, codegen/lower_ugraph.hpp):
//
//  - tiles read only as the B operand of tensor-core matmuls get padded rows (fewer bank
//    conflicts), and 16-bit ones that change every iteration are read by the mma straight from
//    their load stage ("direct": no float copy);
//  - a for-loop whose iteration is attention (Q·K, exp, Σ E, Σ E·V) runs it in registers
//    (cuda_attention.hpp), where it fits;
//  - the tiles a loop reads anew each iteration come through a ring of cp.async stages, as deep
//    as shared memory and the device's occupancy allow; tiles read once are loaded into
//    registers all at once first (prefetch);
//  - where attention runs on warpgroup mma alone, the warps split into computing ones and
//    producers that only copy (mbarriers between them instead of block barriers);
//  - a transposed matmul's result read only by transposed matmuls gets a copy with padded rows;
//  - where all of it lies in dynamic shared memory (`smem`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/lower_ugraph.hpp"
#include "cuda/codegen/cuda_attention.hpp"
#include "cuda/codegen/cuda_loops.hpp"
#include "cuda/codegen/cuda_printer.hpp"
#include "cuda/codegen/cuda_ref.hpp"
#include "cuda/codegen/cuda_source.hpp"

namespace yirage::codegen::cuda {

// Attention in registers: the operators it runs, and where it leaves its sums.
struct AttentionPlan : RegisterAttention {
  size_t qk = 0, exp = 0, ev = 0, sum_ev = 0, sum_e = 0;
  std::optional<size_t> q_norm;   // Q = rms_norm(X), done as Q's fragments are loaded from X
  std::optional<size_t> row_sum;  // E's rows summed in the iteration, then accumulated by sum_e
  // The output savers that are all that read sum_ev's and sum_e's results: the sums then go
  // straight to the kernel's outputs, without a tile (a split loop's chunks).
  std::optional<size_t> ev_saver, e_saver;
  std::string scratch;           // scratch_floats() where the warps' sums meet (empty: none needed)
  bool scratch_in_ring = false;  // the load pipeline's stages, free after the loop
  bool handles(size_t i) const {
    return i == qk || i == exp || i == ev || i == sum_ev || i == sum_e || i == row_sum || i == q_norm;
  }
  bool saves(size_t i) const { return i == ev_saver || i == e_saver; }
};

// An input tile copied with cp.async into a ring of `depth` raw (unconverted) stages.
struct Stage {
  size_t input;
  const Operator *op;
  int64_t group, offset, floats;  // the ring's place in shared memory and one stage's size
  Dims strides;                   // of a stage, in elements: compact, or padded rows if direct
  // Laid out as yr_swizzled128 says (attention's K and V for warpgroup mma), each matrix of
  // `rows` rows; 1024-byte aligned.
  bool swizzled = false;
  int64_t rows = 0;
  // A direct 16-bit tile whose rows are not 16-byte groups in the tensor (a row length that no 8
  // divides, as a KV cache of 1,001 keys laid out [depth, keys]): filled by plain copies, no
  // cp.async (LoadPipeline::fill_plain_stages).
  bool plain = false;
  // The stage's elements: the tile's, or more where attention rounds its keys up to whole 16s
  // (the copies fill the tile's part; LoadPipeline::zero_stage_padding the rest).
  Dims dims;
};

// A tile read once whose 16-byte groups are loaded into registers first.
struct PrefetchedTile {
  const Operator *op;
  size_t input;
  int64_t group;
};

class UGraphPlan {
 public:
  // threads: the block's thread count (a multiple of 32); output_dtypes: the kernel's outputs';
  // tensor_cores: block-level matmuls may use mma (16-bit graphs on sm_80+).
  UGraphPlan(const BlockGraph &bg, int64_t threads, std::vector<DType> output_dtypes, bool tensor_cores,
             const CudaTarget &target);

  const BlockGraph &bg;
  const std::vector<DType> output_dtypes;
  const bool tensor_cores;
  const CudaTarget target;
  BlockShape block;
  BlockLayout layout;
  std::vector<int64_t> row_pad;  // per tensor: floats after each row of its tile
  std::vector<bool> direct;      // per tensor: read by the mma from its 16-bit stage
  std::vector<bool> inlined;     // per tensor: computed by its only reader, never stored
  std::optional<AttentionPlan> attention;
  std::map<TensorId, Ref> tensor_core_views;  // tiles the tensor-core code keeps a padded copy of
  std::vector<Stage> stages;
  int64_t depth = 0;  // of the load pipeline; 0: none
  std::vector<PrefetchedTile> prefetch;
  int64_t producers = 0;       // threads that only copy (the warp-specialized loop); 0: none
  std::string stage_barriers;  // their mbarriers in shared memory
  // Per tensor, its ragged dims (ir/ragged_tiles.hpp); empty where the graph has no ragged tiles.
  std::vector<RaggedDims> ragged;

  // What the shared lowering needs of the plan.
  UGraphLowering lowering() const;

  const Dims &dims_of(TensorId t) const { return bg.tensor(t).dims; }
  LoopPhase phase(TensorId t) const { return bg.tensor(t).phase; }
  std::string at(int64_t offset) const { return "(smem + " + std::to_string(offset) + ")"; }
  std::string tile(TensorId t) const { return at(layout.tile[static_cast<size_t>(t)]); }
  bool is_direct(TensorId t) const { return direct[static_cast<size_t>(t)]; }
  bool is_inlined(TensorId t) const { return inlined[static_cast<size_t>(t)]; }
  ThreadShare block_share() const { return block_wide(block.threads); }
  // A tile as the tensor-core code reads it: its stage where direct, else its (padded) tile.
  Ref tile_ref(TensorId t) const;
  Dims tile_strides(TensorId t) const;
  std::optional<Ref> tensor_core_view(TensorId t) const;
  // 16-byte groups of `op`'s tile moves (ugraph_layout.hpp's vector_group).
  int64_t group_of(const Operator &op, const Dims &tile_dims, DType dtype) const;

  // Ragged tiles: whether t has any; the copy bounds of t's tile in iteration `it` (an
  // expression); whether a kFillAbsent step writes input `input` of operator `op` before it runs
  // (lower_ugraph.hpp, fill_needed). A 16-byte group never straddles the end: vector_group takes
  // groups only where they divide the tensor's last dim.
  bool is_ragged(TensorId t) const;
  // Whether t may be read by the mma from its stage: a 16-bit per-iteration input tile of a loop
  // of 2 or more.
  bool direct_candidate(TensorId t) const;
  std::vector<CopyBound> bounds(TensorId t, const std::string &it) const;
  bool filled_before(size_t op, size_t input) const;

  // The operators reading t; the operator making it; the output saver that is t's only reader.
  std::vector<size_t> readers(TensorId t) const;
  const Operator &producer(TensorId t) const;
  std::optional<size_t> only_saver(TensorId t) const;
  // Which kernel output output saver `saver` writes: the savers are the outputs, in order.
  size_t output_index_of(size_t saver) const;
  // The unary operator that is the only reader of a matmul's output, in the same loop phase: its
  // work can be done on the matmul's results before they are stored; nullptr if there is none.
  const Operator *unary_consumer(const Operator &op) const;
  // The accumulators that sum a matmul's per-iteration result (after its epilogue) as they are,
  // which its tensor-core path can update in registers: sums, and the sums behind a sum or mean
  // of rows.
  std::vector<size_t> epilogue_sums(const Operator &op, const Operator *epilogue) const;
  // Where accumulator i keeps its running value.
  bool has_state(size_t i) const;
  std::string accumulator_target(size_t i) const;

  // ---- the load pipeline's stages ----
  const Stage *stage_of(size_t input) const;
  // The raw stage for iteration `it` (an expression) as a pointer to the input's element type.
  std::string stage_ptr(const Stage &st, const std::string &it) const;
  bool any_swizzled() const;
  bool prefetched(size_t input) const;
  // Whether the tile of input iterator `input` is read once (invariant, or a loop of one).
  bool read_once(const Operator &input) const;
  // How many times a block waits for its tiles, for the search's cost model (CudaKernel::
  // loop_waits). A loop whose per-iteration tiles all go through the ring of cp.async stages
  // waits once per depth − 1 iterations (the copies run that far ahead of their readers); any
  // other loop as BlockGraph::loop_waits counts. Tiles read once with the plain copy (neither
  // prefetched into registers nor staged) add one wait per kMaxPrefetchGroups 16-byte groups a
  // thread copies, as many as prefetching keeps in flight at once.
  int64_t loop_waits() const;
  // The bytes a block moves through shared memory over its loop, for the search's cost model
  // (CudaKernel::shared_traffic_bytes): the generic code keeps each operator's result as a float
  // tile there, written once and read by each reader, and widens staged 16-bit tiles into float
  // ones; tiles read by the mma from their stage are read at their own width; attention in
  // registers, inlined tiles and prefetched ones move none.
  int64_t shared_traffic_bytes() const;
  // Whether every block reads the same tile (no grid axis of several blocks splits the input).
  bool read_by_every_block(const Operator &input) const;
  // Calls f(op, input index, tile dims, 16-byte group) for every input iterator, in order.
  void each_input_tile(const std::function<void(const Operator &, size_t, const Dims &, int64_t)> &f) const;
  // The warp-specialized loop's computing threads, and the producers' share of work.
  std::string computing_threads() const { return std::to_string(block.threads - producers); }
  ThreadShare producer_share() const;

 private:
  bool in_epilogue(const Operator &op) const;
  void plan_row_padding();
  void plan_shared_memory();
  void plan_register_attention(bool promote);
  TensorId ops_input(size_t op, size_t input) const { return bg.operators()[op].inputs[input]; }
  bool place_attention_scratch();
  void plan_stages();
  int ring_depth(int64_t stage_floats) const;
  bool warpgroup_operand(TensorId t) const;
  void plan_producers();
  void plan_tensor_core_views();
  void plan_prefetch();
  // Shared memory past everything planned, for `floats` more floats, when it fits the block's
  // limit: a pointer expression, or "" when it does not fit.
  std::string allocate_spare(int64_t floats);
};

}  // namespace yirage::codegen::cuda
