#include "reference/operators.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace yirage::reference {

namespace {

// Row-major strides of `dims`, with 0 for size-1 dims so that they broadcast against `out`.
Dims broadcast_strides(const Dims &dims) {
  Dims strides = row_major_strides(dims);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) strides[i] = 0;
  }
  return strides;
}

// Splits dims around `dim` into (outer, extent, inner) element counts.
struct AxisView {
  int64_t outer, extent, inner;
};

AxisView axis_view(const Dims &dims, int dim) {
  const auto d = static_cast<size_t>(dim);
  return {num_elements(Dims(dims.begin(), dims.begin() + dim)), dims[d],
          num_elements(Dims(dims.begin() + dim + 1, dims.end()))};
}

// Calls visit(out_index, offset_a, offset_b) for every element of out_dims in row-major order,
// with offsets into operands of the given (broadcast) strides.
template <class Visit>
void for_each_broadcast(const Dims &out_dims, const Dims &a_strides, const Dims &b_strides,
                        Visit visit) {
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

double gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

}  // namespace

double apply_unary(OpKind kind, const OpAttributes &attributes, double x) {
  switch (kind) {
    case OpKind::kExp: return std::exp(x);
    case OpKind::kSilu: return x * sigmoid(x);
    case OpKind::kGelu: return gelu(x);
    case OpKind::kRelu: return x > 0 ? x : (std::isnan(x) ? x : 0.0);
    case OpKind::kSqrt: return std::sqrt(x);
    case OpKind::kSquare: return x * x;
    case OpKind::kSigmoid: return sigmoid(x);
    case OpKind::kLog: return std::log(x);
    case OpKind::kNeg: return -x;
    case OpKind::kClamp:
      return std::isnan(x) ? x : std::min(std::max(x, attributes.lo), attributes.hi);
    case OpKind::kMulScalar: return x * attributes.scalar;
    default: break;
  }
  throw Error(ErrorCode::kInternal, std::string("reference: not a unary op: ") + op_name(kind));
}

double apply_binary(OpKind kind, double a, double b) {
  switch (kind) {
    case OpKind::kAdd: return a + b;
    case OpKind::kSub: return a - b;
    case OpKind::kMul: return a * b;
    case OpKind::kDiv: return a / b;
    case OpKind::kPow: return std::pow(a, b);
    case OpKind::kMax: return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b);
    default: break;
  }
  throw Error(ErrorCode::kInternal, std::string("reference: not a binary op: ") + op_name(kind));
}

Values broadcast_binary(OpKind kind, const Values &a, const Dims &a_dims, const Values &b,
                        const Dims &b_dims, const Dims &out_dims) {
  Values out(static_cast<size_t>(num_elements(out_dims)));
  for_each_broadcast(out_dims, broadcast_strides(a_dims), broadcast_strides(b_dims),
                     [&](int64_t i, int64_t ia, int64_t ib) {
                       out[static_cast<size_t>(i)] = apply_binary(kind, a[static_cast<size_t>(ia)],
                                                                  b[static_cast<size_t>(ib)]);
                     });
  return out;
}

Values matmul(const Values &a, const Dims &a_dims, const Values &b, const Dims &b_dims,
              const Dims &out_dims) {
  const size_t rank = out_dims.size();
  const int64_t m = a_dims[rank - 2], k = a_dims[rank - 1], n = b_dims[rank - 1];
  // Iterate the batch dims as a broadcast over matrices: batch strides in units of matrices.
  const Dims batch_out(out_dims.begin(), out_dims.end() - 2);
  const Dims batch_a(a_dims.begin(), a_dims.end() - 2);
  const Dims batch_b(b_dims.begin(), b_dims.end() - 2);
  Values out(static_cast<size_t>(num_elements(out_dims)), 0.0);
  for_each_broadcast(batch_out, broadcast_strides(batch_a), broadcast_strides(batch_b),
                     [&](int64_t batch, int64_t batch_a_index, int64_t batch_b_index) {
                       const double *pa = a.data() + batch_a_index * m * k;
                       const double *pb = b.data() + batch_b_index * k * n;
                       double *po = out.data() + batch * m * n;
                       for (int64_t i = 0; i < m; ++i) {
                         for (int64_t p = 0; p < k;
                              ++p) {  // i-p-j order keeps the inner loop contiguous
                           const double a_ip = pa[i * k + p];
                           for (int64_t j = 0; j < n; ++j) po[i * n + j] += a_ip * pb[p * n + j];
                         }
                       }
                     });
  return out;
}

Values reduce(OpKind kind, const Values &x, const Dims &dims, int dim) {
  const AxisView v = axis_view(dims, dim);
  const bool is_max = kind == OpKind::kReductionMax;
  Values out(static_cast<size_t>(v.outer * v.inner), is_max ? -INFINITY : 0.0);
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t e = 0; e < v.extent; ++e) {
      for (int64_t i = 0; i < v.inner; ++i) {
        double &acc = out[static_cast<size_t>(o * v.inner + i)];
        const double value = x[static_cast<size_t>((o * v.extent + e) * v.inner + i)];
        acc = is_max ? apply_binary(OpKind::kMax, acc, value) : acc + value;
      }
    }
  }
  return out;
}

Values rms_norm(const Values &x, const Dims &dims, size_t n_normalized, double eps,
                const Values *weight) {
  const int64_t cols =
      num_elements(Dims(dims.end() - static_cast<ptrdiff_t>(n_normalized), dims.end()));
  const int64_t rows = num_elements(dims) / cols;
  Values out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data() + r * cols;
    double sum_squares = 0;
    for (int64_t c = 0; c < cols; ++c) sum_squares += row[c] * row[c];
    const double scale = 1.0 / std::sqrt(sum_squares / static_cast<double>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c) {
      const double w = weight ? (*weight)[static_cast<size_t>(c)] : 1.0;
      out[static_cast<size_t>(r * cols + c)] = row[c] * scale * w;
    }
  }
  return out;
}

Values concat(const Values &a, const Dims &a_dims, const Values &b, const Dims &b_dims, int dim) {
  const AxisView va = axis_view(a_dims, dim), vb = axis_view(b_dims, dim);
  Values out;
  out.reserve(a.size() + b.size());
  for (int64_t o = 0; o < va.outer; ++o) {
    const auto a_row = a.begin() + o * va.extent * va.inner;
    const auto b_row = b.begin() + o * vb.extent * vb.inner;
    out.insert(out.end(), a_row, a_row + va.extent * va.inner);
    out.insert(out.end(), b_row, b_row + vb.extent * vb.inner);
  }
  return out;
}

std::vector<Values> split(const Values &x, const Dims &dims, int dim, const Dims &sizes) {
  const AxisView v = axis_view(dims, dim);
  std::vector<Values> parts(sizes.size());
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

}  // namespace yirage::reference
