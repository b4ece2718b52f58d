// A kernel program of several µGraphs in one launch (plugin ABI 1.4): a persistent kernel.
//
// Every block of every operator is a task, numbered operator after operator (each operator's
// blocks in x, then y, then z order). The kernel's blocks stay resident and take tasks in that
// order from a counter in global memory; a task first waits for the tiles it reads that earlier
// operators of the program write (per tile: each operator's block sets its flag once its tile is
// written, and a reader waits only for the producer blocks whose tiles overlap what it reads),
// then runs its operator's body as that operator's kernel would run the block. A task waits only
// for tasks numbered before it, which blocks already running took: the kernel cannot deadlock,
// whatever number of its blocks are resident at once.
//
// The workspace (CudaKernel::workspace_bytes) holds the control words (the next task, the blocks
// done, the launch's epoch, the abandoned flag, each operator's count of finished blocks, never
// cleared: epoch × blocks after a launch), a flag per task (set to the launch's epoch: never
// cleared) and the program's own tensors. A reader of all of a producer's tiles waits for its
// count, one of some for their flags. The last block to finish readies it for the next launch.
// A wait that outlasts `target.wait_timeout_ms` abandons the launch: the first block that timed
// out writes what it waited for to the plugin's watch record (host memory the kernel's last
// parameter `yr_watch` points to), every block stops at its next wait or task, and the plugin
// reports it (docs/backends/cuda.md, "One launch for several operators").
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "codegen/c_printer.hpp"
#include "cuda/codegen/cuda_source.hpp"

namespace yirage::codegen::cuda {

struct PersistentKernel {
  int64_t tasks = 0;   // blocks of all operators: the most blocks a launch may use
  int64_t widest = 0;  // the most blocks of one operator
  int64_t threads = 0;
  int64_t shared_bytes = 0;
  int64_t workspace_bytes = 0;
};

// What the watch record holds after a launch that timed out (uint32 words).
struct WatchRecord {
  static constexpr int kSet = 0;        // 1 once written
  static constexpr int kTask = 1;       // the task that waited
  static constexpr int kOperator = 2;   // its operator (0-based, in the program)
  static constexpr int kWaitedFor = 3;  // the operator whose tile it waited for
  static constexpr int kTile = 4;       // that tile (its block, linear), or kEveryTile
  static constexpr unsigned kEveryTile = 0xffffffffu;
  static constexpr int kWords = 8;
};

// Helpers the persistent kernel's body calls, printed before the kernel.
std::string persistent_helpers();

// Emits the kernel's body for `program` (inputs yr_in0…, outputs yr_out0…, the workspace yr_ws,
// the watch record yr_watch); `before_wait` receives what runs before griddepcontrol.wait (L2
// prefetches only). Error(kUnsupported) where an operator is not a µGraph, where the bodies
// disagree on a block's threads, or the device is older than sm_70 (no relaxed loads at gpu scope, no __nanosleep).
PersistentKernel emit_persistent(Printer &before_wait, Printer &p, const serialize::KernelProgram &program,
                                 const CudaTarget &target);

}  // namespace yirage::codegen::cuda
