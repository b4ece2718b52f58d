#include "opencl/codegen/opencl_source.hpp"

#include <algorithm>
#include <limits>

#include "codegen/lower_operator.hpp"
#include "codegen/lower_ugraph.hpp"
#include "common/codegen/workgroup_printer.hpp"
#include "ir/block_graph.hpp"
#include "opencl/codegen/opencl_prelude.hpp"
#include "opencl/codegen/opencl_printer.hpp"
#include "util/error.hpp"

namespace yirage::codegen {
namespace {

using opencl::OpenclPrinter;

// Work-items per work-group: a GPU's usual 256 (what the CUDA backend found best for the plain
// block-level loops); on a CPU device a work-group is one core's loop over its work-items, which
// PoCL vectorizes, so fewer suffice.
int64_t default_local_size(const OpenclTarget &target) {
  return std::clamp<int64_t>(target.cpu ? 64 : 256, 1, std::max<int64_t>(1, target.max_work_group));
}

// Indices are 32-bit (a GPU's 64-bit division costs many instructions, and every loop divides).
void check_index_range(const KernelGraph &g) {
  for (size_t t = 0; t < g.num_tensors(); ++t) {
    if (num_elements(g.tensor(static_cast<TensorId>(t)).dims) > std::numeric_limits<int32_t>::max()) {
      throw Error(ErrorCode::kUnsupported,
                  "opencl: a tensor of more than 2^31 - 1 elements (the generated code "
                  "indexes with 32-bit integers)");
    }
  }
}

// One work-group per µGraph block, its tiles in the __local arena.
void print_customized(Printer &p, const BlockGraph &bg, std::vector<DType> output_dtypes, int64_t threads,
                      const OpenclTarget &target) {
  UGraphLowering lowering;
  lowering.inlined = inlined_tensors(bg);
  // 16-byte aligned tiles; those of 16-bit inputs at their size (OpenCL's 48 KiB on NVIDIA).
  lowering.layout = plan_block_layout(bg, 4, {}, lowering.inlined, {}, narrow_input_tiles(bg));
  lowering.output_dtypes = std::move(output_dtypes);
  // The row reductions' scratch array takes one float per work-item of the local memory.
  lowering.max_shared_bytes =
      target.max_local_bytes > 0 ? std::max<int64_t>(1, target.max_local_bytes - 4 * threads) : 0;
  const LoweredUGraph lowered = lower_ugraph(bg, lowering);
  p.line("__local float arena[" + std::to_string(std::max<int64_t>(1, lowering.layout.floats)) + "];");
  p.line(std::string("__local float ") + kScratch + "[" + std::to_string(threads) + "];");
  p.line("const int bx = (int)get_group_id(0), by = (int)get_group_id(1), bz = (int)get_group_id(2);");
  p.line("(void)bx; (void)by; (void)bz;");
  OpenclPrinter printer(p, threads);
  WorkgroupWalker(printer, bg, lowered).walk();
}

}  // namespace

OpenclKernel opencl_source(const serialize::KernelProgram &program, const OpenclTarget &target) {
  const KernelGraph &g = program.graph;
  const Operator &op = program.op();
  check_index_range(g);
  std::string params;
  std::vector<TensorRef> in, out;
  std::vector<DType> output_dtypes;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Tensor &t = g.tensor(g.inputs()[i]);
    const std::string name = "in" + std::to_string(i);
    params += std::string(params.empty() ? "" : ", ") + "__global const " + opencl::element_type(t.dtype) +
              " *restrict " + name;
    in.push_back({global_buffer(name, t.dtype), t.dims, {}});
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Tensor &t = g.tensor(g.outputs()[i]);
    const std::string name = "out" + std::to_string(i);
    params +=
        std::string(params.empty() ? "" : ", ") + "__global " + opencl::element_type(t.dtype) + " *restrict " + name;
    out.push_back({global_buffer(name, t.dtype), t.dims, {}});
    output_dtypes.push_back(t.dtype);
  }

