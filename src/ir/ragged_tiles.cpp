#include "ir/ragged_tiles.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.hpp"

namespace yirage {
namespace {

[[noreturn]] void refuse(const Operator &op, const std::string &why) {
  invalid_argument(std::string(op_name(op.kind)) + ": " + why);
}

std::string describe(const RaggedSplit &s) {
  return "tiles of " + std::to_string(s.tile) + " over " + std::to_string(s.extent) + " elements";
}

// The split of dim `d` of an input iterator's tile, or nullopt where its parts divide the dim.
std::optional<RaggedSplit> iterator_split(const BlockGraph &bg, const Operator &op, const Dims &tile, size_t d) {
  const int64_t extent = op.attributes.sizes[d];
  const bool looped = op.attributes.forloop_dim == static_cast<int32_t>(d);
  int32_t axis = -1;
  for (size_t a = 0; a < 3; ++a) {
    if (op.attributes.grid_map[a] == static_cast<int32_t>(d)) axis = static_cast<int32_t>(a);
  }
  const int64_t parts =
      (axis >= 0 ? bg.config().grid[static_cast<size_t>(axis)] : 1) * (looped ? bg.config().forloop_range : 1);
  if (tile[d] * parts == extent) return std::nullopt;
  return RaggedSplit{extent, tile[d], axis, tile[d] * (looped ? bg.config().forloop_range : 1), looped};
}

// Dim d of a broadcast result: the split of the operands that have the dim whole; they must agree.
std::optional<RaggedSplit> joined(const Operator &op, const std::vector<const std::optional<RaggedSplit> *> &splits) {
  std::optional<RaggedSplit> out;
  for (const std::optional<RaggedSplit> *s : splits) {
    if (!s || !*s) continue;
    if (out && !(*out == **s)) {
      refuse(op, "its operands are split differently along one dim (" + describe(*out) + ", " + describe(**s) + ")");
    }
    out = **s;
  }
  return out;
}

// The split of operand `in`'s dim aligned (from the right) with dim `d` of a result of rank
// `rank`, where the operand has that dim whole (not broadcast).
const std::optional<RaggedSplit> *aligned(const BlockGraph &bg, const std::vector<RaggedDims> &ragged, TensorId in,
                                          size_t d, size_t rank, int64_t out_extent) {
  const Dims &dims = bg.tensor(in).dims;
  if (rank - d > dims.size()) return nullptr;
  const size_t k = dims.size() - (rank - d);
  if (dims[k] != out_extent) return nullptr;
  return &ragged[static_cast<size_t>(in)][k];
}

// After the loop, a dim the loop split holds each position's total over the iterations: a
// position is absent only where it is absent in every iteration, which the block's first
// iteration decides.
RaggedDims after_loop(RaggedDims dims) {
  for (std::optional<RaggedSplit> &s : dims) {
    if (!s || !s->looped) continue;
    if (s->grid_axis < 0) {
      s.reset();  // the first iteration's tile is whole
    } else {
      s->looped = false;
    }
  }
  return dims;
}

void check_counted(const BlockGraph &bg, const Operator &op, const RaggedDims &x) {
  const size_t last = x.size() - 1;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!x[d]) continue;
    if (d != last && x[d]->looped) {
      refuse(op, "the loop's ragged dim " + std::to_string(d) +
                     " is not the last: positions would be averaged over different counts");
    }
    if (d == last && x[d]->grid_axis >= 0) {
      refuse(op, "its last dim is ragged across the blocks (" + describe(*x[d]) + "): the blocks' counts would differ");
    }
  }
  (void)bg;
}

}  // namespace

