// One parallel region for a kernel program of several operators (plugin ABI 1.4): the launching
// thread and the pool's workers each run the whole program (its body), and each parallel loop of
// it is a phase whose chunks they share, so that no thread goes back to the pool between
// operators, and a thread that finished its chunks of one loop goes on to the next as soon as
// the loop's last chunk is done.
//
// Every participant runs the same code, so it reaches the same loops in the same order with the
// same sizes: the n-th loop it reaches is phase n for all. A phase's chunks are taken in order
// from one counter; the first participant to reach a phase opens it. A participant that finds a
// phase's chunks all taken waits until they have run (the operator after it reads what they
// wrote), spinning a few microseconds, then sleeping. It never waits for a participant that has
// not arrived: the chunks it waits for were taken by participants running them, so a worker that
// the OS keeps off its core (a busy machine) costs its help, not the region's time, and the
// launching thread alone runs a region whose workers never wake. A participant that arrives
// late finds the phases before it done and skips them.
//
// The body must not write memory outside its loops (the generated programs write only in
// yr_parallel_for loops: cpu_source.hpp), since every participant runs what is outside them.
#pragma once

#include <cstdint>

#include "compiler.hpp"
#include "thread_pool.hpp"

namespace yirage::cpu {

// The body of a region: the program's operators, their loops through `runtime`.
using RegionBody = int (*)(void *context, const KernelRuntime *runtime);

// Runs `body` as one region on the ThreadPool `base.pool` (the launching thread takes part), each
// participant with a runtime like `base` whose loops are the region's phases. Returns the bitwise
// or of the participants' results (non-zero: a thread could not allocate its tiles). A region
// that finds the pool's workers busy (another thread's loop) runs on its caller alone.
int run_region(const KernelRuntime *base, RegionBody body, void *context);

}  // namespace yirage::cpu
