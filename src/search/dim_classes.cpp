#include "search/dim_classes.hpp"

#include <numeric>

#include "util/error.hpp"

namespace yirage::search {

namespace {

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};

}  // namespace

DimClasses::DimClasses(const KernelGraph &graph) {
  size_t slots = 0;
  for (size_t t = 0; t < graph.num_tensors(); ++t) {
    offsets_.push_back(slots);
    slots += graph.tensor(static_cast<TensorId>(t)).dims.size();
  }
  UnionFind sets(slots);
  auto slot = [&](TensorId t, size_t d) { return offsets_[static_cast<size_t>(t)] + d; };
  auto rank = [&](TensorId t) { return graph.tensor(t).dims.size(); };
  auto size = [&](TensorId t, size_t d) { return graph.tensor(t).dims[d]; };
  // Joins the dims of x and y position by position from the right, skipping broadcast ones
  // (and, if `except` is a dim of y, that one).
  auto join_aligned = [&](TensorId x, TensorId y, long except) {
    const size_t rx = rank(x), ry = rank(y);
    for (size_t k = 1; k <= std::min(rx, ry); ++k) {
      const size_t dx = rx - k, dy = ry - k;
      if (static_cast<long>(dy) == except || size(x, dx) != size(y, dy)) continue;
      sets.join(slot(x, dx), slot(y, dy));
    }
  };
  for (const Operator &op : graph.operators()) {
    switch (op.kind) {
      case OpKind::kInput: break;
      case OpKind::kMatmul: {
        const TensorId a = op.inputs[0], b = op.inputs[1], c = op.outputs[0];
        const size_t r = rank(c);
        for (size_t d = 0; d + 2 < r; ++d) {
          if (size(a, d) == size(c, d)) sets.join(slot(a, d), slot(c, d));
          if (size(b, d) == size(c, d)) sets.join(slot(b, d), slot(c, d));
        }
        sets.join(slot(a, r - 2), slot(c, r - 2));
        sets.join(slot(b, r - 1), slot(c, r - 1));
        sets.join(slot(a, r - 1), slot(b, r - 2));
        break;
      }
      case OpKind::kReduction:
      case OpKind::kReductionMax:
      case OpKind::kConcat:
      case OpKind::kSplit:
        for (TensorId in : op.inputs) {
          for (TensorId out : op.outputs) join_aligned(in, out, op.attributes.dim);
        }
        break;
      case OpKind::kPermute:  // output dim i is the input's dim sizes[i]
        for (size_t d = 0; d < op.attributes.sizes.size(); ++d) {
          sets.join(slot(op.inputs[0], static_cast<size_t>(op.attributes.sizes[d])), slot(op.outputs[0], d));
        }
        break;
      case OpKind::kReshape: {  // a dim kept whole: same size, same count of elements before it
        const Dims &in = graph.tensor(op.inputs[0]).dims, &out = graph.tensor(op.outputs[0]).dims;
        int64_t before_in = 1;
        for (size_t i = 0; i < in.size(); before_in *= in[i++]) {
          int64_t before_out = 1;
          for (size_t o = 0; o < out.size() && before_out <= before_in; before_out *= out[o++]) {
            if (before_out == before_in && out[o] == in[i]) sets.join(slot(op.inputs[0], i), slot(op.outputs[0], o));
          }
        }
        break;
      }
      case OpKind::kCustomized:
        throw Error(ErrorCode::kUnsupported,
                    "superoptimize: the graph already has a customized operator; search the "
                    "graph of pre-defined operators it came from");
      default:  // elementwise and rms_norm (weight aligned to the trailing dims)
        for (TensorId in : op.inputs) join_aligned(in, op.outputs[0], -1);
    }
  }
  std::vector<int> id_of_root(slots, -1);
  class_of_.resize(slots);
  for (size_t t = 0; t < graph.num_tensors(); ++t) {
    for (size_t d = 0; d < rank(static_cast<TensorId>(t)); ++d) {
      const size_t s = slot(static_cast<TensorId>(t), d), root = sets.find(s);
      if (id_of_root[root] < 0) {
        id_of_root[root] = count_++;
        extents_.push_back(size(static_cast<TensorId>(t), d));
      }
      class_of_[s] = id_of_root[root];
    }
  }
}

int DimClasses::of(TensorId tensor, size_t dim) const {
  return class_of_.at(offsets_.at(static_cast<size_t>(tensor)) + dim);
}

int DimClasses::dim_in(TensorId tensor, int cls) const {
  const size_t begin = offsets_.at(static_cast<size_t>(tensor));
  const size_t end =
      static_cast<size_t>(tensor) + 1 < offsets_.size() ? offsets_[static_cast<size_t>(tensor) + 1] : class_of_.size();
  int found = -1;
  for (size_t s = begin; s < end; ++s) {
    if (class_of_[s] != cls) continue;
    if (found >= 0) return -2;
    found = static_cast<int>(s - begin);
  }
  return found;
}

}  // namespace yirage::search