std::vector<RaggedDims> ragged_dims(const BlockGraph &bg) {
  std::vector<RaggedDims> ragged(bg.num_tensors());
  for (size_t t = 0; t < bg.num_tensors(); ++t) ragged[t].resize(bg.tensor(static_cast<TensorId>(t)).dims.size());
  auto of = [&](TensorId id) -> RaggedDims & { return ragged[static_cast<size_t>(id)]; };
  for (const Operator &op : bg.operators()) {
    if (op.outputs.empty()) continue;  // an output saver
    const Dims &out = bg.tensor(op.outputs[0]).dims;
    RaggedDims &result = of(op.outputs[0]);
    if (op.kind == OpKind::kInputIterator) {
      for (size_t d = 0; d < out.size(); ++d) result[d] = iterator_split(bg, op, out, d);
      continue;
    }
    if (is_unary(op.kind)) {
      result = of(op.inputs[0]);
      continue;
    }
    if (is_binary(op.kind)) {
      for (size_t d = 0; d < out.size(); ++d) {
        result[d] = joined(op, {aligned(bg, ragged, op.inputs[0], d, out.size(), out[d]),
                                aligned(bg, ragged, op.inputs[1], d, out.size(), out[d])});
      }
      continue;
    }
    switch (op.kind) {
      case OpKind::kMatmul: {
        const size_t rank = out.size();
        for (size_t d = 0; d + 2 < rank; ++d) {
          result[d] = joined(op, {aligned(bg, ragged, op.inputs[0], d, rank, out[d]),
                                  aligned(bg, ragged, op.inputs[1], d, rank, out[d])});
        }
        const RaggedDims &a = of(op.inputs[0]), &b = of(op.inputs[1]);
        result[rank - 2] = a[a.size() - 2];
        result[rank - 1] = b[b.size() - 1];
        joined(op, {&a.back(), &b[b.size() - 2]});  // the reduced dim: one split
        continue;
      }
      case OpKind::kReduction:
      case OpKind::kReductionMax:
        result = of(op.inputs[0]);
        result[static_cast<size_t>(op.attributes.dim)].reset();
        continue;
      case OpKind::kRmsNorm: {
        const RaggedDims &x = of(op.inputs[0]);
        const size_t normalized = op.attributes.sizes.size();
        for (size_t d = x.size() - normalized; d < x.size(); ++d) {
          if (x[d])
            refuse(op, "it normalizes over dim " + std::to_string(d) + ", which is ragged (" + describe(*x[d]) + ")");
        }
        if (op.inputs.size() > 1) {
          for (const std::optional<RaggedSplit> &w : of(op.inputs[1])) {
            if (w) refuse(op, "its weight is ragged (" + describe(*w) + ")");
          }
        }
        result = x;
        continue;
      }
      case OpKind::kConcat:
      case OpKind::kSplit: {
        // Along any dim but the one joined or cut, as a broadcast result.
        const auto along = static_cast<size_t>(op.attributes.dim);
        for (TensorId in : op.inputs) {
          if (of(in)[along]) refuse(op, "it joins or cuts dim " + std::to_string(along) + ", which is ragged");
        }
        for (TensorId o : op.outputs) {
          for (size_t d = 0; d < out.size(); ++d) {
            if (d == along) continue;
            std::vector<const std::optional<RaggedSplit> *> operands;
            for (TensorId in : op.inputs) operands.push_back(&of(in)[d]);
            of(o)[d] = joined(op, operands);
          }
        }
        continue;
      }
      case OpKind::kAccumRescale: {
        // M broadcasts to X: where M's elements are absent, so are the results'.
        RaggedDims x = of(op.inputs[0]);
        for (size_t d = 0; d < out.size(); ++d) {
          x[d] = joined(op, {aligned(bg, ragged, op.inputs[0], d, out.size(), out[d]),
                             aligned(bg, ragged, op.inputs[1], d, out.size(), out[d])});
        }
        result = after_loop(std::move(x));
        continue;
      }
      case OpKind::kAccumSum:
      case OpKind::kAccumMax: result = after_loop(of(op.inputs[0])); continue;
      case OpKind::kAccumReduceMean:
      case OpKind::kAccumReduceRms: check_counted(bg, op, of(op.inputs[0])); [[fallthrough]];
      case OpKind::kAccumReduceSum:
        result = after_loop(of(op.inputs[0]));
        result.back().reset();
        continue;
      case OpKind::kAccumSumToDimx:
        if (of(op.inputs[0]).back()) refuse(op, "its last dim, which it folds, is ragged");
        result = after_loop(of(op.inputs[0]));
        result.back().reset();
        continue;
      default: throw Error(ErrorCode::kInternal, std::string("ragged_dims: no rule for ") + op_name(op.kind));
    }
  }
  return ragged;
}