  OpenclKernel kernel;
  Printer body(1);
  if (op.kind == OpKind::kCustomized) {
    const BlockGraph &bg = *op.block_graph;
    // The µGraph's thread count, in whole warps, is a cost-model figure; as on CUDA a block gets
    // at least the default so that its elementwise loops are not latency-bound.
    const int64_t own = (bg.config().block_threads + 31) / 32 * 32;
    kernel.local_size =
        std::clamp<int64_t>(std::max(own, default_local_size(target)), 1, std::max<int64_t>(1, target.max_work_group));
    if (target.cpu) kernel.local_size = default_local_size(target);
    kernel.groups = bg.config().grid;
    print_customized(body, bg, output_dtypes, kernel.local_size, target);
  } else {
    kernel.local_size = default_local_size(target);
    int64_t work = 1;  // the largest loop the operator shares across the NDRange
    for (const TensorRef &t : out) work = std::max(work, num_elements(t.dims));
    int64_t grid_items = work;
    const int64_t fill = target.compute_units * (target.cpu ? 4 * kernel.local_size : 1024);
    const int64_t most = target.cpu ? std::max<int64_t>(1, target.compute_units) * 4 : int64_t{1} << 16;
    const bool rows = op.kind == OpKind::kRmsNorm || op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax;
    // A matmul with fewer outputs than the device has work-items is split over k (SplitK).
    const bool split_k = op.kind == OpKind::kMatmul && work < fill;
    if (rows || split_k) {
      body.line(std::string("__local float ") + kScratch + "[" + std::to_string(kernel.local_size) + "];");
      if (split_k) {
        body.line(std::string("__local float8 ") + opencl::kScratch8 + "[" + std::to_string(kernel.local_size) + "];");
      }
      int64_t groups = 1;
      Block lowered;
      if (rows) {  // rows shared by work-groups, each row by a work-group's work-items
        lowered = lower_operator(op, in, out, Sharing::kThreads);
        const RowReduce &rr = std::get<RowReduce>(lowered.at(0).node);
        groups = row_share(rr.rows, rr.cols, kernel.local_size, true).passes;
      } else {
        lowered = lower_operator(op, in, out, Sharing::kGrid);
        const Dims &o = out[0].dims;
        const int64_t m = o[o.size() - 2], n = o.back();
        groups = opencl::split_k_shape(m, n, work / (m * n), kernel.local_size).tiles;
      }
      // A work-group per row pass or (on a GPU) matmul tile, up to 2^16 of them, with no loop
      // around the barriers (WorkgroupPrinter::open_group_parts); on a CPU device the tiles go in
      // a loop over as many work-groups as fill the device.
      const bool one_each = rows || !target.cpu;
      const int64_t max_groups = one_each ? int64_t{1} << 16 : most;
      kernel.groups = {std::clamp<int64_t>(groups, 1, max_groups), 1, 1};
      OpenclPrinter printer(body, kernel.local_size, 1, true, one_each ? max_groups : 0);
      printer.print(lowered);
    } else {
      // A matmul's work-items each take a register block of outputs, as many blocks as fill the
      // device.
      if (op.kind == OpKind::kMatmul) {
        const Dims &o = out[0].dims;
        grid_items = std::min(work, fill);
        const MicroTile tile =
            matmul_micro_tile(o[o.size() - 2], o.back(), work / (o[o.size() - 2] * o.back()), grid_items);
        work /= tile.rows * tile.cols;
      }
      kernel.groups = {std::clamp<int64_t>((work + kernel.local_size - 1) / kernel.local_size, 1, most), 1, 1};
      OpenclPrinter printer(body, 0, grid_items);
      printer.print(lower_operator(op, in, out, Sharing::kGrid));
    }
  }

  Printer p;
  p.line(opencl::kOpenclPrelude);
  p.line("// Kernel program \"" + program.name + "\": " + op_name(op.kind));
  p.open("__kernel __attribute__((reqd_work_group_size(" + std::to_string(kernel.local_size) + ", 1, 1))) void " +
         kOpenclKernelSymbol + "(" + params + ")");
  p.text(body.str());
  p.close();
  kernel.source = p.str();
  return kernel;
}

}  // namespace yirage::codegen
