#include "cuda/codegen/cuda_source.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

#include "codegen/lower_operator.hpp"
#include "codegen/lower_ugraph.hpp"
#include "codegen/ugraph_layout.hpp"
#include "cuda/codegen/cuda_elementwise.hpp"
#include "cuda/codegen/cuda_gemm.hpp"
#include "cuda/codegen/cuda_matmul.hpp"
#include "cuda/codegen/cuda_persistent.hpp"
#include "cuda/codegen/cuda_prelude.hpp"
#include "cuda/codegen/cuda_printer.hpp"
#include "cuda/codegen/cuda_reduction_kernels.hpp"
#include "cuda/codegen/cuda_split_pair.hpp"
#include "cuda/codegen/cuda_ugraph.hpp"
#include "ir/block_graph.hpp"
#include "ir/split_pair.hpp"
#include "util/error.hpp"

namespace yirage::codegen {

double CudaKernel::shared_memory_seconds() const {
  return shared_traffic_bytes < 0 ? -1 : static_cast<double>(shared_traffic_bytes) / kCudaSharedBytesPerSecond;
}

int64_t CudaKernel::max_resident_blocks() const {
  if (!attention_in_registers) return -1;
  return std::max<int64_t>(1, kCudaRegistersPerMultiprocessor / (block_threads * kCudaAttentionRegisters));
}

yirage_backend_kernel_estimate CudaKernel::estimate(double launch_overhead_seconds, uint32_t host_minor) const {
  yirage_backend_kernel_estimate e{};
  e.struct_size = sizeof e;
  e.loop_waits = loop_waits_for(host_minor);
  e.shared_memory_seconds = shared_memory_seconds();
  e.dependent_launch_seconds = dependent_launch_seconds(launch_overhead_seconds);
  e.max_resident_blocks = max_resident_blocks();
  e.whole_product = whole_product ? 1 : 0;
  return e;
}

double CudaKernel::dependent_launch_seconds(double launch_overhead_seconds) const {
  return waits_for_previous ? kCudaDependentLaunchShare * launch_overhead_seconds : -1;
}

using cuda::kThreads;
using cuda::MatmulLaunch;
using cuda::Ref;

int attention_offset_slack_from(const char *text) {
  if (text == nullptr) return CudaTarget::kDefaultAttentionOffsetSlack;
  char *end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || value < 0 || value > CudaTarget::kDefaultAttentionOffsetSlack) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("YIRAGE_CUDA_ATTENTION_SLACK: expected an integer from 0 to 15, got '") + text + "'");
  }
  return static_cast<int>(value);
}

int64_t wait_timeout_ms_from(const char *text) {
  if (text == nullptr) return CudaTarget::kDefaultWaitTimeoutMs;
  char *end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || value < 1 || value > 3600000) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("YIRAGE_CUDA_WAIT_TIMEOUT_MS: expected an integer from 1 to 3600000, got '") + text + "'");
  }
  return value;
}

std::string cuda_arch(int cc) {
  return "sm_" + std::to_string(cc) + (cc == 90 ? "a" : "");
}

