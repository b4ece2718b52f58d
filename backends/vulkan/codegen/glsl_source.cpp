#include "vulkan/codegen/glsl_source.hpp"

#include <algorithm>
#include <limits>

#include "codegen/lower_operator.hpp"
#include "codegen/lower_ugraph.hpp"
#include "common/codegen/workgroup_printer.hpp"
#include "ir/block_graph.hpp"
#include "util/error.hpp"
#include "vulkan/codegen/glsl_prelude.hpp"
#include "vulkan/codegen/glsl_printer.hpp"

namespace yirage::codegen {
namespace {

using vulkan::GlslPrinter;

// Invocations per work-group: a GPU's usual 256; on a CPU device (lavapipe) a work-group is one
// core's loop over SIMD lanes, so fewer suffice.
int64_t default_local_size(const VulkanTarget &target) {
  return std::clamp<int64_t>(target.cpu ? 64 : 256, 1, std::max<int64_t>(1, target.max_work_group));
}

// Indices are 32-bit (GLSL's int; 64-bit integers need shaderInt64 and cost on a GPU), and a
// shader sees at most maxStorageBufferRange bytes of a buffer.
void check_tensor_sizes(const KernelGraph &g, const VulkanTarget &target) {
  for (size_t t = 0; t < g.num_tensors(); ++t) {
    const Tensor &tensor = g.tensor(static_cast<TensorId>(t));
    const int64_t elements = num_elements(tensor.dims);
    if (elements > std::numeric_limits<int32_t>::max()) {
      throw Error(ErrorCode::kUnsupported,
                  "vulkan: a tensor of more than 2^31 - 1 elements (the generated code indexes with 32-bit "
                  "integers)");
    }
    const int64_t bytes = elements * static_cast<int64_t>(dtype_size(tensor.dtype));
    if (target.max_buffer_bytes > 0 && bytes > target.max_buffer_bytes) {
      throw Error(ErrorCode::kUnsupported, "vulkan: a tensor of " + std::to_string(bytes) +
                                               " bytes exceeds the device's storage buffer range of " +
                                               std::to_string(target.max_buffer_bytes) + " (maxStorageBufferRange)");
    }
  }
}

}  // namespace

VulkanKernel glsl_source(const serialize::KernelProgram &program, const VulkanTarget &target) {
  const KernelGraph &g = program.graph;
  const Operator &op = program.op();
  check_tensor_sizes(g, target);
  Printer decls;
  std::vector<TensorRef> in, out;
  std::vector<DType> output_dtypes;
  bool sixteen = false;
  auto declare = [&](const Tensor &t, const std::string &name, bool input, int64_t binding) {
    sixteen = sixteen || t.dtype != DType::kFloat32;
    decls.line("layout(std430, set = 0, binding = " + std::to_string(binding) + ") " + (input ? "readonly " : "") +
               "restrict buffer Yr_" + name + " { " + vulkan::element_type(t.dtype, target.storage16) + " data[]; } " +
               name + ";");
  };
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Tensor &t = g.tensor(g.inputs()[i]);
    const std::string name = "in" + std::to_string(i);
    declare(t, name, true, static_cast<int64_t>(i));
    in.push_back({global_buffer(name, t.dtype), t.dims, {}});
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Tensor &t = g.tensor(g.outputs()[i]);
    const std::string name = "out" + std::to_string(i);
    declare(t, name, false, static_cast<int64_t>(g.inputs().size() + i));
    out.push_back({global_buffer(name, t.dtype), t.dims, {}});
    output_dtypes.push_back(t.dtype);
  }

