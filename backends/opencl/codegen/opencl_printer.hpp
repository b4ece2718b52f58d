// The OpenCL C printer of the loop-level form (codegen/c_printer.hpp): kernel-level loops shared
// by every work-item of the NDRange (global-id strided), block-level loops by the work-group's
// work-items (a count fixed in the source), barrier(CLK_LOCAL_MEM_FENCE), tiles in a __local
// float arena. Tensors of 16-bit types are read and written through the conversions OpenCL C 1.2
// has without extensions (opencl_prelude.hpp); every value is computed in float32, as on every
// target (docs/codegen.md). Matmuls, row reductions and tile copies are their plain expansions.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/c_printer.hpp"

namespace yirage::codegen::opencl {

// The OpenCL C type of a tensor parameter's elements: float, half (only ever converted by
// vload_half/vstore_half) or ushort (bfloat16's bits).
const char *element_type(DType dtype);

class OpenclPrinter : public CPrinter {
 public:
  // threads: the work-group's size where the code is a µGraph block's (block-level loops); 0 at
  // kernel level.
  OpenclPrinter(Printer &p, int64_t threads) : CPrinter(p), threads_(threads) {}
  std::string int_type() const override { return "int"; }
  void print_barrier() override { p_.line("barrier(CLK_LOCAL_MEM_FENCE);"); }

 protected:
  void print_shared_loop(const Loop &loop) override;
  std::string pointer(const BufferRef &buffer) const override;
  std::string load_text(const BufferRef &buffer, const std::string &index) const override;
  void print_store(const BufferRef &buffer, const std::string &index, const std::string &value) override;

 private:
  int64_t threads_;
};

}  // namespace yirage::codegen::opencl
