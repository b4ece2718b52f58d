// How much shared memory a kernel launched as a programmatic dependent asks for.
//
// A kernel launched as a programmatic dependent of the kernel before it in the stream (the
// plugin's launches on sm_90, docs/backends/cuda.md) has its blocks placed as soon as every block
// of that kernel has started: on whatever multiprocessors still have room, each taking as many
// blocks as its registers, threads and shared memory allow. Where the kernel before holds most
// multiprocessors (an attention's chunk kernel, one large block on nearly every one), the few it
// leaves free take many blocks each, and those multiprocessors then read their blocks' data one
// after another while the others idle: the dependent ends later than a plain launch would.
// Asking for more shared memory than the kernel uses bounds how many of its blocks a
// multiprocessor takes; ceil(blocks / multiprocessors) spreads them as a plain launch on an idle
// device would, and they still start early where the kernel before leaves room.
#pragma once

#include <cstdint>
#include <functional>

namespace yirage::cuda {

// The dynamic shared memory to launch a dependent kernel of `blocks` blocks with: `shared_bytes`
// (what it uses) where a multiprocessor takes at most ceil(blocks / multiprocessors) of them
// already, else the least multiple of 1 KiB up to `max_shared_bytes` that brings it there (or
// `max_shared_bytes` where none does). `blocks_per_multiprocessor(bytes)` is the occupancy with
// `bytes` of dynamic shared memory (cuOccupancyMaxActiveBlocksPerMultiprocessor); it must not
// grow with `bytes`.
int64_t dependent_shared_bytes(int64_t blocks, int64_t multiprocessors, int64_t shared_bytes, int64_t max_shared_bytes,
                               const std::function<int64_t(int64_t)> &blocks_per_multiprocessor);

}  // namespace yirage::cuda
