#include "codegen/ugraph_layout.hpp"

#include "ir/ragged_tiles.hpp"

#include <numeric>

#include "util/error.hpp"

namespace yirage::codegen {

BlockLayout plan_block_layout(const BlockGraph &bg, int64_t align, const std::vector<int64_t> &row_pad,
                              const std::vector<bool> &elsewhere, const std::vector<bool> &sums_elsewhere,
                              const std::vector<bool> &narrow) {
  BlockLayout layout;
  auto reserve = [&](int64_t floats) {
    const int64_t offset = layout.floats;
    layout.floats += (floats + align - 1) / align * align;
    return offset;
  };
  for (size_t t = 0; t < bg.num_tensors(); ++t) {
    const Dims &dims = bg.tensor(static_cast<TensorId>(t)).dims;
    const int64_t pad = t < row_pad.size() ? row_pad[t] : 0;
    const bool none = t < elsewhere.size() && elsewhere[t];
    const int64_t elements = none ? 0 : num_elements(dims) / dims.back() * (dims.back() + pad);
    const DType dtype = bg.tensor(static_cast<TensorId>(t)).dtype;
    const bool halved = t < narrow.size() && narrow[t] && dtype_size(dtype) == 2;
    layout.stored.push_back(halved ? dtype : DType::kFloat32);
    layout.tile.push_back(reserve(halved ? (elements + 1) / 2 : elements));
  }
  const auto &ops = bg.operators();
  layout.state.assign(ops.size(), -1);
  layout.running_max.assign(ops.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpKind kind = ops[i].kind;
    const bool own_sums = i >= sums_elsewhere.size() || !sums_elsewhere[i];
    if (own_sums && (kind == OpKind::kAccumReduceSum || kind == OpKind::kAccumReduceMean ||
                     kind == OpKind::kAccumReduceRms || kind == OpKind::kAccumSumToDimx)) {
      layout.state[i] = reserve(num_elements(bg.tensor(ops[i].inputs[0]).dims));
    }
    if (own_sums && kind == OpKind::kAccumReduceRms) {
      layout.running_max[i] = reserve(num_elements(bg.tensor(ops[i].inputs[0]).dims));
    }
    if (kind == OpKind::kAccumRescale) {
      const int64_t m = num_elements(bg.tensor(ops[i].inputs[1]).dims);
      layout.running_max[i] = reserve(m);
      layout.state[i] = reserve(m);
    }
  }
  return layout;
}

std::vector<bool> narrow_input_tiles(const BlockGraph &bg) {
  std::vector<bool> narrow(bg.num_tensors(), false);
  for (const Operator &op : bg.operators()) {
    if (op.kind == OpKind::kInputIterator && dtype_size(bg.tensor(op.outputs[0]).dtype) == 2) {
      narrow[static_cast<size_t>(op.outputs[0])] = true;
    }
  }
  return narrow;
}

void check_arena_fits(int64_t bytes, int64_t limit) {
  if (limit > 0 && bytes > limit) {
    throw Error(ErrorCode::kUnsupported, "codegen: the µGraph's tiles need " + std::to_string(bytes) +
                                             " bytes of shared memory per block, the device has " +
                                             std::to_string(limit));
  }
}

namespace {

// The terms of tile_base: (block or loop variable, coefficient).
std::vector<std::pair<Expr, int64_t>> tile_base_terms(const BlockGraph &bg, const Operator &op, const Dims &tile_dims,
                                                      const Expr &it) {
  static const char *block_vars[3] = {"bx", "by", "bz"};
  const Dims &full = op.attributes.sizes;
  const Dims strides = row_major_strides(full);
  std::vector<std::pair<Expr, int64_t>> terms;
  for (size_t a = 0; a < 3; ++a) {
    const int32_t d = op.attributes.grid_map[a];
    if (d < 0) continue;
    const auto du = static_cast<size_t>(d);
    const int64_t part = op.kind == OpKind::kOutputSaver ? tile_dims[du] : block_stride(bg, op, du);
    terms.emplace_back(var(block_vars[a]), part * strides[du]);
  }
  if (op.attributes.forloop_dim >= 0) {
    const auto f = static_cast<size_t>(op.attributes.forloop_dim);
    terms.emplace_back(it, tile_dims[f] * strides[f]);
  }
  return terms;
}

}  // namespace

Expr tile_base(const BlockGraph &bg, const Operator &op, const Dims &tile_dims, const Expr &it) {
  Expr sum = int_const(0);
  for (const auto &[v, coefficient] : tile_base_terms(bg, op, tile_dims, it)) {
    sum = std::move(sum) + v * int_const(coefficient);
  }
  return sum;
}

int64_t tile_base_granule(const BlockGraph &bg, const Operator &op, const Dims &tile_dims) {
  int64_t granule = 0;
  for (const auto &term : tile_base_terms(bg, op, tile_dims, var("it"))) granule = std::gcd(granule, term.second);
  return granule;
}

int64_t vector_group(const BlockGraph &bg, const Operator &op, const Dims &tile_dims, DType dtype,
                     int64_t vector_bytes) {
  const int64_t group = vector_elements(dtype, vector_bytes);
  if (group <= 1 || tile_dims.back() % group != 0 || op.attributes.sizes.back() % group != 0) return 1;
  if (tile_base_granule(bg, op, tile_dims) % group != 0) return 1;
  return group;
}

}  // namespace yirage::codegen
