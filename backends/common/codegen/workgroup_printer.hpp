// What the OpenCL C and GLSL printers share: both run a kernel as work-groups of a size fixed in
// the source whose work-items meet in a shared scratch array, so both give a matmul's work-items
// register blocks of outputs (matmul_micro_tile) and share a row reduction's rows among groups of
// work-items (row_share), with the same loops. WorkgroupPrinter prints those loops; a target
// derives from it and says how it spells the work-item and work-group indices, a conversion, its
// barrier and its buffers' loads and stores. WorkgroupWalker is the µGraph walker both use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/c_printer.hpp"
#include "codegen/ugraph_walker.hpp"

namespace yirage::codegen {

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

// Where a matmul operand's element (row, col) lies for the batch indices `batch_vars` (named in
// the generated code): its base plus each index times its stride (strides from
// matmul_operand_strides: 0 along broadcast dims).
Expr operand_at(const TensorRef &t, const Dims &strides, const std::vector<std::string> &batch_vars, const Expr &row,
                const Expr &col);

// The work-group's scratch array of row reductions: one float per work-item, declared by every
// kernel that has row reductions.
inline constexpr const char *kScratch = "yr_scratch";

class WorkgroupPrinter : public CPrinter {
 public:
  std::string int_type() const override { return "int"; }

 protected:
  // threads: the work-group's size. block: the code is a µGraph block's (block-level loops
  // allowed). grid_items: the work-items a kernel-level matmul's register blocks should fill.
  // across_groups: kernel-level code whose work-groups share the work, each with `threads`
  // work-items (row reductions: a row per work-group or less). target: names the printer in errors.
  WorkgroupPrinter(Printer &p, int64_t threads, bool block, int64_t grid_items, bool across_groups, const char *target)
      : CPrinter(p),
        threads_(threads),
        grid_items_(grid_items),
        block_(block),
        across_groups_(across_groups),
        target_(target) {}

  // How the target spells, as an int: the work-item's index in its work-group; the work-group's
  // index along x and the count of them; the work-item's index among the kernel's and the count
  // of those.
  virtual std::string local_id() const = 0;
  virtual std::string group_id() const = 0;
  virtual std::string num_groups() const = 0;
  virtual std::string global_id() const = 0;
  virtual std::string global_size() const = 0;
  // `value` converted to the scalar type `type` ("int", "uint").
  virtual std::string convert(const std::string &type, const std::string &value) const = 0;

  void print_shared_loop(const Loop &loop) override;
  void print_matmul(const Matmul &m) override;
  void print_row_reduce(const RowReduce &r) override;

  // Opens the scope in which work-group `var` takes part `var` of `parts` parts of kernel-level
  // work: with no loop where the launch has a work-group for each part (parts <= max_groups_),
  // else a loop strided by the work-group count. PoCL 5 aborts compiling a row reduction's
  // barriers inside that loop ("createParallelRegionBefore: Assertion `region_entry_barrier !=
  // NULL' failed"), yet gave NaNs for split-k matmuls without it, so on CPU devices those keep the
  // loop; NVIDIA's runs them faster without (benchmarks/gpu/RESULTS.md).
  void open_group_parts(const std::string &var, int64_t parts);

  int64_t threads_, grid_items_;
  bool block_, across_groups_;
  int64_t max_groups_ = 0;  // across_groups: the work-groups a launch has at most (0: unknown)

 private:
  // Opens a loop over `dims` shared as `sharing` (kGrid or kThreads), declaring vars.
  void open_shared(const Dims &dims, const std::vector<std::string> &vars, Sharing sharing);
  // Declares vars[d] as the row-major index of linear element `e` in `dims`.
  void index_vars(const std::string &e, const Dims &dims, const std::vector<std::string> &vars);
  const char *target_;
  int64_t row_lanes_ = 0;  // inside a row reduction's finish: the work-items sharing a row
};

// The µGraph walker of work-group printers: a matmul's work-items write register blocks
// (matmul_micro_tile) and a row reduction's write their rows, not the elements e % threads that
// the walker's barrier rule assumes of block-level loops.
class WorkgroupWalker : public UGraphWalker {
 public:
  using UGraphWalker::UGraphWalker;

 protected:
  std::optional<bool> print_step(const Step &step) override;
};

}  // namespace yirage::codegen
