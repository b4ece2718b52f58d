// Every compute operator on compact row-major buffers, written once over an arithmetic `A`
// (float64_arithmetic.hpp; verify/field_arithmetic.hpp) so that the reference executor and the
// fingerprints share one definition of each operator.
#pragma once

#include <algorithm>
#include <vector>

#include "ir/operator.hpp"
#include "ir/shape.hpp"
#include "util/parallel.hpp"

namespace yirage::reference {

template <class V>
using Buffer = std::vector<V>;

namespace detail {

// Row-major strides of `dims`, with 0 for size-1 dims so that they broadcast.
inline Dims broadcast_strides(const Dims &dims) {
  Dims strides = row_major_strides(dims);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) strides[i] = 0;
  }
  return strides;
}

}  // namespace detail

// Calls visit(out_index, offset_a, offset_b) for every element of out_dims in row-major order,
// with offsets into two operands of the given (possibly broadcast) strides.
template <class Visit>
void for_each_broadcast(const Dims &out_dims, const Dims &a_strides, const Dims &b_strides, Visit visit) {
  const size_t rank = out_dims.size();
  std::vector<int64_t> index(rank, 0);
  int64_t offset_a = 0, offset_b = 0;
  const int64_t total = num_elements(out_dims);
  for (int64_t i = 0; i < total; ++i) {
    visit(i, offset_a, offset_b);
    for (size_t d = rank; d-- > 0;) {  // odometer increment
      offset_a += a_strides[d];
      offset_b += b_strides[d];
      if (++index[d] < out_dims[d]) break;
      offset_a -= a_strides[d] * out_dims[d];
      offset_b -= b_strides[d] * out_dims[d];
      index[d] = 0;
    }
  }
}

template <class A, class V = typename A::Value>
Buffer<V> unary(const A &arith, OpKind kind, const OpAttributes &attributes, const Buffer<V> &x) {
  Buffer<V> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = arith.unary(kind, attributes, x[i]);
  return out;
}

template <class A, class V = typename A::Value>
Buffer<V> broadcast_binary(const A &arith, OpKind kind, const Buffer<V> &a, const Dims &a_dims, const Buffer<V> &b,
                           const Dims &b_dims, const Dims &out_dims) {
  Buffer<V> out(static_cast<size_t>(num_elements(out_dims)));
  for_each_broadcast(out_dims, detail::broadcast_strides(a_dims), detail::broadcast_strides(b_dims),
                     [&](int64_t i, int64_t ia, int64_t ib) {
                       out[static_cast<size_t>(i)] =
                           arith.binary(kind, a[static_cast<size_t>(ia)], b[static_cast<size_t>(ib)]);
                     });
  return out;
}

