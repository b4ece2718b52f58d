#include "codegen/ugraph_walker.hpp"

namespace yirage::codegen {

UGraphWalker::UGraphWalker(CPrinter &printer, const BlockGraph &bg, const LoweredUGraph &lowered)
    : printer_(printer), p_(printer.out()), bg_(bg), lowered_(lowered) {}

void UGraphWalker::walk() {
  walk_steps(lowered_.start);
  after_start();
  if (has_invariant_part()) {
    begin_invariant();
    walk_steps(lowered_.invariant);
    end_invariant();
  }
  if (!lowered_.loop.empty()) {
    begin_loop();
    walk_steps(lowered_.loop);
    end_loop();
  }
  walk_steps(lowered_.after);
}

void UGraphWalker::walk_steps(const std::vector<Step> &steps) {
  for (const Step &step : steps) run(step);
}

void UGraphWalker::run(const Step &step) {
  if (!step.barrier_inside) barrier_before(step.reads);
  const std::optional<bool> same_index = print_step(step);
  if (step.barrier_inside) synced();
  wrote(step.writes, same_index);
}

std::optional<bool> UGraphWalker::print_step(const Step &step) {
  printer_.print(step.body);
  return std::nullopt;
}

void UGraphWalker::end_invariant() {
  sync();
}

void UGraphWalker::begin_loop() {
  const std::string type = printer_.int_type();
  p_.open("for (" + type + " it = 0; it < " + std::to_string(bg_.config().forloop_range) + "; ++it)");
}

void UGraphWalker::end_loop() {
  sync();
  p_.close();
}

void UGraphWalker::barrier_before(const std::vector<Access> &reads) {
  for (const Access &a : reads) {
    if (pending_other_.count(a.key) || (!a.same_index && pending_same_index_.count(a.key))) {
      sync();
      return;
    }
  }
}

void UGraphWalker::wrote(const std::vector<Access> &writes, std::optional<bool> same_index) {
  for (const Access &a : writes)
    (same_index.value_or(a.same_index) ? pending_same_index_ : pending_other_).insert(a.key);
}

void UGraphWalker::sync() {
  printer_.print_barrier();
  synced();
}

}  // namespace yirage::codegen
