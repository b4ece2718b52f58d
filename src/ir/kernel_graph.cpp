#include "ir/kernel_graph.hpp"

#include <algorithm>
#include <string>
#include <utility>

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

void KernelGraph::set_launch_with_next(size_t op, bool with_next) {
  if (op >= operators_.size()) invalid_argument("set_launch_with_next: no operator " + std::to_string(op));
  if (operators_[op].kind == OpKind::kInput) invalid_argument("set_launch_with_next: an input is not launched");
  operators_[op].attributes.launch_with_next = with_next;
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

TensorId KernelGraph::reshape(TensorId x_id, const Dims &dims) {
  const Tensor &x = checked("reshape", "X", x_id);
  const int64_t count = num_elements(x.dims);
  const std::string shapes = "reshape: X is " + to_string(x.dims) + " (" + std::to_string(count) +
                             " elements), shape " + to_string(dims) + ": ";
  if (dims.empty() || dims.size() > static_cast<size_t>(kMaxRank)) {
    invalid_argument(shapes + "rank " + std::to_string(dims.size()) + " is outside 1.." + std::to_string(kMaxRank));
  }
  Dims out = dims;
  int inferred = -1;
  int64_t known = 1;  // the product of the given dims, at most `count`
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1 && inferred < 0) {
      inferred = static_cast<int>(i);
    } else if (dims[i] < 1) {
      invalid_argument(shapes + "dim " + std::to_string(i) + " is " + std::to_string(dims[i]) +
                       " (dims must be >= 1; one may be -1)");
    } else if (dims[i] > count / known) {
      invalid_argument(shapes + "it holds more than " + std::to_string(count) + " elements");
    } else {
      known *= dims[i];
    }
  }
  if (inferred >= 0) {
    if (count % known != 0) {
      invalid_argument(shapes + "no size of dim " + std::to_string(inferred) + " makes " + std::to_string(count) +
                       " elements");
    }
    out[static_cast<size_t>(inferred)] = count / known;
  } else if (known != count) {
    invalid_argument(shapes + "it holds " + std::to_string(known) + " elements");
  }
  check_dims("reshape", out);
  OpAttributes attributes;
  attributes.sizes = out;
  return append(OpKind::kReshape, {x_id}, attributes, {out}, x.dtype)[0];
}

TensorId KernelGraph::permute(TensorId x_id, const Dims &dims) {
  const Tensor &x = checked("permute", "X", x_id);
  const int rank = static_cast<int>(x.dims.size());
  const std::string shapes = "permute: X is " + to_string(x.dims) + ", dims " + to_string(dims) + ": ";
  if (dims.size() != x.dims.size()) {
    invalid_argument(shapes + "need one entry per dim of X (" + std::to_string(rank) + ")");
  }
  Dims order(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < -rank || dims[i] >= rank) {
      invalid_argument(shapes + "entry " + std::to_string(i) + " (" + std::to_string(dims[i]) + ") is outside " +
                       std::to_string(-rank) + ".." + std::to_string(rank - 1));
    }
    order[i] = dims[i] < 0 ? dims[i] + rank : dims[i];
    if (seen[static_cast<size_t>(order[i])]) {
      invalid_argument(shapes + "dim " + std::to_string(order[i]) + " appears twice: not a permutation");
    }
    seen[static_cast<size_t>(order[i])] = true;
  }
  Dims out(dims.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = x.dims[static_cast<size_t>(order[i])];
  OpAttributes attributes;
  attributes.sizes = order;
  return append(OpKind::kPermute, {x_id}, attributes, {out}, x.dtype)[0];
}

TensorId KernelGraph::transpose(TensorId x_id, int64_t dim0, int64_t dim1) {
  const Tensor &x = checked("transpose", "X", x_id);
  const int rank = static_cast<int>(x.dims.size());
  const int a = normalize_dim("transpose", dim0, rank), b = normalize_dim("transpose", dim1, rank);
  Dims order(x.dims.size());
  for (int i = 0; i < rank; ++i) order[static_cast<size_t>(i)] = i;
  std::swap(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]);
  return permute(x_id, order);
}

bool aliases_its_input(const KernelGraph &graph, const Operator &op) {
  if (op.kind != OpKind::kReshape) return false;
  const std::vector<TensorId> &outputs = graph.outputs();
  return std::find(outputs.begin(), outputs.end(), op.outputs.at(0)) == outputs.end();
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
