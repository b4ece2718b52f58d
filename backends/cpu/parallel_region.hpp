// One parallel region for a kernel program of several operators (plugin ABI 1.4): the launching
// thread and the pool's workers each run the whole program (its body), and each parallel loop of
// it is a phase whose chunks they share, so that no thread goes back to the pool between
// operators, and a thread that finished its chunks of one loop goes on to the next as soon as
// the loop's last chunk is done.
//
// Every participant runs the same code, so it reaches the same loops in the same order with the
// same sizes: the n-th loop it reaches is phase n for all. A participant takes the chunks of its
// own share of a phase first (the same part of every loop of the same size, as the pool's
// threads do), then what is left of the others'; the first to reach a phase opens it. Then it
// waits until the phase's chunks have run (the operator after it reads what they wrote): it never
// waits for a participant that has not arrived, since the chunks it waits for were taken by
// participants running them. The launching thread (item 0 of the pool's job) stays to the end,
// sleeping in a wait that outlasts the spin; another participant leaves the body instead (its
// loops do nothing from then on), because the region ends only when every participant that
// started has left the body, and one asleep would make the region wait for the scheduler to
// wake it. So a worker that the OS keeps off its core costs its help (and one that finished
// early leaves its help out of later loops), not the region's time; a participant that arrives
// late finds the phases before it done and skips them, or the whole body done and does not run
// it; and a region that finds the pool's workers busy runs on its caller alone, each loop in one
// call.
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
