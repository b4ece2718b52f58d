#include "serialize/kernel_program.hpp"

#include <algorithm>
#include <map>

#include <flatbuffers/flatbuffers.h>

#include "ir/rebuild.hpp"
#include "serialize/flatbuffers_read.hpp"
#include "serialize/graph_file.hpp"
#include "util/error.hpp"
#include "yirage_kernel_program_generated.h"

namespace yirage::serialize {
namespace {

[[noreturn]] void corrupt(const std::string &message) {
  throw Error(ErrorCode::kCorruptData, "kernel program: " + message);
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::TensorStrides>>> strides_of(
    flatbuffers::FlatBufferBuilder &builder, const KernelGraph &graph, const std::vector<TensorId> &tensors) {
  std::vector<flatbuffers::Offset<fb::TensorStrides>> all;
  for (TensorId id : tensors) {
    const Dims strides = row_major_strides(graph.tensor(id).dims);
    all.push_back(fb::CreateTensorStrides(builder, builder.CreateVector(strides)));
  }
  return builder.CreateVector(all);
}

void check_strides(const KernelGraph &graph, const std::vector<TensorId> &tensors,
                   const flatbuffers::Vector<flatbuffers::Offset<fb::TensorStrides>> *strides, const char *role) {
  if (strides == nullptr) return;  // absent: compact row-major
  if (strides->size() != tensors.size()) {
    corrupt(std::string(role) + " strides: " + std::to_string(strides->size()) + " entries for " +
            std::to_string(tensors.size()) + " tensors");
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Dims expected = row_major_strides(graph.tensor(tensors[i]).dims);
    const auto *s = strides->Get(static_cast<flatbuffers::uoffset_t>(i))->strides();
    const Dims given = s ? serialize::vector_of(s) : expected;
    if (given != expected) {
      throw Error(ErrorCode::kUnsupported, std::string("kernel program: ") + role + " " + std::to_string(i) +
                                               " has strides " + to_string(given) +
                                               "; version 1 supports compact row-major tensors only (" +
                                               to_string(expected) + ")");
    }
  }
}

// The rules of a program of several operators (schema version 2) that the graph loader does not
// check already: the inputs, then the operators.
void check_operators(const KernelGraph &g) {
  const auto &ops = g.operators();
  const size_t inputs = g.inputs().size();
  for (size_t i = 0; i < ops.size(); ++i) {
    if ((ops[i].kind == OpKind::kInput) != (i < inputs)) {
      corrupt("its graph must hold the inputs, then the operators (operator " + std::to_string(i) + ")");
    }
  }
  if (ops.size() < inputs + 2) corrupt("a program of schema version 2 holds two or more operators");
  if (g.outputs().empty()) corrupt("it has no outputs");
}

// `op` as a program holds it: how the host groups operators into programs is not the program's.
Operator launched(Operator op) {
  op.attributes.launch_with_next = false;
  return op;
}

}  // namespace

const Operator &KernelProgram::op() const {
  if (operator_count() != 1) {
    throw Error(ErrorCode::kInternal,
                "kernel program: " + std::to_string(operator_count()) + " operators where one was expected");
  }
  return graph.operators().back();
}

std::vector<size_t> KernelProgram::input_bytes() const {
  std::vector<size_t> bytes;
  for (TensorId id : graph.inputs()) bytes.push_back(tensor_bytes(graph.tensor(id)));
  return bytes;
}

std::vector<size_t> KernelProgram::output_bytes() const {
  std::vector<size_t> bytes;
  for (TensorId id : graph.outputs()) bytes.push_back(tensor_bytes(graph.tensor(id)));
  return bytes;
}

std::vector<size_t> kernel_operators(const KernelGraph &graph) {
  const std::vector<bool> live = live_operators(graph);
  std::vector<size_t> kernels;
  for (size_t i = 0; i < graph.operators().size(); ++i) {
    if (live[i] && graph.operators()[i].kind != OpKind::kInput) kernels.push_back(i);
  }
  return kernels;
}

KernelProgram make_kernel_program(const KernelGraph &graph, size_t op_index) {
  const Operator &op = graph.operators().at(op_index);
  if (op.kind == OpKind::kInput) invalid_argument("kernel program: an input is not a kernel");
  KernelProgram program;
  program.name = "op" + std::to_string(op_index) + "_" + op_name(op.kind);
  std::vector<TensorId> inputs;
  for (TensorId id : op.inputs) {
    const Tensor &t = graph.tensor(id);
    inputs.push_back(program.graph.new_input(t.dims, t.dtype));
  }
  for (TensorId out : add_operator(program.graph, launched(op), inputs)) program.graph.mark_output(out);
  return program;
}

GraphReaders::GraphReaders(const KernelGraph &graph)
    : live(live_operators(graph)), live_reads(graph.num_tensors(), 0), graph_output(graph.num_tensors(), false) {
  for (size_t i = 0; i < graph.operators().size(); ++i) {
    if (!live[i]) continue;
    for (TensorId t : graph.operators()[i].inputs) ++live_reads[static_cast<size_t>(t)];
  }
  for (TensorId out : graph.outputs()) graph_output[static_cast<size_t>(out)] = true;
}

GroupProgram make_group_program(const KernelGraph &graph, const std::vector<size_t> &ops) {
  return make_group_program(graph, ops, GraphReaders(graph));
}

GroupProgram make_group_program(const KernelGraph &graph, const std::vector<size_t> &ops, const GraphReaders &readers) {
  if (ops.size() < 2 || !std::is_sorted(ops.begin(), ops.end()) ||
      std::adjacent_find(ops.begin(), ops.end()) != ops.end()) {
    invalid_argument("kernel program: a group takes two or more operators in graph order");
  }
  for (size_t i : ops) {
    if (graph.operators().at(i).kind == OpKind::kInput) invalid_argument("kernel program: an input is not a kernel");
  }
  auto in_group = [&](TensorId t) {
    return std::binary_search(ops.begin(), ops.end(), static_cast<size_t>(graph.tensor(t).producer));
  };
  GroupProgram group;
  KernelProgram &program = group.program;
  program.name = "ops" + std::to_string(ops.front()) + "_" + std::to_string(ops.back());
  // Each read of a tensor from outside the group is a program input of its own, as in a program
  // of one operator (so the group's first operator reads the first inputs, in order).
  std::vector<std::vector<TensorId>> reads(ops.size());
  std::map<TensorId, int64_t> reads_inside;  // the group's live reads of its own tensors
  for (size_t k = 0; k < ops.size(); ++k) {
    for (TensorId t : graph.operators()[ops[k]].inputs) {
      if (in_group(t)) {
        if (readers.live[ops[k]]) ++reads_inside[t];
        continue;
      }
      const Tensor &tensor = graph.tensor(t);
      reads[k].push_back(program.graph.new_input(tensor.dims, tensor.dtype));
      group.inputs.push_back(t);
    }
  }
  std::map<TensorId, TensorId> ids;  // the group's tensors in the program
  for (size_t k = 0; k < ops.size(); ++k) {
    const Operator &op = graph.operators()[ops[k]];
    std::vector<TensorId> in;
    size_t next_read = 0;
    for (TensorId t : op.inputs) in.push_back(in_group(t) ? ids.at(t) : reads[k][next_read++]);
    const std::vector<TensorId> outs = add_operator(program.graph, launched(op), in);
    for (size_t o = 0; o < outs.size(); ++o) {
      const TensorId t = op.outputs[o];
      ids[t] = outs[o];
      // Read outside the group: as a graph output, or by a live operator not in it.
      const auto inside = reads_inside.find(t);
      if (readers.graph_output[static_cast<size_t>(t)] ||
          readers.live_reads[static_cast<size_t>(t)] > (inside == reads_inside.end() ? 0 : inside->second)) {
        program.graph.mark_output(outs[o]);
        group.outputs.push_back(t);
      }
    }
  }
  if (group.outputs.empty()) invalid_argument("kernel program: the group writes nothing that is read");
  return group;
}

std::vector<uint8_t> kernel_program_to_bytes(const KernelProgram &program) {
  const std::vector<uint8_t> graph = serialize::graph_to_bytes(program.graph, serialize::GraphFormat::kBinary);
  flatbuffers::FlatBufferBuilder builder;
  const auto name = builder.CreateString(program.name);
  const auto graph_bytes = builder.CreateVector(graph);
  const auto inputs = strides_of(builder, program.graph, program.graph.inputs());
  const auto outputs = strides_of(builder, program.graph, program.graph.outputs());
  const uint32_t version = program.operator_count() == 1 ? 1 : kKernelProgramSchemaVersion;
  builder.Finish(fb::CreateKernelProgram(builder, version, name, graph_bytes, inputs, outputs),
                 fb::KernelProgramIdentifier());
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

KernelProgram kernel_program_from_bytes(const void *data, size_t size, ProgramOperators operators) {
  if (data == nullptr) corrupt("no data");
  // Verified and read from an aligned copy: a host may pass any address.
  const std::vector<uint64_t> aligned = serialize::aligned_copy(data, size);
  const auto *bytes = reinterpret_cast<const uint8_t *>(aligned.data());
  if (size < 8 || !fb::KernelProgramBufferHasIdentifier(bytes)) {
    corrupt("not a kernel program (file identifier \"YRKP\" missing)");
  }
  flatbuffers::Verifier verifier(bytes, size);
  if (!fb::VerifyKernelProgramBuffer(verifier)) corrupt("the flatbuffers verifier refused it");
  const fb::KernelProgram *root = fb::GetKernelProgram(bytes);
  if (root->schema_version() > kKernelProgramSchemaVersion) {
    throw Error(ErrorCode::kVersionMismatch,
                "kernel program: schema version " + std::to_string(root->schema_version()) +
                    " is newer than this reader's " + std::to_string(kKernelProgramSchemaVersion));
  }
  if (root->graph() == nullptr) corrupt("no graph");
  KernelProgram program;
  program.name = root->name() ? root->name()->str() : "kernel";
  try {
    program.graph = serialize::graph_from_bytes(root->graph()->data(), root->graph()->size());
  } catch (const Error &e) {
    corrupt(std::string("its graph: ") + e.what());
  }
  const KernelGraph &g = program.graph;
  const auto &ops = g.operators();
  if (root->schema_version() < 2) {
    if (ops.size() != g.inputs().size() + 1 || ops.back().kind == OpKind::kInput) {
      corrupt("its graph must hold the inputs and then exactly one operator");
    }
    if (ops.back().inputs != g.inputs()) corrupt("the operator must read the inputs in order");
    if (ops.back().outputs != g.outputs()) corrupt("the outputs must be the operator's, in order");
  } else {
    check_operators(g);
    if (operators == ProgramOperators::kOne) {
      throw Error(ErrorCode::kUnsupported, "kernel program: " + std::to_string(program.operator_count()) +
                                               " operators in one program; this backend runs one a program");
    }
  }
  check_strides(g, g.inputs(), root->input_strides(), "input");
  check_strides(g, g.outputs(), root->output_strides(), "output");
  return program;
}

}  // namespace yirage::serialize
