// How the CUDA generator shares loops among threads, and warp-level reductions: the pieces that
// the printer of the loop-level form (cuda_printer.hpp) and the CUDA-only paths (tensor-core
// matmuls, attention and rows in registers, weight products) print their loops with.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/c_text.hpp"
#include "codegen/ugraph_layout.hpp"

namespace yirage::codegen::cuda {

// How a loop's iterations are shared: each thread starts at `start` and steps by `step` — the
// whole grid for a pre-defined operator, one block's threads inside a customized one (so at block
// level element e of every loop belongs to thread e % threads, the rule the barrier placement of
// codegen/ugraph_walker.hpp relies on). A customized kernel's thread count is a constant of its
// source: loops with constant bounds and steps unroll, and their index arithmetic folds.
struct ThreadShare {
  std::string start, step;
  int64_t threads = 0;  // the step when it is a constant (block level)
};
inline const ThreadShare kGridWide = {"static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x",
                                      "static_cast<int64_t>(gridDim.x) * blockDim.x"};
inline ThreadShare block_wide(int64_t threads) {
  return {"static_cast<int64_t>(threadIdx.x)", std::to_string(threads), threads};
}

// What block-level code knows about its block: the thread count (a multiple of 32) and a
// shared-memory scratch array of one float per warp for reductions across warps.
struct BlockShape {
  int64_t threads = 0;
  // Two scratch arrays used in turn: a reduction writes one while threads still behind may read
  // the other from the reduction before (each use is followed by a barrier before its reads).
  std::string scratch[2];
  int next_scratch = 0;
  // The warp that takes the next tensor-core matmul's first item. Items are dealt to warps in
  // turn across matmuls, so that a matmul with fewer items than warps leaves the rest to the next
  // one: independent small matmuls (lora's X·W and X·A) run side by side, not one after another.
  int64_t next_warp = 0;
  // The warps the last tensor-core matmul left without an item (they come after its last).
  int64_t idle_warps = 0;
  int64_t warps() const { return threads / 32; }
};

// One step of a warp's sum (or max): `value` combined with that of the lane `off` away.
std::string warp_reduce_step(const std::string &value, bool is_max);
// Sums (or maxes) `value` across a warp; every lane gets the result.
std::string warp_reduce(const std::string &value, bool is_max);
// A sum's or max's starting value, and the statement adding (or maxing) `v` into `into`.
inline std::string reduce_identity(bool is_max) {
  return is_max ? "-INFINITY" : "0.0f";
}
std::string reduce_into(const std::string &into, const std::string &v, bool is_max);

// rms_norm's arithmetic (codegen/lower_operator.hpp, rms_scale), as `const float name = …;`: the
// scale of a row whose largest magnitude is `peak`, and the reciprocal of a row of `cols` whose
// scaled squares sum to `total`. One reciprocal square root per row (rsqrtf, 2 ulp), then two
// multiplications per element, (x · scale) · inv, instead of an IEEE square root and a division on
// the block's critical path.
std::string rms_scale(const std::string &peak, double eps, const std::string &name = "scale");
std::string rms_inverse(const std::string &total, int64_t cols, double eps, const std::string &scale,
                        const std::string &name = "inv");

// `tile_dims` in groups of `group` elements along the last dim.
inline Dims groups_of(const Dims &tile_dims, int64_t group) {
  Dims groups = tile_dims;
  groups.back() /= group;
  return groups;
}

// tile_base (codegen/ugraph_layout.hpp) as an offset's text, `it` the iteration's.
inline std::string tile_base_text(const BlockGraph &bg, const Operator &op, const Dims &tile_dims,
                                  const std::string &it) {
  return c_text(tile_base(bg, op, tile_dims, var(it)), kOffsetPrecedence);
}

// How many elements of `dims` each of `threads` threads owns, at most.
inline int64_t per_thread(const Dims &dims, int64_t threads) {
  return (num_elements(dims) + threads - 1) / threads;
}

// Runs body(vars) for every index of `dims` (vars prefix0, prefix1, …), the row-major linear
// index shared as `s` says. At block level every thread's count is known, so the loop counts a
// thread's elements (u, which callers may use to index per-thread register arrays) and a few
// iterations unroll (all of them where there are at most 8, else `unroll` at a time).
void shared_loop(Printer &p, const ThreadShare &s, const Dims &dims, const std::string &prefix,
                 const std::function<void(const std::vector<std::string> &)> &body, int unroll = 1);
// The same with the index variables named `names` and the linear index `linear`.
void shared_loop(Printer &p, const ThreadShare &s, const Dims &dims, const std::vector<std::string> &names,
                 const std::string &linear, const std::function<void(const std::vector<std::string> &)> &body,
                 int unroll = 1);

}  // namespace yirage::codegen::cuda
