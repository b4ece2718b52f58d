// The copies of a µGraph block's input tiles on CUDA (the plan's stages and prefetch,
// cuda_ugraph_plan.hpp).
//
// Tiles the for-loop reads anew every iteration, in 16-byte groups, are copied with cp.async into
// a ring of `depth` raw (unconverted) stages in shared memory, depth − 1 iterations ahead: global
// loads are in flight while the block computes. At the top of each iteration the block waits for
// iteration it's copies (its own, then a barrier for everyone's); those of iteration
// it + depth − 1 go into the stage that iteration it − 1 read, which no thread reads past that
// barrier, and are issued at the end of iteration it. At the tile's turn its stage is converted
// into the float tile, or the mma reads it as it is (direct stages).
//
// Tiles read once are loaded into registers first thing in the kernel (ahead of the pipeline's
// first copies, whose issue then hides their latency) and stored into their tiles where the
// invariant part reads them.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_ugraph_plan.hpp"

namespace yirage::codegen::cuda {

class LoadPipeline {
 public:
  // sync: prints a barrier of the block (and tells the barrier placement so).
  LoadPipeline(Printer &p, const UGraphPlan &plan, std::function<void()> sync)
      : p_(p), plan_(plan), sync_(std::move(sync)) {}

  // The global loads of the prefetched tiles, first thing in the kernel.
  void load_prefetched();
  // Their conversion and stores, where the invariant part reads its tiles; calls wrote(tile)
  // for each.
  void store_prefetched(const std::function<void(TensorId)> &wrote);
  // Before the loop: the first depth − 1 stages (or the producers' first).
  void start();
  // The top of an iteration: wait for its stages, then a barrier.
  void advance();
  // The end of an iteration: issue the stages of iteration it + depth − 1.
  void issue_next();
  // A staged tile at its turn in iteration `it`: its stage converted into the tile (nothing for a
  // direct stage, which the mma reads).
  void read_staged(const Stage &st);

  // The warp-specialized loop (UGraphPlan::producers): the stages' mbarriers, and stage `it`'s
  // copies by the producers.
  void start_stage_barriers();
  void produce_stage(const std::string &it);

 private:
  std::string stage_index(const Stage &st, const std::vector<std::string> &v, int64_t group) const;
  void issue_stages(const std::string &it, const std::optional<ThreadShare> &copiers = std::nullopt);
  void fill_plain_stages(const std::string &it, const ThreadShare &copiers);
  void fill_plain(const Stage &st, const std::string &it, const ThreadShare &copiers);
  void zero_stage_padding();
  std::string base(const Operator &op, const std::string &it) const;

  Printer &p_;
  const UGraphPlan &plan_;
  std::function<void()> sync_;
};

}  // namespace yirage::codegen::cuda
