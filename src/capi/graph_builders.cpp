// yirage.h: creating and releasing graphs, and the graph builders.
#include <optional>
#include <string>

#include "capi/builders.hpp"

using yirage::DType;
using yirage::OpKind;
using yirage::TensorId;
using yirage::capi::build_tensor;
using yirage::capi::build_tensors;
using yirage::capi::checked_graph;
using yirage::capi::dims_from;
using yirage::capi::guard;
using yirage::capi::require_non_null;
using yirage::capi::tensor_id;
namespace capi = yirage::capi;

namespace {

// `ndim` dims from the caller, checked against kMaxRank before any is read.
yirage::Dims view_dims(const char *function, size_t ndim, const int64_t *dims) {
  if (ndim > static_cast<size_t>(yirage::kMaxRank)) {
    yirage::invalid_argument(std::string(function) + ": ndim " + std::to_string(ndim) + " is outside 1.." +
                             std::to_string(yirage::kMaxRank));
  }
  return dims_from(function, "dims", ndim, dims);
}

}  // namespace

extern "C" {

yirage_status yirage_graph_create(yirage_graph **out_graph) {
  return guard([&] {
    require_non_null("yirage_graph_create", "out_graph", out_graph);
    auto graph = std::make_unique<yirage_graph_s>();
    yirage::capi::register_handle(graph.get(), yirage::capi::HandleKind::kGraph);
    *out_graph = graph.release();
  });
}

void yirage_graph_release(yirage_graph *graph) {
  capi::release_holder(graph);
}

yirage_status yirage_graph_new_input(yirage_graph *graph, size_t ndim, const int64_t *dims, yirage_dtype dtype,
                                     yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_new_input";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    if (ndim > static_cast<size_t>(yirage::kMaxRank)) {  // before reading `dims`
      yirage::invalid_argument(std::string(function) + ": rank " + std::to_string(ndim) + " is outside 1.." +
                               std::to_string(yirage::kMaxRank));
    }
    return g.graph.new_input(dims_from(function, "dims", ndim, dims), static_cast<DType>(dtype));
  });
}

yirage_status yirage_graph_matmul(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out_tensor) {
  return capi::matmul("yirage_graph_matmul", graph, a, b, out_tensor);
}

yirage_status yirage_graph_exp(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_graph_exp", OpKind::kExp, g, x, out);
}
yirage_status yirage_graph_silu(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_graph_silu", OpKind::kSilu, g, x, out);
}
yirage_status yirage_graph_gelu(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_graph_gelu", OpKind::kGelu, g, x, out);
}
yirage_status yirage_graph_relu(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_graph_relu", OpKind::kRelu, g, x, out);
}
yirage_status yirage_graph_sqrt(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_graph_sqrt", OpKind::kSqrt, g, x, out);
}
yirage_status yirage_graph_square(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_graph_square", OpKind::kSquare, g, x, out);
}
yirage_status yirage_graph_sigmoid(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_graph_sigmoid", OpKind::kSigmoid, g, x, out);
}
yirage_status yirage_graph_log(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_graph_log", OpKind::kLog, g, x, out);
}
yirage_status yirage_graph_neg(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_graph_neg", OpKind::kNeg, g, x, out);
}

yirage_status yirage_graph_clamp(yirage_graph *graph, yirage_tensor *x, double lo, double hi,
                                 yirage_tensor **out_tensor) {
  return capi::clamp("yirage_graph_clamp", graph, x, lo, hi, out_tensor);
}

yirage_status yirage_graph_mul_scalar(yirage_graph *graph, yirage_tensor *x, double scalar,
                                      yirage_tensor **out_tensor) {
  return capi::mul_scalar("yirage_graph_mul_scalar", graph, x, scalar, out_tensor);
}

yirage_status yirage_graph_add(yirage_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_graph_add", OpKind::kAdd, g, a, b, out);
}
yirage_status yirage_graph_sub(yirage_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_graph_sub", OpKind::kSub, g, a, b, out);
}
yirage_status yirage_graph_mul(yirage_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_graph_mul", OpKind::kMul, g, a, b, out);
}
yirage_status yirage_graph_div(yirage_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_graph_div", OpKind::kDiv, g, a, b, out);
}
yirage_status yirage_graph_pow(yirage_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_graph_pow", OpKind::kPow, g, a, b, out);
}
yirage_status yirage_graph_max(yirage_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_graph_max", OpKind::kMax, g, a, b, out);
}

