// The CUDA code of a customized operator: one CUDA block per µGraph block, tiles in dynamic
// shared memory, the for-loop's per-iteration tiles through a cp.async ring.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/c_text.hpp"
#include "cuda/codegen/cuda_printer.hpp"
#include "cuda/codegen/cuda_source.hpp"
#include "ir/block_graph.hpp"

namespace yirage::codegen::cuda {

// What emit_customized_body made: the dynamic shared memory the body needs, in bytes, and the
// block's thread count (the one asked for, or a warpgroup more where attention in registers
// takes every warp asked for and a warpgroup of producers issues its copies).
struct CustomizedBody {
  int64_t shared_bytes = 0;
  int64_t threads = 0;
  bool mbarriers = false;               // it keeps mbarriers in its shared memory (warp-specialized loads)
  int64_t loop_waits = -1;              // UGraphPlan::loop_waits; -1: not planned (rows in registers)
  int64_t shared_traffic_bytes = -1;    // UGraphPlan::shared_traffic_bytes; -1: not planned
  bool attention_in_registers = false;  // UGraphPlan::attention
};

// How a µGraph's body is generated: its block's thread count (before the body adds producers),
// whether its block-level matmuls may use tensor cores, and the target it is generated for.
struct UGraphBodySettings {
  int64_t threads = 0;
  bool tensor_cores = false;
  CudaTarget target;
};
// The settings for µGraph `bg` reading kernel inputs of `input_dtypes` on `target`.
UGraphBodySettings ugraph_body_settings(const BlockGraph &bg, const std::vector<DType> &input_dtypes,
                                        const CudaTarget &target);

// Emits the kernel body of µGraph `bg` for blocks of `threads` threads (a multiple of 32);
// output_dtypes: the element types of the kernel's outputs, in order; tensor_cores: block-level
// matmuls may use mma (16-bit graphs on sm_80+); target: the device's shared memory (see
// CudaTarget); placement: the block it computes and its shared memory (cuda_printer.hpp).
CustomizedBody emit_customized_body(Printer &p, const BlockGraph &bg, int64_t threads, std::vector<DType> output_dtypes,
                                    bool tensor_cores, const CudaTarget &target, const BodyPlacement &placement = {});

}  // namespace yirage::codegen::cuda
