// Attention in registers: the µGraph code's path for a for-loop whose iteration is
//
//   A = Q·K (Q loop-invariant, K a 16-bit stage), E = exp(A), ΣE += E (row sums), Σ(E·V) += E·V
//
// (attention without its max, as the benchmark graphs write it, and the chunks of its split
// loop), on sm_80 and newer. The generic code keeps every tile in shared memory as float32 and
// runs E·V on TF32 mma with V widened, so that much of its iteration is conversions and
// shared-memory traffic. Here the iteration stays in registers, as FlashAttention-2 does it:
// each warp takes 16 of the block's query rows against its share of the iteration's keys (all of
// them where the block has as many row tiles of 16 as warps); Q·K is one mma.m16n8k16 per 8 keys
// and 16 of Q's columns, with Q's fragments loaded once before the loop; exp(A) is taken relative to
// an offset per row (the row's first maximum), so that its values stay in [0, 2^15] and go to
// the next mma in the graph's own 16-bit type (E itself overflows float16: exp(13) > 65 504),
// straight from the accumulators of the first (their layout is the A operand's of the second);
// V is read by ldmatrix .trans from its stage as it is. The offset moves only where a row's exps
// would pass 2^15 (rare once the first keys are seen), and then the warp's running sums of that
// row are scaled down by exp(old − new). On sm_90a, blocks whose rows come in
// groups of 64 (fits_warpgroups) run Q·K and E·V as warpgroup mma instead (wgmma: B read by the
// tensor cores from 128-byte swizzled stages, A from the same registers), in halves of 64 keys
// so that one half's softmax overlaps the other's mma.
//
// After the loop each warp scales its sums back by exp(offset); the warps of the same rows meet
// through a scratch array, and the totals go to the µGraph's accumulators in shared memory, for
// the generic code to finish, or straight to the kernel's outputs where output savers are all
// that read them (a split loop's chunks). The values are the accumulators' own (Σ exp(A)·V and
// Σ exp(A)), up to rounding, the offset only keeping the 16-bit operands in range.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_source.hpp"

namespace yirage::codegen::cuda {

struct RegisterAttention {
  int64_t rows = 0;   // query rows of the block (≤ 16 per warp)
  int64_t depth = 0;  // Q's columns = K's rows (a multiple of 16)
  int64_t keys = 0;   // K's columns = V's rows per iteration
  int64_t cols = 0;   // V's columns (a multiple of 16)
  // Warp w takes the 16 rows of row tile w % row_tiles against key share w / row_tiles; `warps`
  // = row_tiles · shares take part, the block's others only issue copies.
  int64_t row_tiles = 0;
  int64_t shares = 0;
  int64_t warps = 0;
  std::string element;  // the 16-bit C++ type of K and V (yr_f16 or yr_bf16)
  // Warpgroup mma (sm_90a, fits_warpgroups): Q·K and E·V are wgmma reading K and V from
  // stages laid out as yr_swizzled128 says; warp w still takes rows 16w…16w + 15 (those of its
  // warpgroup's 64 that the wgmma layouts give it), against all of the keys.
  bool warpgroups = false;
  // Warpgroups that issue their Q·K in turn, in a loop of `issue_turns` iterations without a
  // barrier of the block (0: no turns; set by the caller): warpgroup g waits at named barrier
  // 2 + g, issues its Q·K, then lets g + 1 go (the last lets 0 go into the next iteration), so
  // that the tensor cores take one warpgroup's scores while the other runs its softmax. Holding
  // g + 1 back until E·V's issue too was slower: the turns cover Q·K alone.
  int64_t issue_turns = 0;
  // How far above its offset a row's score may go before the offset moves, in log2 units
  // (emit_softmax_update; set by the caller from CudaTarget::attention_offset_slack).
  int offset_slack = CudaTarget::kDefaultAttentionOffsetSlack;
  // Ragged keys (ir/ragged_tiles.hpp): how many of the iteration's keys lie inside K, a C++
  // expression of `it` (empty: all of them). The scores of the others are set to −∞ before the
  // softmax update (their exps are 0, as the fills of E before Σ E and E·V would make them).
  std::string keys_inside;
  // log2(e) as the generated code writes it: scores times it are exps' exponents in base 2.
  static constexpr const char *kLog2e = "1.4426950408889634f";

  int64_t keys_per_warp() const { return keys / shares; }
  int64_t warpgroup_count() const { return warps / 4; }
  bool takes_turns() const { return warpgroups && issue_turns > 0 && warpgroup_count() > 1; }
  // Before the loop, in the warps that compute: the last warpgroup lets the first go.
  void emit_turns_start(Printer &p) const;
  // Where shares 1… leave their sums for share 0 after the loop (none with one share): their
  // Σ E·V, then their Σ E.
  int64_t scratch_floats() const { return (shares - 1) * rows * (cols + 1); }

  // Whether the shapes fit this path for a block of `block_warps` warps; sets the warps' split.
  // Rows go to different warps first (each extra row tile reads K and V once more from shared
  // memory, each extra share adds a scratch pass), then the keys: as many shares of a multiple
  // of 16 keys as the remaining warps allow.
  bool fits(int64_t block_warps);

  // Whether warpgroup mma fits: groups of 4 warps that each take 64 rows against all of the
  // iteration's keys (a multiple of 64, the swizzled stage's column blocks, and at most 128: 64
  // scores per lane), V's columns a multiple of 64 up to 256; warps past them issue the copies.
  // On sm_90 mma.sync's fp16 rate is half of wgmma's, so wgmma is taken wherever it fits, even
  // with half of the block's warps left to the copies. The keys split between warpgroups (the
  // shares of fits(), all 8 warps computing) gave wrong sums, not explained yet.
  bool fits_warpgroups(int64_t block_warps);

