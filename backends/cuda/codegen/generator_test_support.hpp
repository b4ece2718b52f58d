// What the CUDA generator's tests share: H100-like targets, and the kernels of benchmark graphs
// generated for them.
#pragma once

#include <string>

#include "benchmark_ugraphs.hpp"
#include "cuda/codegen/cuda_source.hpp"
#include "ir/block_graph.hpp"
#include "ir/rebuild.hpp"
#include "search/padded_form.hpp"
#include "serialize/kernel_program.hpp"
#include "util/error.hpp"

namespace yirage::cuda::generator_test {

constexpr int64_t kH100SharedBytes = 227 * 1024;

inline codegen::CudaTarget h100_like(int compute_capability) {
  return {compute_capability, kH100SharedBytes};
}
// An H100 with its multiprocessors known (132, 228 KiB of shared memory each): what the plugin
// passes, for the choices that depend on how many blocks fit the device at once.
constexpr int64_t kH100SharedPerMultiprocessor = 233472;
inline codegen::CudaTarget h100_device() {
  return {90, kH100SharedBytes, 132, kH100SharedPerMultiprocessor};
}

// The attention (or qknorm) µGraph at grid 2 × blocks, for-loop range `loop`: 256 / blocks query
// rows per block against 4096 / loop keys per iteration.
inline KernelGraph attention_at(const std::string &name, int64_t blocks, int64_t loop,
                                const OperatorEdit &edit = nullptr, DType dtype = DType::kFloat16) {
  const KernelGraph hand = bench::build_fused(name, 1, dtype, 1);
  BlockGraphConfig config = hand.operators().back().block_graph->config();
  config.grid = {2, blocks, 1};
  config.forloop_range = loop;
  KernelGraph fused;
  std::vector<TensorId> inputs;
  for (TensorId t : hand.inputs()) inputs.push_back(fused.new_input(hand.tensor(t).dims, hand.tensor(t).dtype));
  fused.mark_output(fused.customized(
      inputs, std::make_shared<BlockGraph>(rebuild(*hand.operators().back().block_graph, config, edit)))[0]);
  return fused;
}

// `fused` (a kernel graph whose last operator is its µGraph) on inputs whose dims of `from` or
// more elements are `less` shorter: the same µGraph with ragged tiles at their ends
// (search::on_dims). Throws where the µGraph cannot take them (a ragged rms_norm).
inline KernelGraph ragged_variant(const KernelGraph &fused, int64_t from = 1024, int64_t less = 3) {
  const BlockGraph &structure = *fused.operators().back().block_graph;
  KernelGraph out;
  std::vector<TensorId> inputs;
  std::vector<Dims> dims;
  for (TensorId t : fused.inputs()) {
    Dims d = fused.tensor(t).dims;
    for (int64_t &n : d) n = n >= from ? n - less : n;
    inputs.push_back(out.new_input(d, fused.tensor(t).dtype));
    dims.push_back(d);
  }
  const auto block_graph = std::make_shared<BlockGraph>(search::on_dims(structure, structure.config(), dims));
  for (TensorId t : out.customized(inputs, block_graph)) out.mark_output(t);
  return out;
}

// The kernel-level matmul of `name` (unfused, full size, float16, batch b) generated for `target`.
inline codegen::CudaKernel unfused_matmul(const std::string &name, const codegen::CudaTarget &target, int64_t b = 1) {
  const KernelGraph graph = bench::build_unfused(name, b, DType::kFloat16, 1);
  size_t matmul = 0;
  while (graph.operators()[matmul].kind != OpKind::kMatmul) ++matmul;
  return codegen::cuda_source(serialize::make_kernel_program(graph, matmul), target);
}
inline codegen::CudaKernel unfused_matmul(const std::string &name, int cc, int64_t b = 1) {
  return unfused_matmul(name, h100_like(cc), b);
}

// The customized operator's source for `graph` under a shared-memory limit.
// rows_in_registers: false for the shared-memory code of µGraphs that would not get it.
inline codegen::CudaKernel customized_source(const KernelGraph &graph, int64_t max_shared_bytes,
                                             bool rows_in_registers = true, int compute_capability = 90) {
  for (size_t i = 0; i < graph.operators().size(); ++i) {
    if (graph.operators()[i].kind == OpKind::kCustomized) {
      codegen::CudaTarget target{compute_capability, max_shared_bytes};
      target.rows_in_registers = rows_in_registers;
      return codegen::cuda_source(serialize::make_kernel_program(graph, i), target);
    }
  }
  throw Error(ErrorCode::kInternal, "no customized operator");
}

// The generated kernel's body, without the helpers before it.
inline std::string kernel_body(const codegen::CudaKernel &kernel) {
  return kernel.source.substr(kernel.source.find("yirage_cuda_kernel("));
}

// How many times `what` occurs in `source`.
inline size_t count(const std::string &source, const std::string &what) {
  size_t n = 0;
  for (size_t at = source.find(what); at != std::string::npos; at = source.find(what, at + 1)) ++n;
  return n;
}

}  // namespace yirage::cuda::generator_test