// Rows of the output are independent, so up to `threads` threads compute them.
template <class A, class V = typename A::Value>
Buffer<V> matmul(const A &arith, const Buffer<V> &a, const Dims &a_dims, const Buffer<V> &b, const Dims &b_dims,
                 const Dims &out_dims, int threads = 1) {
  const size_t rank = out_dims.size();
  const int64_t m = a_dims[rank - 2], k = a_dims[rank - 1], n = b_dims[rank - 1];
  const Dims batch_out(out_dims.begin(), out_dims.end() - 2);
  const Dims batch_a(a_dims.begin(), a_dims.end() - 2);
  const Dims batch_b(b_dims.begin(), b_dims.end() - 2);
  // Batch dims broadcast like elementwise operands, in units of whole matrices.
  std::vector<std::pair<int64_t, int64_t>> operands;  // per output batch: (A batch, B batch)
  for_each_broadcast(batch_out, detail::broadcast_strides(batch_a), detail::broadcast_strides(batch_b),
                     [&](int64_t, int64_t ia, int64_t ib) { operands.emplace_back(ia, ib); });
  Buffer<V> out(static_cast<size_t>(num_elements(out_dims)), arith.zero());
  const int64_t batches = static_cast<int64_t>(operands.size());
  auto a_rows = [&](int64_t batch, int64_t i) {
    return a.data() + (operands[static_cast<size_t>(batch)].first * m + i) * k;
  };
  auto b_of = [&](int64_t batch) { return b.data() + operands[static_cast<size_t>(batch)].second * k * n; };
  // An arithmetic may supply a faster kernel for blocks of rows and columns (the field one
  // reduces lazily, its rows sharing each read of B); it must compute exactly what the loop
  // below computes. Tasks of up to 8 rows and 512 columns: B is read once per 8 rows, and a
  // product of few rows (a vector times a weight) still splits across threads.
  if constexpr (requires { arith.matmul_rows(a.data(), m, b.data(), out.data(), k, n, m, n); }) {
    constexpr int64_t kTaskRows = 8, kTaskColumns = 512;
    const int64_t row_blocks = (m + kTaskRows - 1) / kTaskRows, column_blocks = (n + kTaskColumns - 1) / kTaskColumns;
    parallel_for(batches * row_blocks * column_blocks, threads, [&](int64_t task) {
      const int64_t batch = task / (row_blocks * column_blocks), rest = task % (row_blocks * column_blocks);
      const int64_t i = rest / column_blocks * kTaskRows, first = rest % column_blocks * kTaskColumns;
      arith.matmul_rows(a_rows(batch, i), std::min(kTaskRows, m - i), b_of(batch), out.data() + (batch * m + i) * n, k,
                        n, first, std::min(n, first + kTaskColumns));
    });
  } else {
    parallel_for(batches * m, threads, [&](int64_t row) {
      const int64_t batch = row / m, i = row % m;
      const V *pa = a_rows(batch, i), *pb = b_of(batch);
      V *po = out.data() + (batch * m + i) * n;
      for (int64_t p = 0; p < k; ++p) {  // p-j order keeps the inner loop contiguous
        const V a_ip = pa[p];
        for (int64_t j = 0; j < n; ++j) po[j] = arith.add(po[j], arith.mul(a_ip, pb[p * n + j]));
      }
    });
  }
  return out;
}

// Sum (kReduction) or max (kReductionMax) over `dim`.
template <class A, class V = typename A::Value>
Buffer<V> reduce(const A &arith, OpKind kind, const Buffer<V> &x, const Dims &dims, int dim) {
  const AxisView v = axis_view(dims, static_cast<size_t>(dim));
  const bool is_max = kind == OpKind::kReductionMax;
  Buffer<V> out(static_cast<size_t>(v.outer * v.inner), is_max ? arith.max_identity() : arith.zero());
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t e = 0; e < v.extent; ++e) {
      for (int64_t i = 0; i < v.inner; ++i) {
        V &acc = out[static_cast<size_t>(o * v.inner + i)];
        const V value = x[static_cast<size_t>((o * v.extent + e) * v.inner + i)];
        acc = is_max ? arith.max(acc, value) : arith.add(acc, value);
      }
    }
  }
  return out;
}

// x / sqrt(mean(x²) + eps) over the trailing n_normalized dims, times weight when given.
template <class A, class V = typename A::Value>
Buffer<V> rms_norm(const A &arith, const Buffer<V> &x, const Dims &dims, size_t n_normalized, double eps,
                   const Buffer<V> *weight) {
  const int64_t cols = num_elements(Dims(dims.end() - static_cast<ptrdiff_t>(n_normalized), dims.end()));
  const int64_t rows = num_elements(dims) / cols;
  const V count = arith.constant(static_cast<double>(cols));
  Buffer<V> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const V *row = x.data() + r * cols;
    V sum_squares = arith.zero();
    for (int64_t c = 0; c < cols; ++c) sum_squares = arith.add(sum_squares, arith.mul(row[c], row[c]));
    const V rms = arith.sqrt(arith.add(arith.div(sum_squares, count), arith.constant(eps)));
    for (int64_t c = 0; c < cols; ++c) {
      V y = arith.div(row[c], rms);
      if (weight) y = arith.mul(y, (*weight)[static_cast<size_t>(c)]);
      out[static_cast<size_t>(r * cols + c)] = y;
    }
  }
  return out;
}