  // Before the loop, after the barrier that follows Q's tile (float32 at `q`, row stride
  // `q_stride`): the warp's registers and Q's mma operands (rows past `rows` are zeros). With
  // `q_norm_eps`, the tile is X and Q = rms_norm(X) over its `depth` columns (no weight): the 4
  // lanes that hold a row's fragments add up its squares by two shuffles and scale their own
  // values, instead of a block-wide pass writing Q's tile and a barrier before this (qknorm).
  void emit_registers(Printer &p, const std::string &q, int64_t q_stride, std::optional<double> q_norm_eps) const;

  // One iteration: K's stage at `k` (depth × keys, row stride `k_stride`), V's at `v` (keys ×
  // cols, row stride `v_stride`), both typed 16-bit pointer expressions; with warpgroups, both
  // stages are laid out as yr_swizzled128 says (the strides are unused).
  void emit_iteration(Printer &p, const std::string &k, int64_t k_stride, const std::string &v, int64_t v_stride) const;

  // mma.sync: each warp's Q·K, softmax update and E·V in turn.
  void emit_warp_iteration(Printer &p, const std::string &k, int64_t k_stride, const std::string &v,
                           int64_t v_stride) const;

  // wgmma, the keys in halves of 64 (where there are 128), so that one half's softmax runs while
  // the tensor cores work on the other: Q·K of both halves is issued at once; the softmax of
  // the first half overlaps Q·K of the second; E·V of the first, issued next, overlaps the
  // softmax of the second. Where the second half moves a row's offset, the sums are rescaled
  // once E·V of the first half is done (a wait that is rare once the first keys are seen). K's
  // 8-row groups are 1024 bytes apart, its blocks of 64 keys depth · 128 bytes; V's rows 128
  // bytes, its blocks of 64 columns keys · 128 bytes.
  void emit_warpgroup_iteration(Printer &p, const std::string &k, const std::string &v) const;

  // Whether the 8-key chunks [first, last) of att_s move a row's offset: a lane holds rows grp
  // (values 0, 1) and grp + 8 (values 2, 3); its maxima of them come from a tree of fmaxf (depth
  // log2 of the values, where a chain is as deep as there are values). Where any row of the warp
  // has a score more than offset_slack above its offset, in log2 units (each row's first scores;
  // rarely after: a warp-wide test on the lanes' own maxima, where the offset as a running
  // maximum took two shuffles, an exp and, whenever a maximum grew by any amount, 2 · cols
  // multiplications per lane, all between the scores and their exps), the 4 lanes of each row
  // meet by shuffles, the offsets move up to the rows' maxima, and, after `drain` (code that
  // makes the sums safe to write), the sums so far are scaled to them. Exps are then at most
  // 2^offset_slack (CudaTarget::attention_offset_slack): 2^15 is float16's largest power of two
  // (65 504 its largest value); bfloat16 and the float sums have room to spare.
  //
  // With `exps` (code taking the chunks' exps and adding them to the row sums), they are taken
  // first, at the offsets as they stand, so that the MUFU starts on them as soon as the scores
  // are in, beside the tree and the test; where the test moves an offset, the row sums are put
  // back and the exps taken again: the shuffles and the rescale do not sit between the scores and
  // their exps. Without `exps` the caller takes them after the update.
  void emit_softmax_update(Printer &p, int64_t first, int64_t last, const std::string &drain,
                           const std::function<void()> &exps) const;

  // exp(A − offset) of k16 step j of att_s (at most 2^offset_slack once the offsets are tested):
  // its float sums, and its 16-bit values as E·V's A operands in `a`[0..3] (the step's two 8-key
  // chunks: rows grp, grp + 8 at keys 2·tig, 2·tig + 1 and 8 keys on).
  void emit_exp_step(Printer &p, const std::string &a) const;

  // One wgmma (cuda_wgmma.hpp's wgmma_call) of K's or V's element type.
  void emit_wgmma(Printer &p, int64_t n, const std::string &acc, int64_t first, const std::string &a,
                  const std::string &desc, bool accumulate) const;

  // Where emit_finish puts one of the sums: `base` + row · row_stride + column (a float pointer
  // into shared memory, or a pointer into a kernel output, of the output's element type; each
  // value is rounded to it by yr_st). Pairs of
  // adjacent columns go out as one float2 store where `pairs` holds (a C++ condition: "true" for
  // shared memory, the output's 16-byte alignment test for a float32 output, empty for none).
  struct Destination {
    std::string base;
    int64_t row_stride = 0;
    std::string pairs;
  };

  // After the loop: each warp's sums, scaled back by exp(offset), written (not added: nothing
  // else writes them) as Σ E·V (rows × cols) and Σ E (one per row: the row sums are the warps',
  // the accumulator keeps no rows × keys state). With several shares of the keys, shares 1… first
  // leave theirs in `scratch` (scratch_floats()) and, after a barrier, the warps of share 0 add
  // them to their own registers and write the totals: no pass over an accumulator in shared
  // memory, no barrier between the sum and a kernel output (cheaper than summing every share
  // block-wide into the accumulators and storing those; atomic float adds to shared memory are
  // compare-and-swap loops, which 8 warps adding to the same elements made slower than the whole
  // iteration). The caller puts a barrier before anything reads a destination in shared memory.
  void emit_finish(Printer &p, const Destination &ev, const Destination &e_sum, const std::string &scratch) const;
};

}  // namespace yirage::codegen::cuda