CudaKernel cuda_source(const serialize::KernelProgram &program, const CudaTarget &target) {
  const int64_t max_shared_bytes = target.max_shared_bytes;
  if (target.dialect == CudaDialect::kHip &&
      (target.compute_capability != 0 || (target.wavefront != 32 && target.wavefront != 64))) {
    throw Error(ErrorCode::kInternal, "cuda_source: a HIP target has compute capability 0 and a wavefront of 32 or 64");
  }
  const KernelGraph &g = program.graph;
  // A program of several operators runs in one launch: a loop split over blocks and its sum
  // (cuda_split_pair.hpp), or any chain of µGraphs as a persistent kernel (cuda_persistent.hpp);
  // `op` (the last operator) is then not read.
  const bool several = program.operator_count() > 1;
  if (several && target.dialect != CudaDialect::kCuda) {
    throw Error(ErrorCode::kUnsupported, "hip: programs of several operators are run one operator at a time");
  }
  const bool split_pair = several && yirage::split_pair(g).has_value();
  const bool persistent = several && !split_pair;
  const Operator &op = g.operators().back();
  Printer p;
  p.line(cuda::prelude(target.dialect, target.wavefront));
  if (persistent) p.line(cuda::persistent_helpers());
  std::string names;
  for (size_t i = g.inputs().size(); i < g.operators().size(); ++i) {
    names += std::string(names.empty() ? "" : ", ") + op_name(g.operators()[i].kind);
  }
  p.line("// Kernel program \"" + program.name + "\": " + names);
  std::string params;
  std::vector<Ref> in, out;
  std::vector<TensorRef> in_tensors, out_tensors;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Tensor &t = g.tensor(g.inputs()[i]);
    // A persistent kernel binds each operator's own in0… to these (cuda_persistent.hpp).
    const std::string name = (persistent ? "yr_in" : "in") + std::to_string(i);
    params += std::string(params.empty() ? "" : ", ") + "const " + element_type(t.dtype) + " *__restrict__ " + name;
    in.push_back({name, t.dims, {}});
    in_tensors.push_back({global_buffer(name, t.dtype), t.dims, {}});
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Tensor &t = g.tensor(g.outputs()[i]);
    const std::string name = (persistent ? "yr_out" : "out") + std::to_string(i);
    // A persistent kernel's later operators may read what it writes here: no __restrict__.
    params += std::string(params.empty() ? "" : ", ") + element_type(t.dtype) +
              (persistent ? " *" : " *__restrict__ ") + name;
    out.push_back({name, t.dims, {}});
    out_tensors.push_back({global_buffer(name, t.dtype), t.dims, {}});
  }
  CudaKernel kernel;
  // The body is printed first: the head's launch bounds depend on what it chose. What it puts
  // in before_wait touches no memory but L2 prefetches (see vector_matmul_kernel).
  Printer before_wait(1), body(1);
  std::string launch_bounds;
  // Matmuls (pre-defined, and µGraphs that are only weight products) have kernels of their own;
  // in a program of several operators, only inside the persistent kernel.
  std::optional<MatmulLaunch> matmul;
  if (!several && op.kind == OpKind::kCustomized) {
    matmul = cuda::ugraph_weight_products(before_wait, body, *op.block_graph, in, out, target);
    if (!matmul) {
      matmul = cuda::ugraph_gemm(body, *op.block_graph, in, out, target);
      kernel.whole_product = matmul.has_value();
    }
  } else if (!several && op.kind == OpKind::kMatmul) {
    matmul = cuda::predefined_matmul(before_wait, body, in[0], in[1], out[0], g.tensor(g.inputs()[1]).dtype, target);
  }
  // A program of several operators: its kernel's launch, a workspace, `extra` parameters after it.
  const auto several_in_one = [&](const std::array<int64_t, 3> &grid, int64_t threads, int64_t shared_bytes,
                                  int64_t workspace_bytes, const std::string &extra) {
    kernel.grid = grid;
    kernel.block_threads = threads;
    kernel.any_block_threads = false;
    kernel.shared_bytes = shared_bytes;
    kernel.workspace_bytes = workspace_bytes;
    params += ", unsigned char *__restrict__ yr_ws" + extra;
    launch_bounds = "__launch_bounds__(" + std::to_string(threads) + ") ";
    check_arena_fits(shared_bytes, max_shared_bytes);
  };
  if (persistent) {
    const cuda::PersistentKernel made = cuda::emit_persistent(before_wait, body, program, target);
    several_in_one({made.tasks, 1, 1}, made.threads, made.shared_bytes, made.workspace_bytes, ", unsigned *yr_watch");
    kernel.persistent_tasks = made.tasks;
    kernel.persistent_widest = made.widest;
    kernel.wait_timeout_ms = target.wait_timeout_ms;
  } else if (split_pair) {
    const cuda::SplitPairKernel made = cuda::emit_split_pair(body, program, target);
    several_in_one(made.grid, made.threads, made.shared_bytes, made.workspace_bytes, "");
  } else if (matmul) {
    // A µGraph's loop is then streamed: every warp's loads of its slice of k are in flight at once.
    if (op.kind == OpKind::kCustomized) kernel.loop_waits = 1;
    kernel.block_threads = matmul->threads;
    kernel.any_block_threads = false;  // one k slice per warp
    kernel.grid = {matmul->blocks, 1, 1};
    kernel.shared_bytes = matmul->shared_bytes;
    kernel.workspace_bytes = matmul->workspace_bytes;
    if (kernel.workspace_bytes > 0) params += ", unsigned char *__restrict__ yr_ws";
    // Exactly block_threads threads: tell ptxas, so their registers never stop a block of that
    // size (or min_blocks_per_sm of them per SM) from launching.
    launch_bounds = "__launch_bounds__(" + std::to_string(matmul->threads) + ", " +
                    std::to_string(matmul->min_blocks_per_sm) + ") ";
  } else if (op.kind == OpKind::kCustomized) {
    const BlockGraph &bg = *op.block_graph;
    kernel.grid = bg.config().grid;
    kernel.any_block_threads = false;
    std::vector<DType> input_dtypes, output_dtypes;
    for (TensorId id : g.inputs()) input_dtypes.push_back(g.tensor(id).dtype);
    for (TensorId id : g.outputs()) output_dtypes.push_back(g.tensor(id).dtype);
    const cuda::UGraphBodySettings settings = cuda::ugraph_body_settings(bg, input_dtypes, target);
    const cuda::CustomizedBody made = cuda::emit_customized_body(body, bg, settings.threads, std::move(output_dtypes),
                                                                 settings.tensor_cores, settings.target);
    kernel.shared_bytes = made.shared_bytes;
    kernel.block_threads = made.threads;
    kernel.loop_waits = made.loop_waits;
    kernel.shared_traffic_bytes = made.shared_traffic_bytes;
    kernel.attention_in_registers = made.attention_in_registers;
    kernel.loop_range = bg.config().forloop_range;
    launch_bounds = "__launch_bounds__(" + std::to_string(kernel.block_threads) + ") ";
    // Checked here rather than in the lowering: the plan adds its stages to the layout, and rows in
    // registers are not lowered.
    check_arena_fits(kernel.shared_bytes, max_shared_bytes);
  } else if (op.kind == OpKind::kRmsNorm) {
    kernel.block_threads = kThreads;
    kernel.grid = {cuda::rms_norm_kernel(body, op, in, out[0], g.tensor(g.inputs()[0]).dtype), 1, 1};
    kernel.any_block_threads = false;  // one partial sum per warp of kThreads
  } else if (op.kind == OpKind::kReduction || op.kind == OpKind::kReductionMax) {
    kernel.block_threads = kThreads;
    bool per_block = false;
    kernel.grid = {cuda::reduction_kernel(body, op, in[0], out[0], g.tensor(g.inputs()[0]).dtype, per_block), 1, 1};
    kernel.any_block_threads = !per_block;
  } else {
    std::vector<DType> dtypes;
    for (TensorId id : g.inputs()) dtypes.push_back(g.tensor(id).dtype);
    dtypes.push_back(g.tensor(g.outputs()[0]).dtype);
    kernel.block_threads = kThreads;
    const int64_t vector_blocks =
        out_tensors.size() == 1 ? cuda::vector_elementwise_kernel(body, op, in_tensors, out_tensors[0], dtypes) : 0;
    if (vector_blocks > 0) {
      kernel.grid = {vector_blocks, 1, 1};
    } else {
      int64_t work = 0;  // the largest loop the operator shares across the grid
      for (const Ref &r : out) work = std::max(work, num_elements(r.dims));
      kernel.grid = {std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, int64_t{1} << 16), 1, 1};
      cuda::CudaPrinter printer(body, nullptr);
      printer.print(lower_operator(op, in_tensors, out_tensors, Sharing::kGrid));
    }
  }
  p.open(std::string("extern \"C\" __global__ void ") + launch_bounds + kCudaKernelSymbol + "(" + params + ")");
  p.text(before_wait.str());
  if (target.dependent_launch()) {
    // Launched while the previous kernel in the stream may still run: nothing is read or
    // written before its writes are visible (before_wait only prefetches into L2). Letting the
    // next kernel launch at once only hides its launch: it waits here in turn.
    p.line("asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");");
    p.line("asm volatile(\"griddepcontrol.launch_dependents;\");");
    kernel.waits_for_previous = true;
  }
  p.text(body.str());
  p.close();
  kernel.source = p.str();
  return kernel;
}

}  // namespace yirage::codegen
