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

#include "codegen/c_printer.hpp"

namespace yirage::codegen::opencl {

// The OpenCL C type of a tensor parameter's elements: float, half (only ever converted by
// vload_half/vstore_half) or ushort (bfloat16's bits).
const char *element_type(DType dtype);

// The register block of a matmul's work-item: `rows` × `cols` outputs, rows m / rows apart and
// columns n / cols apart (so that neighbouring work-items read neighbouring columns of B: one
// coalesced access, or distinct local-memory banks). The largest of 4×4 … 1×1 that divides the
// matmul and still leaves at least `work_items` blocks (batches · m / rows · n / cols), else 1×1.
struct MicroTile {
  int64_t rows = 1, cols = 1;
};
MicroTile matmul_micro_tile(int64_t m, int64_t n, int64_t batches, int64_t work_items);

// How a row reduction shares its rows: `lanes` work-items per row (a power of two), `rows_at_once`
// rows per work-group at a time, `passes` such steps over all rows. Inside a block (across_groups
// false) a row gets as many lanes as the work-group has for each row, at most 256 and at most
// the row's length; at kernel level (true) each work-group takes rows of its own, a row getting
// up to all the work-group's work-items.
struct RowShare {
  int64_t lanes = 1, rows_at_once = 1, passes = 1;
};
RowShare row_share(int64_t rows, int64_t cols, int64_t threads, bool across_groups);

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

// The work-group's scratch array of row reductions: one float per work-item, declared
// by every kernel that has row reductions.
inline constexpr const char *kScratch = "yr_scratch";

class OpenclPrinter : public CPrinter {
 public:
  // threads: the work-group's size where the code is a µGraph block's (block-level loops); 0 at
  // kernel level. grid_items: the NDRange's work-items at kernel level (how many register blocks
  // a kernel-level matmul wants).
  // across_groups: kernel-level code whose work-groups share the work, each with `threads`
  // work-items: row reductions (a row per work-group or less) and matmuls split over k (SplitK).
  OpenclPrinter(Printer &p, int64_t threads, int64_t grid_items = 1, bool across_groups = false)
      : CPrinter(p), threads_(threads), grid_items_(grid_items), across_groups_(across_groups) {}
  std::string int_type() const override { return "int"; }
  void print_barrier() override { p_.line("barrier(CLK_LOCAL_MEM_FENCE);"); }

 protected:
  void print_shared_loop(const Loop &loop) override;
  void print_matmul(const Matmul &m) override;
  void print_row_reduce(const RowReduce &r) override;
  std::string pointer(const BufferRef &buffer) const override;
  std::string load_text(const BufferRef &buffer, const std::string &index) const override;
  void print_store(const BufferRef &buffer, const std::string &index, const std::string &value) override;

 private:
  std::string element_pointer(const BufferRef &buffer) const;
  // Opens a loop over `dims` shared as `sharing` (kGrid or kThreads), declaring vars.
  void open_shared(const Dims &dims, const std::vector<std::string> &vars, Sharing sharing);
  int64_t threads_, grid_items_;
  bool across_groups_;
  void print_split_k_matmul(const Matmul &m);
  std::string load_columns(const BufferRef &b, const Expr &index, int64_t vector) const;
  int64_t row_lanes_ = 0;  // inside a row reduction's finish: the work-items sharing a row
};

}  // namespace yirage::codegen::opencl
