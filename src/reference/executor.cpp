#include "reference/executor.hpp"

#include <string>

#include "reference/operators.hpp"
#include "util/error.hpp"

namespace yirage::reference {

namespace {

// Marks the operators whose results reach an output.
std::vector<bool> live_operators(const KernelGraph &graph) {
  const auto &ops = graph.operators();
  std::vector<bool> live(ops.size(), false);
  for (TensorId id : graph.outputs()) live[static_cast<size_t>(graph.tensor(id).producer)] = true;
  for (size_t i = ops.size(); i-- > 0;) {  // creation order is topological
    if (!live[i]) continue;
    for (TensorId in : ops[i].inputs) live[static_cast<size_t>(graph.tensor(in).producer)] = true;
  }
  return live;
}

}  // namespace

std::vector<Values> evaluate(const KernelGraph &graph, const std::vector<Values> &inputs) {
  if (inputs.size() != graph.inputs().size()) {
    invalid_argument("reference: the graph has " + std::to_string(graph.inputs().size()) +
                     " inputs, " + std::to_string(inputs.size()) + " were given");
  }
  std::vector<Values> values(graph.num_tensors());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorId id = graph.inputs()[i];
    if (static_cast<int64_t>(inputs[i].size()) != num_elements(graph.tensor(id).dims)) {
      invalid_argument("reference: input " + std::to_string(i) + " has " +
                       std::to_string(inputs[i].size()) + " elements, expected " +
                       std::to_string(num_elements(graph.tensor(id).dims)));
    }
    values[static_cast<size_t>(id)] = inputs[i];
  }

  const std::vector<bool> live = live_operators(graph);
  const auto &ops = graph.operators();
  for (size_t index = 0; index < ops.size(); ++index) {
    const Operator &op = ops[index];
    if (!live[index] || op.kind == OpKind::kInput) continue;
    auto in = [&](size_t k) -> const Values & { return values[static_cast<size_t>(op.inputs[k])]; };
    auto dims = [&](size_t k) -> const Dims & { return graph.tensor(op.inputs[k]).dims; };
    auto &out = values[static_cast<size_t>(op.outputs[0])];
    const Dims &out_dims = graph.tensor(op.outputs[0]).dims;
    if (is_unary(op.kind)) {
      out.resize(in(0).size());
      for (size_t i = 0; i < out.size(); ++i)
        out[i] = apply_unary(op.kind, op.attributes, in(0)[i]);
    } else if (is_binary(op.kind)) {
      out = broadcast_binary(op.kind, in(0), dims(0), in(1), dims(1), out_dims);
    } else {
      switch (op.kind) {
        case OpKind::kMatmul: out = matmul(in(0), dims(0), in(1), dims(1), out_dims); break;
        case OpKind::kReduction:
        case OpKind::kReductionMax: out = reduce(op.kind, in(0), dims(0), op.attributes.dim); break;
        case OpKind::kRmsNorm:
          out = rms_norm(in(0), dims(0), op.attributes.sizes.size(), op.attributes.eps,
                         op.attributes.has_weight ? &in(1) : nullptr);
          break;
        case OpKind::kConcat:
          out = concat(in(0), dims(0), in(1), dims(1), op.attributes.dim);
          break;
        case OpKind::kSplit: {
          std::vector<Values> parts = split(in(0), dims(0), op.attributes.dim, op.attributes.sizes);
          for (size_t p = 0; p < parts.size(); ++p) {
            values[static_cast<size_t>(op.outputs[p])] = std::move(parts[p]);
          }
          break;
        }
        default:
          throw Error(ErrorCode::kInternal,
                      std::string("reference: no implementation for operator ") + op_name(op.kind));
      }
    }
  }

  std::vector<Values> outputs;
  outputs.reserve(graph.outputs().size());
  for (TensorId id : graph.outputs()) outputs.push_back(values[static_cast<size_t>(id)]);
  return outputs;
}

}  // namespace yirage::reference
