#include "parallel_region.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

namespace yirage::cpu {
namespace {

// Phases in flight at once: a participant opens phase p only after every phase before it ran, so
// the slots p uses were last phase p - kPhaseSlots's, long done.
constexpr uint32_t kPhaseSlots = 16;

// A word of a phase's state: its number (high 32 bits) and two 16-bit counts (at most 4096
// threads × kChunksPerThread chunks), or one 32-bit count.
constexpr uint64_t word(uint64_t number, uint64_t high, uint64_t low) {
  return number << 32 | high << 16 | low;
}
constexpr uint32_t number_of(uint64_t w) {
  return static_cast<uint32_t>(w >> 32);
}

struct alignas(64) Word {
  std::atomic<uint64_t> w{0};
};

struct Shared {
  explicit Shared(int64_t threads)
      : threads(threads), done(kPhaseSlots), claims(static_cast<size_t>(threads) * kPhaseSlots) {}
  const int64_t threads;
  // Per phase slot: the chunks run (low 32 bits); per slot and participant: the end of its share
  // of the chunks (16 bits) and its next one to take (low 16 bits), as the pool's Slot.
  std::vector<Word> done, claims;
  const KernelRuntime *base = nullptr;
  RegionBody body = nullptr;
  void *context = nullptr;
  std::atomic<int> failed{0};
  // Set when the participant that stays has run the body: a participant that starts later has
  // nothing to do.
  std::atomic<bool> complete{false};
};

// One thread's run of the body: its share of each loop, its runtime (what the body's loops call)
// and the phases it reached. The participant that stays (item 0, which the launching thread
// takes) runs every phase to its end; another one that would have to sleep until a phase ends
// leaves instead (`departed`: its loops do nothing from then on, so that it walks out of the body
// at once), since the region ends only when every participant that started has left the body,
// and waking a sleeping thread would make it wait for the scheduler.
struct Participant {
  Shared *shared;
  int64_t index;
  bool stays;
  bool alone;  // the region runs on its caller alone: each loop as one call of its task
  KernelRuntime runtime;
  uint32_t phase = 0;
  bool departed = false;
};

// Sets `state` to `opened` if it holds a phase before `number` (the first to arrive opens it).
void open(std::atomic<uint64_t> &state, uint32_t number, uint64_t opened) {
  uint64_t w = state.load(std::memory_order_acquire);
  while (number_of(w) < number &&
         !state.compare_exchange_weak(w, opened, std::memory_order_acq_rel, std::memory_order_acquire)) {
  }
}

// KernelRuntime::parallel_for inside a region: the next phase. The participant takes the chunks
// of its own share (the same part of every loop of the same size, as the pool's threads do, so
// that it reads what it wrote from its core's cache), then what is left of the others', then
// waits until every chunk has run.
void phase_for(void *self, int64_t count, int64_t grain, ThreadPool::Task task, void *context) {
  Participant &me = *static_cast<Participant *>(self);
  Shared &shared = *me.shared;
  if (count <= 0 || me.departed) return;
  if (me.alone) {
    task(context, 0, count);
    return;
  }
  grain = std::max<int64_t>(grain, 1);
  const auto chunks = static_cast<uint64_t>(chunk_count(count, grain, shared.threads));
  const uint32_t number = ++me.phase;
  const size_t slot = number % kPhaseSlots;
  std::atomic<uint64_t> &done = shared.done[slot].w;
  open(done, number, word(number, 0, 0));
  // Every chunk is taken, or a later phase has the slot: wait for those others run, if any.
  uint64_t w = 0;
  const auto finished = [&] {
    w = done.load(std::memory_order_acquire);
    return number_of(w) != number || (w & 0xffffffffu) == chunks;
  };
  if (finished()) return;  // a participant that arrives late
  const auto threads = static_cast<uint64_t>(shared.threads);
  for (uint64_t k = 0; k < threads; ++k) {
    const uint64_t owner = (static_cast<uint64_t>(me.index) + k) % threads;
    std::atomic<uint64_t> &claim = shared.claims[slot * threads + owner].w;
    open(claim, number, word(number, chunks * (owner + 1) / threads, chunks * owner / threads));
    uint64_t c = claim.load(std::memory_order_acquire);
    for (;;) {
      const uint64_t end = (c >> 16) & 0xffff, next = c & 0xffff;
      if (number_of(c) != number || next >= end) break;
      if (!claim.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      task(context, static_cast<int64_t>(static_cast<uint64_t>(count) * next / chunks),
           static_cast<int64_t>(static_cast<uint64_t>(count) * (next + 1) / chunks));
      if ((done.fetch_add(1, std::memory_order_acq_rel) & 0xffffffffu) + 1 == chunks) done.notify_all();
      c = claim.load(std::memory_order_acquire);
    }
  }
  if (finished() || spin_until(finished)) return;
  if (!me.stays) {
    me.departed = true;
    return;
  }
  while (!finished()) done.wait(w, std::memory_order_acquire);
}

// A pool task: item i is participant i's run of the body (the pool gives thread i its item first,
// the launching thread item 0), unless the region is complete by then. Every item at once: the
// pool runs the region on its caller alone.
void participate(void *context, int64_t begin, int64_t end) {
  Shared &shared = *static_cast<Shared *>(context);
  if (shared.complete.load(std::memory_order_acquire)) return;
  const bool alone = end - begin == shared.threads;
  Participant me{&shared, begin, begin == 0 || alone, alone, *shared.base};
  me.runtime.parallel_for = phase_for;
  me.runtime.pool = &me;
  me.runtime.region = nullptr;
  me.runtime.in_region = 1;
  const int failed = shared.body(shared.context, &me.runtime);
  if (failed != 0) shared.failed.fetch_or(failed, std::memory_order_relaxed);
  if (me.stays) shared.complete.store(true, std::memory_order_release);
}

}  // namespace

int run_region(const KernelRuntime *base, RegionBody body, void *context) {
  auto &pool = *static_cast<ThreadPool *>(base->pool);
  auto shared = std::make_unique<Shared>(pool.threads());
  shared->base = base;
  shared->body = body;
  shared->context = context;
  // One item a thread: each runs the body once, unless it starts after the body ran whole (a
  // thread that finishes early may take a sleeping worker's item).
  pool.parallel_for(pool.threads(), 1, participate, shared.get());
  return shared->failed.load(std::memory_order_relaxed);
}

}  // namespace yirage::cpu
