#include "search/norm_weights.hpp"

#include "ir/rebuild.hpp"

namespace yirage::search {

namespace {

// Whether the operator's output is read as a matmul operand.
std::vector<bool> read_by_matmul(const KernelGraph &graph) {
  std::vector<bool> read(graph.num_tensors(), false);
  for (const Operator &op : graph.operators()) {
    if (op.kind != OpKind::kMatmul) continue;
    for (TensorId t : op.inputs) read[static_cast<size_t>(t)] = true;
  }
  return read;
}

bool splits(const Operator &op, const std::vector<bool> &read) {
  return op.kind == OpKind::kRmsNorm && op.attributes.has_weight && read[static_cast<size_t>(op.outputs[0])];
}

}  // namespace

KernelGraph weights_apart(const KernelGraph &graph) {
  const std::vector<bool> read = read_by_matmul(graph);
  bool any = false;
  for (const Operator &op : graph.operators()) any = any || splits(op, read);
  if (!any) return graph;
  KernelGraph g;
  std::vector<TensorId> ids(graph.num_tensors(), -1);
  for (const Operator &op : graph.operators()) {
    std::vector<TensorId> in;
    for (TensorId t : op.inputs) in.push_back(ids[static_cast<size_t>(t)]);
    if (op.kind == OpKind::kInput) {
      const Tensor &t = graph.tensor(op.outputs[0]);
      ids[static_cast<size_t>(op.outputs[0])] = g.new_input(t.dims, t.dtype);
      continue;
    }
    if (!splits(op, read)) {
      const auto outs = add_operator(g, op, in);
      for (size_t o = 0; o < outs.size(); ++o) ids[static_cast<size_t>(op.outputs[o])] = outs[o];
      continue;
    }
    const Dims &x = g.tensor(in[0]).dims;
    TensorId weight = in[1];
    const Dims &w = g.tensor(weight).dims;
    if (w.size() < x.size()) {
      Dims at_rank(x.size() - w.size(), 1);
      at_rank.insert(at_rank.end(), w.begin(), w.end());
      weight = g.reshape(weight, at_rank);
    }
    const TensorId normed = g.rms_norm(in[0], op.attributes.sizes, op.attributes.eps, std::nullopt);
    ids[static_cast<size_t>(op.outputs[0])] = g.binary(OpKind::kMul, normed, weight);
  }
  for (TensorId o : graph.outputs()) g.mark_output(ids[static_cast<size_t>(o)]);
  return g;
}

}  // namespace yirage::search
