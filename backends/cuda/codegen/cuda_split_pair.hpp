// A loop split over blocks and the sum of its parts in one launch (ir/split_pair.hpp; a program
// of two operators, plugin ABI 1.4). The kernel runs on the parts' grid: each block computes its
// part as the first operator's kernel would, writes its partial sums to the launch's workspace and
// counts itself in its tile's counter; the tile's last block (the counter at parts − 1) sets the
// counter back to zero and runs the second operator on the unsplit grid for that tile (one block
// of it, all its threads busy: the second operator's own finer grid would run its blocks one
// after another), adding the parts up in their order, so that the sums do not depend on which
// block came last. It reads the partial sums through L2 (yr_coherent16), not the non-coherent path
// kernel inputs take. The two bodies take separate shared memory (the first's may hold mbarriers),
// the second's after the first's.
#pragma once

#include <array>
#include <cstdint>

#include "codegen/c_printer.hpp"
#include "cuda/codegen/cuda_source.hpp"

namespace yirage::codegen::cuda {

struct SplitPairKernel {
  std::array<int64_t, 3> grid = {1, 1, 1};
  int64_t threads = 0;
  int64_t shared_bytes = 0;
  // The tiles' counters, then each partial sum, every part 256-byte aligned (CudaKernel::workspace_bytes).
  int64_t workspace_bytes = 0;
};

// Emits the kernel's body for `program` (its inputs in0…, outputs out0…, the workspace yr_ws).
// Error(kUnsupported) where the program is not such a pair, or where the two bodies do not agree
// on a block's threads.
SplitPairKernel emit_split_pair(Printer &p, const serialize::KernelProgram &program, const CudaTarget &target);

}  // namespace yirage::codegen::cuda