template <class V>
Buffer<V> concat(const Buffer<V> &a, const Dims &a_dims, const Buffer<V> &b, const Dims &b_dims, int dim) {
  const AxisView va = axis_view(a_dims, static_cast<size_t>(dim)), vb = axis_view(b_dims, static_cast<size_t>(dim));
  Buffer<V> out;
  out.reserve(a.size() + b.size());
  for (int64_t o = 0; o < va.outer; ++o) {
    const auto a_row = a.begin() + o * va.extent * va.inner;
    const auto b_row = b.begin() + o * vb.extent * vb.inner;
    out.insert(out.end(), a_row, a_row + va.extent * va.inner);
    out.insert(out.end(), b_row, b_row + vb.extent * vb.inner);
  }
  return out;
}

// Output dim i is x's dim order[i]: out walks x with x's strides taken in that order.
template <class V>
Buffer<V> permute(const Buffer<V> &x, const Dims &dims, const Dims &order) {
  const Dims x_strides = row_major_strides(dims);
  Dims out_dims(order.size()), strides(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    out_dims[i] = dims[static_cast<size_t>(order[i])];
    strides[i] = x_strides[static_cast<size_t>(order[i])];
  }
  Buffer<V> out(x.size());
  for_each_broadcast(out_dims, strides, strides, [&](int64_t i, int64_t from, int64_t) {
    out[static_cast<size_t>(i)] = x[static_cast<size_t>(from)];
  });
  return out;
}

template <class V>
std::vector<Buffer<V>> split(const Buffer<V> &x, const Dims &dims, int dim, const Dims &sizes) {
  const AxisView v = axis_view(dims, static_cast<size_t>(dim));
  std::vector<Buffer<V>> parts(sizes.size());
  for (int64_t o = 0; o < v.outer; ++o) {
    int64_t start = 0;
    for (size_t p = 0; p < sizes.size(); ++p) {
      const auto first = x.begin() + (o * v.extent + start) * v.inner;
      parts[p].insert(parts[p].end(), first, first + sizes[p] * v.inner);
      start += sizes[p];
    }
  }
  return parts;
}

// Calls visit(tile_offset, tensor_offset, length) for each run of the tile of `tile_dims` at
// `offsets` in a row-major tensor of `dims` along its last dim: the tile's rows, copied whole.
template <class Visit>
void for_each_tile_row(const Dims &dims, const Dims &offsets, const Dims &tile_dims, Visit visit) {
  const Dims strides = row_major_strides(dims);
  int64_t base = 0;
  for (size_t d = 0; d < dims.size(); ++d) base += offsets[d] * strides[d];
  if (dims.empty()) {
    visit(int64_t{0}, base, int64_t{1});
    return;
  }
  const int64_t length = tile_dims.back();
  const Dims rows(tile_dims.begin(), tile_dims.end() - 1), row_strides(strides.begin(), strides.end() - 1);
  for_each_broadcast(rows, row_strides, row_strides,
                     [&](int64_t r, int64_t offset, int64_t) { visit(r * length, base + offset, length); });
}

// Copies the tile of `tile_dims` starting at `offsets` out of a tensor of `dims`.
template <class V>
Buffer<V> read_tile(const Buffer<V> &x, const Dims &dims, const Dims &offsets, const Dims &tile_dims) {
  Buffer<V> tile(static_cast<size_t>(num_elements(tile_dims)));
  for_each_tile_row(dims, offsets, tile_dims, [&](int64_t at, int64_t from, int64_t length) {
    std::copy_n(x.begin() + from, length, tile.begin() + at);
  });
  return tile;
}

// Writes `tile` of `tile_dims` into a tensor of `dims` starting at `offsets`.
template <class V>
void write_tile(Buffer<V> &x, const Dims &dims, const Dims &offsets, const Buffer<V> &tile, const Dims &tile_dims) {
  for_each_tile_row(dims, offsets, tile_dims, [&](int64_t from, int64_t at, int64_t length) {
    std::copy_n(tile.begin() + from, length, x.begin() + at);
  });
}

}  // namespace yirage::reference
