// The GLSL 450 compute printer of the loop-level form (codegen/c_printer.hpp): kernel-level loops
// shared by every invocation of the dispatch (strided by the dispatch's size, which the push
// constants carry), block-level loops by the work-group's invocations, `barrier()` after
// `memoryBarrierShared()`, tiles in a `shared float` arena. GLSL has no pointers: a tensor is a
// storage buffer block indexed as `in0.data[i]`, the arena as `arena[offset + i]`. Every value
// is computed in float32 (docs/codegen.md).
//
// 16-bit tensors are stored two ways: with 16-bit storage (GL_EXT_shader_16bit_storage, where the
// device has storageBuffer16BitAccess) as uint16_t elements holding the bits, converted on load
// and store by unpackHalf2x16/packHalf2x16 or shifts (so no float16 arithmetic, shaderFloat16, is
// needed); without it as packed 32-bit words, two elements each, read with unpackHalf2x16 or
// shifts and written with atomicAnd/atomicOr on the element's half, so that two invocations
// writing the two halves of a word never lose each other's.
//
// Row reductions share each row among a group of invocations that meet in a shared scratch array
// (kScratch); matmuls give each invocation a register block of outputs: both as the OpenCL
// printer's, whose work-groups these resemble (common/codegen/workgroup_printer.hpp). Tile copies
// are their plain expansion.
#pragma once

#include <cstdint>
#include <string>

#include "common/codegen/workgroup_printer.hpp"

namespace yirage::codegen::vulkan {

// The GLSL element type of a tensor's storage buffer: float, uint16_t (a 16-bit element's bits,
// with 16-bit storage) or uint (two packed 16-bit elements).
const char *element_type(DType dtype, bool storage16);

class GlslPrinter : public WorkgroupPrinter {
 public:
  // threads: the work-group's size. block: the code is a µGraph block's (block-level loops
  // allowed). grid_items: the invocations a kernel-level matmul's register blocks should fill.
  // across_groups: kernel-level code whose row reductions spread rows over the work-groups.
  GlslPrinter(Printer &p, int64_t threads, bool storage16, bool block, int64_t grid_items = 1,
              bool across_groups = false)
      : WorkgroupPrinter(p, threads, block, grid_items, across_groups, "vulkan codegen"), storage16_(storage16) {}
  void print_barrier() override { p_.line("memoryBarrierShared(); barrier();"); }

 protected:
  std::string local_id() const override { return "yr_lid()"; }
  std::string group_id() const override { return "yr_group_x()"; }
  std::string num_groups() const override { return "yr_push.groups_x"; }
  std::string global_id() const override { return "yr_group_x() * " + std::to_string(threads_) + " + yr_lid()"; }
  std::string global_size() const override { return "yr_push.groups_x * " + std::to_string(threads_); }
  std::string convert(const std::string &type, const std::string &value) const override {
    return type + "(" + value + ")";
  }
  std::string pointer(const BufferRef &buffer) const override;
  std::string load_text(const BufferRef &buffer, const std::string &index) const override;
  void print_store(const BufferRef &buffer, const std::string &index, const std::string &value) override;

 private:
  bool storage16_;
};

}  // namespace yirage::codegen::vulkan
