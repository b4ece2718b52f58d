#include "search/padded_form.hpp"

#include <set>

#include "ir/rebuild.hpp"
#include "search/dim_classes.hpp"

namespace yirage::search {
namespace {

// Extents at least this large whose largest power-of-two factor is below kRoundedFactor are
// rounded up.
constexpr int64_t kSmallestRounded = 32;
constexpr int64_t kRoundedFactor = 8;

// The multiple of the largest power of two g with (g - 1)² < extent at or above extent: any
// number of parts up to g cuts `extent` into ceil(extent / parts) with none empty.
int64_t rounded_up(int64_t extent) {
  int64_t g = 2;
  while ((2 * g - 1) * (2 * g - 1) < extent) g *= 2;
  return (extent + g - 1) / g * g;
}

// Adds `from`'s operators to `to` in order, each after `adjust` has seen it with its operands'
// ids in `to`: the graph with new dims where the adjustment gives them.
template <class Graph, class Adjust>
std::vector<TensorId> replay(const Graph &from, Graph &to, Adjust adjust) {
  std::vector<TensorId> ids(from.num_tensors(), -1);
  for (const Operator &original : from.operators()) {
    Operator op = original;
    std::vector<TensorId> in;
    for (TensorId t : op.inputs) in.push_back(ids[static_cast<size_t>(t)]);
    adjust(op, in);
    if (op.kind == OpKind::kRmsNorm) {  // its normalized shape: the trailing dims it had
      const Dims &x = to.tensor(in[0]).dims;
      op.attributes.sizes.assign(x.end() - static_cast<std::ptrdiff_t>(op.attributes.sizes.size()), x.end());
    }
    const std::vector<TensorId> out = add_operator(to, op, in);
    for (size_t o = 0; o < out.size(); ++o) ids[static_cast<size_t>(op.outputs[o])] = out[o];
  }
  return ids;
}

bool rounded(int64_t extent) {
  return extent >= kSmallestRounded && extent % kRoundedFactor != 0;
}

}  // namespace

std::optional<KernelGraph> padded_twin(const KernelGraph &graph) {
  // Most graphs have no such dim: said before their dim classes are built.
  bool any_dim = false;
  for (size_t t = 0; t < graph.num_tensors() && !any_dim; ++t) {
    for (int64_t e : graph.tensor(static_cast<TensorId>(t)).dims) any_dim = any_dim || rounded(e);
  }
  if (!any_dim) return std::nullopt;
  const DimClasses classes(graph);
  std::set<int> fixed;  // classes whose sizes an operator's attributes spell out
  for (const Operator &op : graph.operators()) {
    if (op.kind == OpKind::kCustomized) return std::nullopt;
    if (op.kind != OpKind::kReshape && op.kind != OpKind::kSplit && op.kind != OpKind::kConcat) continue;
    for (const std::vector<TensorId> *list : {&op.inputs, &op.outputs}) {
      for (TensorId t : *list) {
        for (size_t d = 0; d < graph.tensor(t).dims.size(); ++d) fixed.insert(classes.of(t, d));
      }
    }
  }
  std::vector<int64_t> extent(static_cast<size_t>(classes.count()));
  bool any = false;
  for (int c = 0; c < classes.count(); ++c) {
    const int64_t e = classes.extent(c);
    const bool round = rounded(e) && fixed.count(c) == 0;
    extent[static_cast<size_t>(c)] = round ? rounded_up(e) : e;
    any = any || round;
  }
  if (!any) return std::nullopt;
  KernelGraph twin;
  const std::vector<TensorId> ids = replay(graph, twin, [&](Operator &op, const std::vector<TensorId> &) {
    if (op.kind != OpKind::kInput) return;
    for (size_t d = 0; d < op.attributes.sizes.size(); ++d) {
      op.attributes.sizes[d] = extent[static_cast<size_t>(classes.of(op.outputs[0], d))];
    }
  });
  for (TensorId out : graph.outputs()) twin.mark_output(ids[static_cast<size_t>(out)]);
  return twin;
}

KernelGraph ragged_probe(DType dtype) {
  KernelGraph g;
  const TensorId x = g.new_input({2, 3}, dtype);
  BlockGraphConfig config;
  config.grid = {2, 1, 1};
  config.block_threads = 32;
  auto bg = std::make_shared<BlockGraph>(config);  // tiles of 2 columns, the second block's ragged
  bg->new_output(bg->unary(OpKind::kExp, bg->new_input({2, 3}, dtype, {1, -1, -1}, -1)), {1, -1, -1}, -1);
  g.mark_output(g.customized({x}, bg)[0]);
  return g;
}

BlockGraph on_dims(const BlockGraph &structure, const BlockGraphConfig &config, const std::vector<Dims> &input_dims) {
  BlockGraph bg(config);
  size_t input = 0;
  replay(structure, bg, [&](Operator &op, const std::vector<TensorId> &) {
    if (op.kind == OpKind::kInputIterator) op.attributes.sizes = input_dims.at(input++);
  });
  return bg;
}

}  // namespace yirage::search
