// Kernel programs (schemas/yirage_kernel_program.fbs): one operator of a kernel graph, or (schema
// version 2, plugin ABI 1.4) several, with the tensors they read and write, as they cross the
// plugin ABI. The runtime builds them from a graph's operators; plugins read them back. Reading
// never trusts the bytes: the flatbuffers verifier runs, then the embedded graph goes through the
// validating graph loader, then the program's own rules are checked (inputs first, then the
// operators; one operator reads the inputs in order and its outputs are the program's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel_graph.hpp"

namespace yirage::serialize {

// Programs of one operator are written as version 1, so that plugins of ABI 1.0–1.3 read them;
// programs of several operators as version 2.
inline constexpr uint32_t kKernelProgramSchemaVersion = 2;

// What a reader takes: a backend that runs one operator a program (every backend before ABI 1.4,
// and those that decline multi-operator programs) refuses a program of several with
// Error(kUnsupported).
enum class ProgramOperators { kOne, kSeveral };

struct KernelProgram {
  std::string name;
  // Inputs (one Input operator each, in order), then the operators. One operator's outputs, in
  // order, are the graph's outputs; several operators' outputs are those the host reads (the
  // others are the program's own intermediates, which the plugin keeps).
  KernelGraph graph;

  // How many operators it runs (1, or more in schema version 2).
  size_t operator_count() const { return graph.operators().size() - graph.inputs().size(); }
  // The one operator; Error(kInternal) for a program of several.
  const Operator &op() const;
  // The bytes of each input / output tensor, in order: what a launch's buffers must hold.
  std::vector<size_t> input_bytes() const;
  std::vector<size_t> output_bytes() const;
};

// The operators of `graph` that run as kernels, in order: the live ones that are not inputs.
std::vector<size_t> kernel_operators(const KernelGraph &graph);

// The program running `graph`'s operator `op_index` (not an input).
KernelProgram make_kernel_program(const KernelGraph &graph, size_t op_index);

// The program running `graph`'s operators `ops` (two or more, in graph order, none an input) as
// one, with the graph's tensors it reads (`inputs`: every read of a tensor no operator of `ops`
// writes, in order, as a program of one operator lists them) and writes for others (`outputs`:
// graph outputs and tensors a live operator outside `ops` reads, in the order written).
struct GroupProgram {
  KernelProgram program;
  std::vector<TensorId> inputs, outputs;
};
// Who reads each tensor of a graph, computed once for the many groups a compile offers (so that
// a group's program costs its own size, not the graph's).
struct GraphReaders {
  explicit GraphReaders(const KernelGraph &graph);
  std::vector<bool> live;           // per operator
  std::vector<int64_t> live_reads;  // per tensor: its reads by live operators
  std::vector<bool> graph_output;   // per tensor
};
GroupProgram make_group_program(const KernelGraph &graph, const std::vector<size_t> &ops, const GraphReaders &readers);
GroupProgram make_group_program(const KernelGraph &graph, const std::vector<size_t> &ops);

// Deterministic bytes (the same program always gives the same bytes).
std::vector<uint8_t> kernel_program_to_bytes(const KernelProgram &program);

// Throws Error(kCorruptData) for anything malformed, Error(kVersionMismatch) for a newer schema,
// Error(kUnsupported) for strides that are not compact row-major or several operators where
// `operators` is kOne.
KernelProgram kernel_program_from_bytes(const void *data, size_t size,
                                        ProgramOperators operators = ProgramOperators::kOne);

}  // namespace yirage::serialize
