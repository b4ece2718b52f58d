// yirage.h: creating and releasing graphs, and the graph builders.
#include <optional>
#include <string>

#include "capi/handles.hpp"
#include "capi/status.hpp"

using yirage::DType;
using yirage::OpKind;
using yirage::TensorId;
using yirage::capi::checked_graph;
using yirage::capi::checked_tensor;
using yirage::capi::guard;
using yirage::capi::require_non_null;

namespace {

TensorId tensor_id(const char *function, const char *role, const yirage_graph_s &graph,
                   const yirage_tensor *tensor) {
  return checked_tensor(function, role, tensor, &graph).id;
}

// Runs `build` (graph → new tensor ids) with the checks every builder shares, creates handles
// for whatever it added, and stores the handles of the returned tensors in out[0..n).
template <class Build>
yirage_status build_tensors(const char *function, yirage_graph *graph, yirage_tensor **out,
                            Build build) {
  return guard([&] {
    yirage_graph_s &g = checked_graph(function, graph);
    require_non_null(function, "out_tensor", out);
    const auto checkpoint = g.graph.checkpoint();
    const std::vector<TensorId> ids = build(g);
    yirage::capi::adopt_new_tensors(g, checkpoint);
    for (size_t i = 0; i < ids.size(); ++i) out[i] = g.tensor_handles[ids[i]].get();
  });
}

template <class Build>
yirage_status build_tensor(const char *function, yirage_graph *graph, yirage_tensor **out,
                           Build build) {
  return build_tensors(function, graph, out,
                       [&](yirage_graph_s &g) { return std::vector<TensorId>{build(g)}; });
}

yirage_status unary(const char *function, OpKind kind, yirage_graph *graph, yirage_tensor *x,
                    yirage_tensor **out) {
  return build_tensor(function, graph, out, [&](yirage_graph_s &g) {
    return g.graph.unary(kind, tensor_id(function, "X", g, x));
  });
}

yirage_status binary(const char *function, OpKind kind, yirage_graph *graph, yirage_tensor *a,
                     yirage_tensor *b, yirage_tensor **out) {
  return build_tensor(function, graph, out, [&](yirage_graph_s &g) {
    return g.graph.binary(kind, tensor_id(function, "A", g, a), tensor_id(function, "B", g, b));
  });
}

yirage_status reduction(const char *function, OpKind kind, yirage_graph *graph, yirage_tensor *x,
                        int32_t dim, yirage_tensor **out) {
  return build_tensor(function, graph, out, [&](yirage_graph_s &g) {
    return g.graph.reduction(kind, tensor_id(function, "X", g, x), dim);
  });
}

yirage::Dims dims_from(const char *function, const char *name, size_t n, const int64_t *values) {
  if (n > 0) require_non_null(function, name, values);
  return yirage::Dims(values, values + n);
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
  if (graph == nullptr || !yirage::capi::is_live(graph, yirage::capi::HandleKind::kGraph)) return;
  for (const auto &handle : graph->tensor_handles) {
    yirage::capi::unregister_handle(handle.get());
  }
  yirage::capi::unregister_handle(graph);
  delete graph;
}

yirage_status yirage_graph_new_input(yirage_graph *graph, size_t ndim, const int64_t *dims,
                                     yirage_dtype dtype, yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_new_input";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    if (ndim > static_cast<size_t>(yirage::kMaxRank)) {  // before reading `dims`
      yirage::invalid_argument(std::string(function) + ": rank " + std::to_string(ndim) +
                               " is outside 1.." + std::to_string(yirage::kMaxRank));
    }
    return g.graph.new_input(dims_from(function, "dims", ndim, dims), static_cast<DType>(dtype));
  });
}

yirage_status yirage_graph_matmul(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b,
                                  yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_matmul";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    return g.graph.matmul(tensor_id(function, "A", g, a), tensor_id(function, "B", g, b));
  });
}

yirage_status yirage_graph_exp(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return unary("yirage_graph_exp", OpKind::kExp, g, x, out);
}
yirage_status yirage_graph_silu(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return unary("yirage_graph_silu", OpKind::kSilu, g, x, out);
}
yirage_status yirage_graph_gelu(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return unary("yirage_graph_gelu", OpKind::kGelu, g, x, out);
}
yirage_status yirage_graph_relu(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return unary("yirage_graph_relu", OpKind::kRelu, g, x, out);
}
yirage_status yirage_graph_sqrt(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return unary("yirage_graph_sqrt", OpKind::kSqrt, g, x, out);
}
yirage_status yirage_graph_square(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return unary("yirage_graph_square", OpKind::kSquare, g, x, out);
}
yirage_status yirage_graph_sigmoid(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return unary("yirage_graph_sigmoid", OpKind::kSigmoid, g, x, out);
}
yirage_status yirage_graph_log(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return unary("yirage_graph_log", OpKind::kLog, g, x, out);
}
yirage_status yirage_graph_neg(yirage_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return unary("yirage_graph_neg", OpKind::kNeg, g, x, out);
}

yirage_status yirage_graph_clamp(yirage_graph *graph, yirage_tensor *x, double lo, double hi,
                                 yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_clamp";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    return g.graph.clamp(tensor_id(function, "X", g, x), lo, hi);
  });
}

yirage_status yirage_graph_mul_scalar(yirage_graph *graph, yirage_tensor *x, double scalar,
                                      yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_mul_scalar";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    return g.graph.mul_scalar(tensor_id(function, "X", g, x), scalar);
  });
}