bool has_ragged_tiles(const BlockGraph &bg) {
  for (const Operator &op : bg.operators()) {
    if (op.kind != OpKind::kInputIterator) continue;
    const Dims &tile = bg.tensor(op.outputs[0]).dims;
    for (size_t d = 0; d < tile.size(); ++d) {
      if (iterator_split(bg, op, tile, d)) return true;
    }
  }
  return false;
}

int64_t ragged_start(const RaggedSplit &split, const std::array<int64_t, 3> &block, int64_t iteration) {
  int64_t start = split.looped ? iteration * split.tile : 0;
  if (split.grid_axis >= 0) start += block[static_cast<size_t>(split.grid_axis)] * split.block_stride;
  return start;
}

int64_t present_length(const RaggedSplit &split, const std::array<int64_t, 3> &block, int64_t iteration) {
  return std::clamp<int64_t>(split.extent - ragged_start(split, block, iteration), 0, split.tile);
}

int64_t block_stride(const BlockGraph &bg, const Operator &io, size_t dim) {
  const int64_t tile = bg.tensor(io.kind == OpKind::kOutputSaver ? io.inputs[0] : io.outputs[0]).dims[dim];
  const bool looped = io.kind == OpKind::kInputIterator && io.attributes.forloop_dim == static_cast<int32_t>(dim);
  return looped ? tile * bg.config().forloop_range : tile;
}

std::vector<AbsentFill> absent_fills(const BlockGraph &bg, const Operator &op, const std::vector<RaggedDims> &ragged) {
  std::vector<AbsentFill> fills;
  auto add = [&](size_t input, std::vector<size_t> candidates, double value) {
    const RaggedDims &dims = ragged[static_cast<size_t>(op.inputs[input])];
    AbsentFill f{input, {}, value};
    for (size_t d : candidates) {
      if (d < dims.size() && dims[d]) f.dims.push_back(d);
    }
    if (!f.dims.empty()) fills.push_back(std::move(f));
  };
  // The dims of input `input` a loop's accumulation adds up: those the loop splits, and the
  // last where the accumulator reduces it.
  auto accumulated = [&](size_t input, bool last) {
    const RaggedDims &dims = ragged[static_cast<size_t>(op.inputs[input])];
    std::vector<size_t> out;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] && (dims[d]->looped || (last && d + 1 == dims.size()))) out.push_back(d);
    }
    return out;
  };
  const size_t rank = op.inputs.empty() ? 0 : bg.tensor(op.inputs[0]).dims.size();
  switch (op.kind) {
    case OpKind::kMatmul: {
      const size_t rank_b = bg.tensor(op.inputs[1]).dims.size();
      add(0, {rank - 1}, 0);
      add(1, {rank_b - 2}, 0);
      break;
    }
    case OpKind::kReduction: add(0, {static_cast<size_t>(op.attributes.dim)}, 0); break;
    case OpKind::kReductionMax: add(0, {static_cast<size_t>(op.attributes.dim)}, -INFINITY); break;
    case OpKind::kAccumSum: add(0, accumulated(0, false), 0); break;
    case OpKind::kAccumMax: add(0, accumulated(0, false), -INFINITY); break;
    case OpKind::kAccumReduceSum:
    case OpKind::kAccumReduceMean:
    case OpKind::kAccumReduceRms:
    case OpKind::kAccumSumToDimx: add(0, accumulated(0, true), 0); break;
    case OpKind::kAccumRescale:
      add(0, accumulated(0, false), 0);
      add(1, accumulated(1, false), -INFINITY);
      break;
    default: break;
  }
  return fills;
}

int64_t accumulated_count(const BlockGraph &bg, const Operator &accumulator, const std::vector<RaggedDims> &ragged) {
  const RaggedDims &x = ragged[static_cast<size_t>(accumulator.inputs[0])];
  // ragged_dims allows only a last dim that the loop alone splits: the iterations cover it once.
  if (!x.empty() && x.back()) return x.back()->extent;
  return bg.tensor(accumulator.inputs[0]).dims.back() * bg.config().forloop_range;
}

}  // namespace yirage
