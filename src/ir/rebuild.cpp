#include "ir/rebuild.hpp"

#include <optional>
#include <string>

#include "util/error.hpp"

namespace yirage {

namespace {

// The compute operators both graph kinds share.
std::vector<TensorId> add_compute(OperatorGraph &graph, const Operator &op, const std::vector<TensorId> &in) {
  const OpAttributes &at = op.attributes;
  auto need = [&](size_t n) {
    if (in.size() != n) {
      invalid_argument(std::string(op_name(op.kind)) + ": expected " + std::to_string(n) + " inputs, got " +
                       std::to_string(in.size()));
    }
  };
  if (op.kind == OpKind::kClamp) {
    need(1);
    return {graph.clamp(in[0], at.lo, at.hi)};
  }
  if (op.kind == OpKind::kMulScalar) {
    need(1);
    return {graph.mul_scalar(in[0], at.scalar)};
  }
  if (is_unary(op.kind)) {
    need(1);
    return {graph.unary(op.kind, in[0])};
  }
  if (is_binary(op.kind)) {
    need(2);
    return {graph.binary(op.kind, in[0], in[1])};
  }
  switch (op.kind) {
    case OpKind::kMatmul: need(2); return {graph.matmul(in[0], in[1])};
    case OpKind::kReduction:
    case OpKind::kReductionMax: need(1); return {graph.reduction(op.kind, in[0], at.dim)};
    case OpKind::kRmsNorm: {
      need(at.has_weight ? 2 : 1);
      const std::optional<TensorId> weight = at.has_weight ? std::optional<TensorId>(in[1]) : std::nullopt;
      return {graph.rms_norm(in[0], at.sizes, at.eps, weight)};
    }
    case OpKind::kConcat: need(2); return {graph.concat(in[0], in[1], at.dim)};
    case OpKind::kSplit: need(1); return graph.split(in[0], at.dim, at.sizes);
    default: invalid_argument(std::string(op_name(op.kind)) + " is not an operator of this graph level");
  }
}

// Renames inputs through `ids`, applies `edit`, adds the operator (or drops it), and records
// the new ids of its outputs. Shared by both rebuild overloads.
template <class Graph>
void rebuild_operator(Graph &target, size_t index, Operator op, const OperatorEdit &edit, std::vector<TensorId> &ids) {
  const std::vector<TensorId> old_outputs = op.outputs;
  if (edit && !edit(index, op)) {
    if (old_outputs.empty()) return;  // an output saver: nothing stands for it
    if (op.inputs.empty()) invalid_argument("rebuild: cannot drop an operator without inputs");
    ids[static_cast<size_t>(old_outputs[0])] = ids[static_cast<size_t>(op.inputs[0])];
    return;
  }
  std::vector<TensorId> inputs;
  for (TensorId id : op.inputs) inputs.push_back(ids.at(static_cast<size_t>(id)));
  const std::vector<TensorId> outputs = add_operator(target, op, inputs);
  for (size_t k = 0; k < outputs.size() && k < old_outputs.size(); ++k) {
    ids[static_cast<size_t>(old_outputs[k])] = outputs[k];
  }
}

}  // namespace

namespace {

std::vector<TensorId> add_kernel_operator(KernelGraph &graph, const Operator &op, const std::vector<TensorId> &inputs) {
  switch (op.kind) {
    case OpKind::kInput:
      if (!inputs.empty()) invalid_argument("input: an input operator has no operands");
      return {graph.new_input(op.attributes.sizes, op.attributes.dtype)};
    case OpKind::kCustomized: return graph.customized(inputs, op.block_graph);
    case OpKind::kReshape:
    case OpKind::kPermute:
      if (inputs.size() != 1) invalid_argument(std::string(op_name(op.kind)) + ": expected 1 input");
      return {op.kind == OpKind::kReshape ? graph.reshape(inputs[0], op.attributes.sizes)
                                          : graph.permute(inputs[0], op.attributes.sizes)};
    default: return add_compute(graph, op, inputs);
  }
}

}  // namespace

std::vector<TensorId> add_operator(KernelGraph &graph, const Operator &op, const std::vector<TensorId> &inputs) {
  std::vector<TensorId> outputs = add_kernel_operator(graph, op, inputs);
  if (op.attributes.launch_with_next) graph.set_launch_with_next(graph.operators().size() - 1, true);
  return outputs;
}

std::vector<TensorId> add_operator(BlockGraph &graph, const Operator &op, const std::vector<TensorId> &inputs) {
  const OpAttributes &at = op.attributes;
  switch (op.kind) {
    case OpKind::kInputIterator:
      if (!inputs.empty()) invalid_argument("input_iterator: an iterator has no operands");
      return {graph.new_input(at.sizes, at.dtype, at.grid_map, at.forloop_dim)};
    case OpKind::kOutputSaver:
      if (inputs.size() != 1) invalid_argument("output_saver: expected 1 input");
      graph.new_output(inputs[0], at.grid_map, at.forloop_dim, at.dtype);
      return {};
    case OpKind::kAccumRescale:
      if (inputs.size() != 2) invalid_argument("accum_rescale: expected 2 inputs");
      return {graph.accumulate_rescale(inputs[0], inputs[1])};
    case OpKind::kAccumSumToDimx:
      if (inputs.size() != 1 || at.sizes.size() != 1) {
        invalid_argument("accum_sum_todimx: expected 1 input and sizes {dimx}");
      }
      return {graph.accumulate_to_dimx(inputs[0], at.sizes[0])};
    default:
      if (is_accumulator(op.kind)) {
        if (inputs.size() != 1) invalid_argument(std::string(op_name(op.kind)) + ": expected 1 input");
        return {graph.accumulate(op.kind, inputs[0], at.eps)};
      }
      return add_compute(graph, op, inputs);
  }
}

BlockGraph rebuild(const BlockGraph &graph, const BlockGraphConfig &config, const OperatorEdit &edit) {
  BlockGraph target(config);
  std::vector<TensorId> ids(graph.num_tensors(), -1);
  for (size_t i = 0; i < graph.operators().size(); ++i) {
    rebuild_operator(target, i, graph.operators()[i], edit, ids);
  }
  return target;
}

KernelGraph rebuild(const KernelGraph &graph, const OperatorEdit &edit) {
  KernelGraph target;
  std::vector<TensorId> ids(graph.num_tensors(), -1);
  for (size_t i = 0; i < graph.operators().size(); ++i) {
    rebuild_operator(target, i, graph.operators()[i], edit, ids);
  }
  for (TensorId out : graph.outputs()) target.mark_output(ids[static_cast<size_t>(out)]);
  return target;
}

KernelGraph without_dead_operators(const KernelGraph &graph) {
  const std::vector<bool> live = live_operators(graph);
  return rebuild(graph, [&](size_t i, Operator &op) { return live[i] || op.kind == OpKind::kInput; });
}

}  // namespace yirage