yirage_status yirage_graph_add(yirage_graph *g, yirage_tensor *a, yirage_tensor *b,
                               yirage_tensor **out) {
  return binary("yirage_graph_add", OpKind::kAdd, g, a, b, out);
}
yirage_status yirage_graph_sub(yirage_graph *g, yirage_tensor *a, yirage_tensor *b,
                               yirage_tensor **out) {
  return binary("yirage_graph_sub", OpKind::kSub, g, a, b, out);
}
yirage_status yirage_graph_mul(yirage_graph *g, yirage_tensor *a, yirage_tensor *b,
                               yirage_tensor **out) {
  return binary("yirage_graph_mul", OpKind::kMul, g, a, b, out);
}
yirage_status yirage_graph_div(yirage_graph *g, yirage_tensor *a, yirage_tensor *b,
                               yirage_tensor **out) {
  return binary("yirage_graph_div", OpKind::kDiv, g, a, b, out);
}
yirage_status yirage_graph_pow(yirage_graph *g, yirage_tensor *a, yirage_tensor *b,
                               yirage_tensor **out) {
  return binary("yirage_graph_pow", OpKind::kPow, g, a, b, out);
}
yirage_status yirage_graph_max(yirage_graph *g, yirage_tensor *a, yirage_tensor *b,
                               yirage_tensor **out) {
  return binary("yirage_graph_max", OpKind::kMax, g, a, b, out);
}

yirage_status yirage_graph_reduction(yirage_graph *g, yirage_tensor *x, int32_t dim,
                                     yirage_tensor **out) {
  return reduction("yirage_graph_reduction", OpKind::kReduction, g, x, dim, out);
}
yirage_status yirage_graph_reduction_max(yirage_graph *g, yirage_tensor *x, int32_t dim,
                                         yirage_tensor **out) {
  return reduction("yirage_graph_reduction_max", OpKind::kReductionMax, g, x, dim, out);
}

yirage_status yirage_graph_rms_norm(yirage_graph *graph, yirage_tensor *x, size_t n_normalized,
                                    const int64_t *normalized_shape, double eps,
                                    yirage_tensor *weight, yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_rms_norm";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    const TensorId x_id = tensor_id(function, "X", g, x);
    std::optional<TensorId> weight_id;
    if (weight != nullptr) weight_id = tensor_id(function, "weight", g, weight);
    if (n_normalized > static_cast<size_t>(yirage::kMaxRank)) {
      yirage::invalid_argument(std::string(function) + ": n_normalized " +
                               std::to_string(n_normalized) + " exceeds the maximum rank");
    }
    return g.graph.rms_norm(x_id,
                            dims_from(function, "normalized_shape", n_normalized, normalized_shape),
                            eps, weight_id);
  });
}

yirage_status yirage_graph_softmax(yirage_graph *graph, yirage_tensor *x, int32_t dim,
                                   yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_softmax";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    return g.graph.softmax(tensor_id(function, "X", g, x), dim);
  });
}

yirage_status yirage_graph_concat(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b,
                                  int32_t dim, yirage_tensor **out_tensor) {
  const char *function = "yirage_graph_concat";
  return build_tensor(function, graph, out_tensor, [&](yirage_graph_s &g) {
    return g.graph.concat(tensor_id(function, "A", g, a), tensor_id(function, "B", g, b), dim);
  });
}

yirage_status yirage_graph_split(yirage_graph *graph, yirage_tensor *x, int32_t dim, size_t n_parts,
                                 const int64_t *sizes, yirage_tensor **out_parts) {
  const char *function = "yirage_graph_split";
  return build_tensors(function, graph, out_parts, [&](yirage_graph_s &g) {
    const TensorId x_id = tensor_id(function, "X", g, x);
    // Bound n_parts by the split dim's size before reading that many sizes from the caller.
    const yirage::Dims &dims = g.graph.tensor(x_id).dims;
    const int d = yirage::normalize_dim("split", dim, static_cast<int>(dims.size()));
    if (n_parts == 0 || static_cast<int64_t>(n_parts) > dims[static_cast<size_t>(d)]) {
      yirage::invalid_argument("split: X is " + yirage::to_string(dims) + ": n_parts " +
                               std::to_string(n_parts) + " must be between 1 and " +
                               std::to_string(dims[static_cast<size_t>(d)]) + " (dim " +
                               std::to_string(d) + ")");
    }
    return g.graph.split(x_id, dim, dims_from(function, "sizes", n_parts, sizes));
  });
}

yirage_status yirage_graph_chunk(yirage_graph *graph, yirage_tensor *x, size_t n_chunks,
                                 int32_t dim, yirage_tensor **out_parts) {
  const char *function = "yirage_graph_chunk";
  return build_tensors(function, graph, out_parts, [&](yirage_graph_s &g) {
    const TensorId x_id = tensor_id(function, "X", g, x);
    const yirage::Dims &dims = g.graph.tensor(x_id).dims;
    const int d = yirage::normalize_dim("chunk", dim, static_cast<int>(dims.size()));
    const int64_t extent = dims[static_cast<size_t>(d)];
    if (n_chunks == 0 || static_cast<int64_t>(n_chunks) > extent ||
        extent % static_cast<int64_t>(n_chunks) != 0) {
      yirage::invalid_argument("chunk: X is " + yirage::to_string(dims) + ": dim " +
                               std::to_string(d) + " of size " + std::to_string(extent) +
                               " cannot be split into " + std::to_string(n_chunks) +
                               " equal chunks");
    }
    return g.graph.split(x_id, d, yirage::Dims(n_chunks, extent / static_cast<int64_t>(n_chunks)));
  });
}

yirage_status yirage_graph_mark_output(yirage_graph *graph, yirage_tensor *x) {
  const char *function = "yirage_graph_mark_output";
  return guard([&] {
    yirage_graph_s &g = checked_graph(function, graph);
    g.graph.mark_output(tensor_id(function, "X", g, x));
  });
}

}  // extern "C"
