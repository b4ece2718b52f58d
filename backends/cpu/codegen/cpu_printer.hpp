// The CPU backend's printer of the loop-level form (codegen/c_printer.hpp): C++ for the host
// compiler. A block is one thread's work, so block-level loops are serial and barriers are
// nothing; kernel-level loops are shared by the plugin's threads (yr_parallel_for, a lambda over
// a range of the loop's flattened outer index; backends/cpu/thread_pool.hpp), in chunks of at
// least kParallelWork. Matmuls use one register-blocked micro-kernel whose inner loop runs along
// contiguous columns, which the compiler vectorizes; most call the plugin's small-GEMM first where
// it has one (yr_gemm: libxsmm, backends/cpu/gemm.hpp), 16-bit operands converted to float
// (docs/backends/cpu.md). Tile copies convert a row at a time (F16C where the host has it).
#pragma once

#include <string>

#include "codegen/c_printer.hpp"

namespace yirage::codegen {

// The least work (element operations, roughly) worth a chunk on a thread of its own: a loop with
// less than twice this runs on the launching thread alone, since waking a sleeping thread takes
// microseconds that a small kernel would spend waiting.
inline constexpr double kParallelWork = 16384;

// How many items of `work_per_item` make a chunk of a shared loop (at least 1).
int64_t parallel_grain(double work_per_item);

// Roughly the element operations of a block of statements: a loop's body times its iterations, a
// structured statement its elements (a matmul its multiply-adds), anything else one.
double work_of(const Block &block);

class CppPrinter : public CPrinter {
 public:
  using CPrinter::CPrinter;
  void print_barrier() override {}

  // Opens a loop shared by the plugin's threads: yr_parallel_for over [0, count) in chunks of at
  // least `grain`, its body a lambda of (yr_begin, yr_end); close it with close(");").
  void open_parallel_for(int64_t count, int64_t grain);
  // Whether a loop it opened is large enough to be shared outside a region (2 × grain items or
  // more): a program of several operators without one runs on the calling thread alone.
  bool shares_loops() const { return shares_loops_; }

 protected:
  void print_shared_loop(const Loop &loop) override;
  void print_matmul(const Matmul &m) override;
  void print_copy(const TileCopy &c) override;
  std::string pointer(const BufferRef &buffer) const override;

 private:
  // Where a tensor's element 0 is, as a typed pointer.
  std::string start_of(const TensorRef &t) const;

  bool shares_loops_ = false;
};

}  // namespace yirage::codegen
