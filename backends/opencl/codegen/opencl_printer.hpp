// The OpenCL C printer of the loop-level form (codegen/c_printer.hpp): kernel-level loops shared
// by every work-item of the NDRange (global-id strided), block-level loops by the work-group's
// work-items (a count fixed in the source), barrier(CLK_LOCAL_MEM_FENCE), tiles in a __local
// float arena. Tensors of 16-bit types are read and written through the conversions OpenCL C 1.2
// has without extensions (opencl_prelude.hpp); every value is computed in float32, as on every
// target (docs/codegen.md). Matmuls give each work-item a register block of outputs
// (matmul_micro_tile); block-level row reductions share each row among a group of work-items that
// meet in a local scratch array (kScratch); tile copies are their plain expansion.
#pragma once

#include <cstdint>
#include <string>

#include "common/codegen/workgroup_printer.hpp"

namespace yirage::codegen::opencl {

// The OpenCL C type of a tensor parameter's elements: float, half (only ever converted by
// vload_half/vstore_half) or ushort (bfloat16's bits).
const char *element_type(DType dtype);

// A kernel-level matmul with fewer outputs than the device has work-items: each work-group takes
// tiles of `rows` rows by width · vector columns, each work-item `vector` consecutive columns (8
// where n is a multiple of 8: one vload of 16 or 32 bytes of B per step of k) and one of `slices`
// parts of k (a power of two); the parts meet in local memory by halving. `tiles` tiles in all.
// A work-item issues `unroll` loads of B before it uses the first, its last steps one at a time.
struct SplitK {
  int64_t rows = 1, width = 1, vector = 1, slices = 1, tiles = 1, unroll = 1;
};
SplitK split_k_shape(int64_t m, int64_t n, int64_t batches, int64_t threads);
// The local array of SplitK's vector sums (float8, one per work-item), declared by the kernel.
inline constexpr const char *kScratch8 = "yr_scratch8";

class OpenclPrinter : public WorkgroupPrinter {
 public:
  // threads: the work-group's size where the code is a µGraph block's (block-level loops); 0 at
  // kernel level. grid_items: the NDRange's work-items at kernel level (how many register blocks
  // a kernel-level matmul wants).
  // across_groups: kernel-level code whose work-groups share the work, each with `threads`
  // work-items: row reductions (a row per work-group or less) and matmuls split over k (SplitK);
  // max_groups: the most work-groups the launch of a row reduction or split-k matmul has, each
  // taking one part of it (0: a loop over the parts; WorkgroupPrinter::open_group_parts).
  OpenclPrinter(Printer &p, int64_t threads, int64_t grid_items = 1, bool across_groups = false, int64_t max_groups = 0)
      : WorkgroupPrinter(p, threads, threads > 0, grid_items, across_groups, "opencl codegen") {
    max_groups_ = max_groups;
  }
  void print_barrier() override { p_.line("barrier(CLK_LOCAL_MEM_FENCE);"); }

 protected:
  std::string local_id() const override { return "(int)get_local_id(0)"; }
  std::string group_id() const override { return "(int)get_group_id(0)"; }
  std::string num_groups() const override { return "(int)get_num_groups(0)"; }
  std::string global_id() const override { return "(int)get_global_id(0)"; }
  std::string global_size() const override { return "(int)get_global_size(0)"; }
  std::string convert(const std::string &type, const std::string &value) const override;
  void print_matmul(const Matmul &m) override;
  std::string pointer(const BufferRef &buffer) const override;
  std::string load_text(const BufferRef &buffer, const std::string &index) const override;
  void print_store(const BufferRef &buffer, const std::string &index, const std::string &value) override;

 private:
  std::string element_pointer(const BufferRef &buffer) const;
  void print_split_k_matmul(const Matmul &m);
  std::string load_columns(const BufferRef &b, const Expr &index, int64_t vector) const;
};

}  // namespace yirage::codegen::opencl
