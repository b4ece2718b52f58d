#include "ir/kernel_graph.hpp"

#include <string>

#include "ir/block_graph.hpp"
#include "util/error.hpp"

namespace yirage {

TensorId KernelGraph::new_input(const Dims &dims, DType dtype) {
  check_dims("new_input", dims);
  if (!is_valid_dtype(static_cast<int32_t>(dtype))) {
    invalid_argument("new_input: dtype " + std::to_string(static_cast<int32_t>(dtype)) + " is not a yirage_dtype");
  }
  OpAttributes attributes;
  attributes.sizes = dims;
  attributes.dtype = dtype;
  Transaction transaction(*this);
  const TensorId id = append(OpKind::kInput, {}, attributes, {dims}, dtype)[0];
  inputs_.push_back(id);
  transaction.commit();
  return id;
}

std::vector<TensorId> KernelGraph::customized(const std::vector<TensorId> &inputs,
                                              std::shared_ptr<const BlockGraph> block_graph) {
  if (!block_graph) invalid_argument("customized: the block graph is missing");
  const BlockGraph &bg = *block_graph;
  const std::vector<int32_t> iterators = bg.operator_indices(OpKind::kInputIterator);
  if (inputs.size() != iterators.size()) {
    invalid_argument("customized: the block graph has " + std::to_string(iterators.size()) + " inputs, " +
                     std::to_string(inputs.size()) + " tensors were given");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor &t = checked("customized", "an input", inputs[i]);
    const Operator &it = bg.operators()[static_cast<size_t>(iterators[i])];
    const DType want = bg.tensor(it.outputs[0]).dtype;
    if (t.dims != it.attributes.sizes || t.dtype != want) {
      invalid_argument("customized: input " + std::to_string(i) + " is " + to_string(t.dims) + " " +
                       dtype_name(t.dtype) + "; the block graph reads " + to_string(it.attributes.sizes) + " " +
                       dtype_name(want));
    }
  }
  const std::vector<int32_t> savers = bg.operator_indices(OpKind::kOutputSaver);
  if (savers.empty()) invalid_argument("customized: the block graph has no outputs");
  std::vector<Dims> output_dims;
  for (int32_t s : savers) output_dims.push_back(bg.operators()[static_cast<size_t>(s)].attributes.sizes);
  const DType dtype = bg.operators()[static_cast<size_t>(savers[0])].attributes.dtype;
  for (int32_t s : savers) {
    if (bg.operators()[static_cast<size_t>(s)].attributes.dtype != dtype) {
      invalid_argument("customized: the block graph's outputs are written in different dtypes");
    }
  }
  Transaction transaction(*this);
  const std::vector<TensorId> outs = append(OpKind::kCustomized, inputs, {}, output_dims, dtype, LoopPhase::kInvariant);
  operators_.back().block_graph = std::move(block_graph);
  transaction.commit();
  return outs;
}

void KernelGraph::mark_output(TensorId x_id) {
  const Tensor &x = checked("mark_output", "X", x_id);
  if (operators_[static_cast<size_t>(x.producer)].kind == OpKind::kInput) {
    invalid_argument("mark_output: the tensor is a graph input; outputs must be computed");
  }
  for (TensorId id : outputs_) {
    if (id == x_id) invalid_argument("mark_output: the tensor is already an output");
  }
  outputs_.push_back(x_id);
}

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

}  // namespace yirage