yirage_status yirage_graph_reduction(yirage_graph *g, yirage_tensor *x, int32_t dim, yirage_tensor **out) {
  return capi::reduction("yirage_graph_reduction", OpKind::kReduction, g, x, dim, out);
}
yirage_status yirage_graph_reduction_max(yirage_graph *g, yirage_tensor *x, int32_t dim, yirage_tensor **out) {
  return capi::reduction("yirage_graph_reduction_max", OpKind::kReductionMax, g, x, dim, out);
}

yirage_status yirage_graph_rms_norm(yirage_graph *graph, yirage_tensor *x, size_t n_normalized,
                                    const int64_t *normalized_shape, double eps, yirage_tensor *weight,
                                    yirage_tensor **out_tensor) {
  return capi::rms_norm("yirage_graph_rms_norm", graph, x, n_normalized, normalized_shape, eps, weight, out_tensor);
}

yirage_status yirage_graph_softmax(yirage_graph *graph, yirage_tensor *x, int32_t dim, yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_softmax";
  return build_tensor(function, graph, out_tensor,
                      [&](yirage_graph_s &g) { return g.graph.softmax(tensor_id(function, "X", &g, x), dim); });
}

yirage_status yirage_graph_concat(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b, int32_t dim,
                                  yirage_tensor **out_tensor) {
  return capi::concat("yirage_graph_concat", graph, a, b, dim, out_tensor);
}

yirage_status yirage_graph_split(yirage_graph *graph, yirage_tensor *x, int32_t dim, size_t n_parts,
                                 const int64_t *sizes, yirage_tensor **out_parts) {
  const char *function = "yirage_graph_split";
  return build_tensors(function, graph, out_parts, [&](yirage_graph_s &g) {
    const TensorId x_id = tensor_id(function, "X", &g, x);
    // Bound n_parts by the split dim's size before reading that many sizes from the caller.
    const yirage::Dims &dims = g.graph.tensor(x_id).dims;
    const int d = yirage::normalize_dim("split", dim, static_cast<int>(dims.size()));
    if (n_parts == 0 || static_cast<int64_t>(n_parts) > dims[static_cast<size_t>(d)]) {
      yirage::invalid_argument("split: X is " + yirage::to_string(dims) + ": n_parts " + std::to_string(n_parts) +
                               " must be between 1 and " + std::to_string(dims[static_cast<size_t>(d)]) + " (dim " +
                               std::to_string(d) + ")");
    }
    return g.graph.split(x_id, dim, dims_from(function, "sizes", n_parts, sizes));
  });
}

yirage_status yirage_graph_chunk(yirage_graph *graph, yirage_tensor *x, size_t n_chunks, int32_t dim,
                                 yirage_tensor **out_parts) {
  const char *function = "yirage_graph_chunk";
  return build_tensors(function, graph, out_parts, [&](yirage_graph_s &g) {
    const TensorId x_id = tensor_id(function, "X", &g, x);
    const yirage::Dims &dims = g.graph.tensor(x_id).dims;
    const int d = yirage::normalize_dim("chunk", dim, static_cast<int>(dims.size()));
    const int64_t extent = dims[static_cast<size_t>(d)];
    if (n_chunks == 0 || n_chunks > static_cast<uint64_t>(extent) || extent % static_cast<int64_t>(n_chunks) != 0) {
      yirage::invalid_argument("chunk: X is " + yirage::to_string(dims) + ": dim " + std::to_string(d) + " of size " +
                               std::to_string(extent) + " cannot be split into " + std::to_string(n_chunks) +
                               " equal chunks");
    }
    return g.graph.split(x_id, d, yirage::Dims(n_chunks, extent / static_cast<int64_t>(n_chunks)));
  });
}

yirage_status yirage_graph_reshape(yirage_graph *graph, yirage_tensor *x, size_t ndim, const int64_t *dims,
                                   yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_reshape";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    return g.graph.reshape(tensor_id(function, "X", &g, x), view_dims(function, ndim, dims));
  });
}

yirage_status yirage_graph_permute(yirage_graph *graph, yirage_tensor *x, size_t ndim, const int64_t *dims,
                                   yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_permute";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    return g.graph.permute(tensor_id(function, "X", &g, x), view_dims(function, ndim, dims));
  });
}

yirage_status yirage_graph_transpose(yirage_graph *graph, yirage_tensor *x, int32_t dim0, int32_t dim1,
                                     yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_transpose";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    return g.graph.transpose(tensor_id(function, "X", &g, x), dim0, dim1);
  });
}

yirage_status yirage_graph_mark_output(yirage_graph *graph, yirage_tensor *x) {
  const char *function = "yirage_graph_mark_output";
  return guard([&] {
    yirage_graph_s &g = checked_graph(function, graph);
    g.graph.mark_output(tensor_id(function, "X", &g, x));
  });
}

}  // extern "C"
