// Prints a lowered µGraph (lower_ugraph.hpp) as one block's code: its steps in order, the for-loop
// around the loop's steps, and a barrier wherever a step reads what another thread may have
// written since the last one.
//
// Every block-level loop hands element e to thread e % threads (Sharing::kThreads), so a step may
// read an array written since the last barrier without one only at the index it was written (by
// the same thread). Anything else (a matmul's rows and columns, a broadcast, a reduction, a
// vector copy) needs a barrier first; where a block is one thread, barriers print as nothing.
//
// A target derives from UGraphWalker to print a step its own way (print_step, or run for a step
// whose barriers differ too), or to add to the loop's head and tail (a copy pipeline); everything
// else is the plain form.
#pragma once

#include <optional>
#include <set>

#include "codegen/c_printer.hpp"
#include "codegen/lower_ugraph.hpp"

namespace yirage::codegen {

class UGraphWalker {
 public:
  UGraphWalker(CPrinter &printer, const BlockGraph &bg, const LoweredUGraph &lowered);
  virtual ~UGraphWalker() = default;

  // Prints the block: start, invariant, the loop, after.
  void walk();

 protected:
  // Prints one step with its barriers: the default places a barrier before it where it reads
  // what another thread may have written since the last one, prints it (print_step) and records
  // its writes.
  virtual void run(const Step &step);
  // Prints `step` and returns how it wrote: nullopt as its writes say, or false where every
  // write may be at another thread's index. The default prints the plain code.
  virtual std::optional<bool> print_step(const Step &step);
  // After the accumulators' starting values.
  virtual void after_start() {}
  // Around the invariant steps (the default: nothing before, a barrier after them if there were any).
  virtual void begin_invariant() {}
  virtual void end_invariant();
  // The loop's head and tail (the default: a for over `it`; a barrier at the end of each
  // iteration, whose tiles the next overwrites).
  virtual void begin_loop();
  virtual void end_loop();
  // Whether the invariant part has anything to print.
  virtual bool has_invariant_part() const { return !lowered_.invariant.empty(); }

  // Barrier bookkeeping, for targets that print steps their own way.
  void barrier_before(const std::vector<Access> &reads);
  void wrote(const std::vector<Access> &writes, std::optional<bool> same_index = std::nullopt);
  void sync();  // prints a barrier; nothing written before it is pending after it
  // What a barrier printed elsewhere (inside a step) did.
  void synced() {
    pending_same_index_.clear();
    pending_other_.clear();
  }

  void walk_steps(const std::vector<Step> &steps);

  CPrinter &printer_;
  Printer &p_;
  const BlockGraph &bg_;
  const LoweredUGraph &lowered_;

 private:
  std::set<int64_t> pending_same_index_, pending_other_;
};

}  // namespace yirage::codegen
