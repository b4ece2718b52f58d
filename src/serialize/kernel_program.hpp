// Kernel programs (schemas/yirage_kernel_program.fbs): one operator of a kernel graph with the
// tensors it reads and writes, as it crosses the plugin ABI. The runtime builds them from a
// graph's operators; plugins read them back. Reading never trusts the bytes: the flatbuffers
// verifier runs, then the embedded graph goes through the validating graph loader, then the
// program's own rules are checked (exactly one operator, inputs and outputs in order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel_graph.hpp"

namespace yirage::serialize {

inline constexpr uint32_t kKernelProgramSchemaVersion = 1;

struct KernelProgram {
  std::string name;
  // Inputs (one Input operator each, in order), then the operator; its outputs, in order, are
  // the graph's outputs.
  KernelGraph graph;

  // The one non-input operator.
  const Operator &op() const { return graph.operators().back(); }
  // The bytes of each input / output tensor, in order: what a launch's buffers must hold.
  std::vector<size_t> input_bytes() const;
  std::vector<size_t> output_bytes() const;
};

// The operators of `graph` that run as kernels, in order: the live ones that are not inputs.
std::vector<size_t> kernel_operators(const KernelGraph &graph);

// The program running `graph`'s operator `op_index` (not an input).
KernelProgram make_kernel_program(const KernelGraph &graph, size_t op_index);

// Deterministic bytes (the same program always gives the same bytes).
std::vector<uint8_t> kernel_program_to_bytes(const KernelProgram &program);

// Throws Error(kCorruptData) for anything malformed, Error(kVersionMismatch) for a newer schema,
// Error(kUnsupported) for strides that are not compact row-major.
KernelProgram kernel_program_from_bytes(const void *data, size_t size);

}  // namespace yirage::serialize
