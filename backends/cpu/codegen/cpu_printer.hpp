// The CPU backend's printer of the loop-level form (codegen/c_printer.hpp): C++ for the host
// compiler. A block is one thread's work, so block-level loops are serial and barriers are
// nothing; kernel-level loops are OpenMP parallel loops over `threads` threads. Matmuls use one
// register-blocked micro-kernel whose inner loop runs along contiguous columns, which the
// compiler vectorizes; tile copies convert a row at a time (F16C where the host has it).
#pragma once

#include <string>

#include "codegen/c_printer.hpp"

namespace yirage::codegen {

class CppPrinter : public CPrinter {
 public:
  using CPrinter::CPrinter;
  void print_barrier() override {}

 protected:
  void print_shared_loop(const Loop &loop) override;
  void print_matmul(const Matmul &m) override;
  void print_copy(const TileCopy &c) override;
  std::string pointer(const BufferRef &buffer) const override;

 private:
  // Where a tensor's element 0 is, as a typed pointer.
  std::string start_of(const TensorRef &t) const;
};

}  // namespace yirage::codegen
