// yirage.h: read-only queries on graphs and tensors, and dtype helpers.
#include <string>

#include "capi/handles.hpp"
#include "capi/status.hpp"

using yirage::capi::checked_graph;
using yirage::capi::checked_tensor;
using yirage::capi::guard;
using yirage::capi::require_non_null;

namespace {

yirage_status count(const char *function, const yirage_graph *graph, size_t *out_count,
                    size_t (*read)(const yirage::KernelGraph &)) {
  return guard([&] {
    const yirage_graph_s &g = checked_graph(function, graph);
    require_non_null(function, "out_count", out_count);
    *out_count = read(g.graph);
  });
}

yirage_status nth(const char *function, const yirage_graph *graph, size_t index, yirage_tensor **out_tensor,
                  const std::vector<yirage::TensorId> &(*list)(const yirage::KernelGraph &)) {
  return guard([&] {
    const yirage_graph_s &g = checked_graph(function, graph);
    require_non_null(function, "out_tensor", out_tensor);
    const auto &ids = list(g.graph);
    if (index >= ids.size()) {
      yirage::invalid_argument(std::string(function) + ": index " + std::to_string(index) +
                               " is out of range (the graph has " + std::to_string(ids.size()) + ")");
    }
    *out_tensor = g.tensor_handles[static_cast<size_t>(ids[index])].get();
  });
}

const yirage::Tensor &tensor_of(const char *function, const yirage_tensor *tensor) {
  const yirage_tensor_s &t = checked_tensor(function, "tensor", tensor);
  return t.graph->tensor(t.id);
}

}  // namespace

extern "C" {

const char *yirage_dtype_name(yirage_dtype dtype) {
  if (!yirage::is_valid_dtype(dtype)) return "unknown";
  return yirage::dtype_name(static_cast<yirage::DType>(dtype));
}

size_t yirage_dtype_size(yirage_dtype dtype) {
  if (!yirage::is_valid_dtype(dtype)) return 0;
  return yirage::dtype_size(static_cast<yirage::DType>(dtype));
}

yirage_status yirage_tensor_get_ndim(const yirage_tensor *tensor, size_t *out_ndim) {
  return guard([&] {
    const yirage::Tensor &t = tensor_of("yirage_tensor_get_ndim", tensor);
    require_non_null("yirage_tensor_get_ndim", "out_ndim", out_ndim);
    *out_ndim = t.dims.size();
  });
}

yirage_status yirage_tensor_get_dims(const yirage_tensor *tensor, size_t capacity, int64_t *out_dims) {
  const char *function = "yirage_tensor_get_dims";
  return guard([&] {
    const yirage::Tensor &t = tensor_of(function, tensor);
    require_non_null(function, "out_dims", out_dims);
    if (capacity < t.dims.size()) {
      yirage::invalid_argument(std::string(function) + ": capacity " + std::to_string(capacity) +
                               " is less than the tensor's rank " + std::to_string(t.dims.size()));
    }
    for (size_t i = 0; i < t.dims.size(); ++i) out_dims[i] = t.dims[i];
  });
}

yirage_status yirage_tensor_get_dtype(const yirage_tensor *tensor, yirage_dtype *out_dtype) {
  return guard([&] {
    const yirage::Tensor &t = tensor_of("yirage_tensor_get_dtype", tensor);
    require_non_null("yirage_tensor_get_dtype", "out_dtype", out_dtype);
    *out_dtype = static_cast<yirage_dtype>(t.dtype);
  });
}

yirage_status yirage_tensor_get_graph(const yirage_tensor *tensor, yirage_graph **out_graph) {
  return guard([&] {
    const yirage_tensor_s &t = checked_tensor("yirage_tensor_get_graph", "tensor", tensor);
    require_non_null("yirage_tensor_get_graph", "out_graph", out_graph);
    if (!yirage::capi::is_live(t.owner, yirage::capi::HandleKind::kGraph)) {
      yirage::invalid_argument("yirage_tensor_get_graph: the tensor belongs to a block graph, not a kernel graph");
    }
    *out_graph = static_cast<yirage_graph *>(const_cast<void *>(t.owner));
  });
}

yirage_status yirage_graph_num_inputs(const yirage_graph *graph, size_t *out_count) {
  return count("yirage_graph_num_inputs", graph, out_count,
               [](const yirage::KernelGraph &g) { return g.inputs().size(); });
}

yirage_status yirage_graph_num_outputs(const yirage_graph *graph, size_t *out_count) {
  return count("yirage_graph_num_outputs", graph, out_count,
               [](const yirage::KernelGraph &g) { return g.outputs().size(); });
}

yirage_status yirage_graph_num_operators(const yirage_graph *graph, size_t *out_count) {
  return count("yirage_graph_num_operators", graph, out_count,
               [](const yirage::KernelGraph &g) { return g.operators().size(); });
}

yirage_status yirage_graph_get_input(const yirage_graph *graph, size_t index, yirage_tensor **out_tensor) {
  return nth("yirage_graph_get_input", graph, index, out_tensor,
             [](const yirage::KernelGraph &g) -> const std::vector<yirage::TensorId> & { return g.inputs(); });
}

yirage_status yirage_graph_get_output(const yirage_graph *graph, size_t index, yirage_tensor **out_tensor) {
  return nth("yirage_graph_get_output", graph, index, out_tensor,
             [](const yirage::KernelGraph &g) -> const std::vector<yirage::TensorId> & { return g.outputs(); });
}

}  // extern "C"