  VulkanKernel kernel;
  kernel.buffers = static_cast<int64_t>(in.size() + out.size());
  Printer body(1);
  if (op.kind == OpKind::kCustomized) {
    const BlockGraph &bg = *op.block_graph;
    // The µGraph's thread count in whole warps, at least the default (as on CUDA and OpenCL).
    const int64_t own = (bg.config().block_threads + 31) / 32 * 32;
    kernel.local_size =
        std::clamp<int64_t>(std::max(own, default_local_size(target)), 1, std::max<int64_t>(1, target.max_work_group));
    if (target.cpu) kernel.local_size = default_local_size(target);
    kernel.groups = bg.config().grid;
    if (kernel.groups[1] > target.max_groups_yz || kernel.groups[2] > target.max_groups_yz) {
      throw Error(ErrorCode::kUnsupported, "vulkan: a grid of " + std::to_string(kernel.groups[1]) + " × " +
                                               std::to_string(kernel.groups[2]) +
                                               " work-groups along y and z exceeds the device's " +
                                               std::to_string(target.max_groups_yz) + " (maxComputeWorkGroupCount)");
    }
    UGraphLowering lowering;
    lowering.inlined = inlined_tensors(bg);
    lowering.layout = plan_block_layout(bg, 4, {}, lowering.inlined);  // 16-byte aligned tiles
    lowering.output_dtypes = std::move(output_dtypes);
    // The row reductions' scratch array takes one float per invocation of the shared memory.
    lowering.max_shared_bytes =
        target.max_shared_bytes > 0 ? std::max<int64_t>(1, target.max_shared_bytes - 4 * kernel.local_size) : 0;
    const LoweredUGraph lowered = lower_ugraph(bg, lowering);
    decls.line("shared float arena[" + std::to_string(std::max<int64_t>(1, lowering.layout.floats)) + "];");
    decls.line(std::string("shared float ") + kScratch + "[" + std::to_string(kernel.local_size) + "];");
    body.line("const int bx = yr_group_x(), by = int(gl_WorkGroupID.y), bz = int(gl_WorkGroupID.z);");
    GlslPrinter printer(body, kernel.local_size, target.storage16, true);
    WorkgroupWalker(printer, bg, lowered).walk();
  } else {
    kernel.local_size = default_local_size(target);
    int64_t work = 1;  // the largest loop the operator shares across the dispatch
    for (const TensorRef &t : out) work = std::max(work, num_elements(t.dims));
    const int64_t fill = target.compute_units * (target.cpu ? 4 * kernel.local_size : 1024);
    const int64_t most = target.cpu ? std::max<int64_t>(1, target.compute_units) * 4 : int64_t{1} << 16;
    if (op.kind == OpKind::kRmsNorm || op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax) {
      // Rows shared by work-groups, each row by a work-group's invocations.
      decls.line(std::string("shared float ") + kScratch + "[" + std::to_string(kernel.local_size) + "];");
      const Block lowered = lower_operator(op, in, out, Sharing::kThreads);
      const RowReduce &rr = std::get<RowReduce>(lowered.at(0).node);
      const int64_t passes = row_share(rr.rows, rr.cols, kernel.local_size, true).passes;
      kernel.groups = {std::clamp<int64_t>(passes, 1, most), 1, 1};
      GlslPrinter printer(body, kernel.local_size, target.storage16, false, 1, true);
      printer.print(lowered);
    } else {
      int64_t grid_items = work;
      // A matmul's invocations each take a register block of outputs, as many as fill the device.
      if (op.kind == OpKind::kMatmul) {
        const Dims &o = out[0].dims;
        grid_items = std::min(work, fill);
        const MicroTile tile =
            matmul_micro_tile(o[o.size() - 2], o.back(), work / (o[o.size() - 2] * o.back()), grid_items);
        work /= tile.rows * tile.cols;
      }
      kernel.groups = {std::clamp<int64_t>((work + kernel.local_size - 1) / kernel.local_size, 1, most), 1, 1};
      GlslPrinter printer(body, kernel.local_size, target.storage16, false, grid_items);
      printer.print(lower_operator(op, in, out, Sharing::kGrid));
    }
  }

  Printer p;
  p.line("#version 450");
  p.line("// Generated by yirage's Vulkan backend. Do not edit.");
  p.line("// Kernel program \"" + program.name + "\": " + op_name(op.kind));
  if (sixteen && target.storage16) {
    p.line("#extension GL_EXT_shader_16bit_storage : require");
    p.line("#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require");
  }
  p.line("layout(local_size_x = " + std::to_string(kernel.local_size) + ", local_size_y = 1, local_size_z = 1) in;");
  p.line("layout(push_constant) uniform YrPush { int group_base; int groups_x; } yr_push;");
  p.line("int yr_group_x() { return yr_push.group_base + int(gl_WorkGroupID.x); }");
  p.line("int yr_lid() { return int(gl_LocalInvocationID.x); }");
  p.line(vulkan::kGlslPrelude);
  p.text(decls.str());
  p.open("void main()");
  p.text(body.str());
  p.close();
  kernel.source = p.str();
  return kernel;
}

}  // namespace yirage::codegen
