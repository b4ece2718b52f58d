// yirage.h: thread-block graphs (µGraphs) and customized operators.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "capi/builders.hpp"

using yirage::OpKind;
using yirage::TensorId;
using yirage::capi::build_tensor;
using yirage::capi::checked_holder;
using yirage::capi::guard;
using yirage::capi::require_non_null;
using yirage::capi::tensor_id;
namespace capi = yirage::capi;

namespace {

// The size of the options struct in ABI 1.0; callers must pass at least this much.
constexpr size_t kOptionsSizeV1 = offsetof(yirage_block_graph_options, max_threads_per_block) + sizeof(int64_t);

yirage::GridMap grid_map_from(const char *function, const char *name, const int32_t *map) {
  require_non_null(function, name, map);
  return {map[0], map[1], map[2]};
}

}  // namespace

extern "C" {

void yirage_block_graph_options_init(yirage_block_graph_options *options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->grid[0] = options->grid[1] = options->grid[2] = 1;
  options->block_threads = 128;
  options->forloop_range = 1;
}

yirage_status yirage_block_graph_create(const yirage_block_graph_options *options,
                                        yirage_block_graph **out_block_graph) {
  const char *function = "yirage_block_graph_create";
  return guard([&] {
    require_non_null(function, "options", options);
    require_non_null(function, "out_block_graph", out_block_graph);
    if (options->struct_size < kOptionsSizeV1) {
      yirage::invalid_argument(std::string(function) + ": options->struct_size " +
                               std::to_string(options->struct_size) + " is smaller than " +
                               std::to_string(kOptionsSizeV1) + " (initialize with yirage_block_graph_options_init)");
    }
    yirage::BlockGraphConfig config;
    config.grid = {options->grid[0], options->grid[1], options->grid[2]};
    config.block_threads = options->block_threads;
    config.forloop_range = options->forloop_range;
    config.shared_memory_limit = options->shared_memory_limit;
    config.max_threads_per_block = options->max_threads_per_block;
    auto bg = std::make_unique<yirage_block_graph_s>(config);
    capi::register_handle(bg.get(), capi::HandleKind::kBlockGraph);
    *out_block_graph = bg.release();
  });
}

void yirage_block_graph_release(yirage_block_graph *block_graph) {
  capi::release_holder(block_graph);
}

yirage_status yirage_block_graph_new_input(yirage_block_graph *block_graph, const yirage_tensor *dtensor,
                                           const int32_t *imap, int32_t fmap, yirage_tensor **out_tensor) {
  const char *function = "yirage_block_graph_new_input";
  return build_tensor(function, block_graph, out_tensor, [&](yirage_block_graph_s &bg) {
    const yirage_tensor_s &t = capi::checked_tensor(function, "dtensor", dtensor);
    if (!capi::is_live(t.owner, capi::HandleKind::kGraph)) {
      yirage::invalid_argument(std::string(function) + ": dtensor must be a tensor of a kernel graph");
    }
    const auto *source = static_cast<const yirage_graph_s *>(t.owner);
    if (bg.source != nullptr && bg.source != source) {
      yirage::invalid_argument(std::string(function) +
                               ": dtensor belongs to another kernel graph than the block "
                               "graph's earlier inputs");
    }
    const yirage::Tensor &d = t.graph->tensor(t.id);
    // One entry per iterator: drop any left by a build that was rolled back after this line.
    bg.inputs.resize(bg.graph.inputs().size());
    bg.inputs.reserve(bg.inputs.size() + 1);  // so the push_back below cannot throw
    const TensorId id = bg.graph.new_input(d.dims, d.dtype, grid_map_from(function, "imap", imap), fmap);
    bg.inputs.push_back(&t);
    bg.source = source;
    return id;
  });
}

yirage_status yirage_block_graph_matmul(yirage_block_graph *g, yirage_tensor *a, yirage_tensor *b,
                                        yirage_tensor **out) {
  return capi::matmul("yirage_block_graph_matmul", g, a, b, out);
}
yirage_status yirage_block_graph_exp(yirage_block_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_block_graph_exp", OpKind::kExp, g, x, out);
}
yirage_status yirage_block_graph_silu(yirage_block_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_block_graph_silu", OpKind::kSilu, g, x, out);
}
yirage_status yirage_block_graph_gelu(yirage_block_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_block_graph_gelu", OpKind::kGelu, g, x, out);
}
yirage_status yirage_block_graph_relu(yirage_block_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_block_graph_relu", OpKind::kRelu, g, x, out);
}
yirage_status yirage_block_graph_sqrt(yirage_block_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_block_graph_sqrt", OpKind::kSqrt, g, x, out);
}
yirage_status yirage_block_graph_square(yirage_block_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_block_graph_square", OpKind::kSquare, g, x, out);
}
yirage_status yirage_block_graph_sigmoid(yirage_block_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_block_graph_sigmoid", OpKind::kSigmoid, g, x, out);
}
yirage_status yirage_block_graph_log(yirage_block_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_block_graph_log", OpKind::kLog, g, x, out);
}
yirage_status yirage_block_graph_neg(yirage_block_graph *g, yirage_tensor *x, yirage_tensor **out) {
  return capi::unary("yirage_block_graph_neg", OpKind::kNeg, g, x, out);
}
yirage_status yirage_block_graph_clamp(yirage_block_graph *g, yirage_tensor *x, double lo, double hi,
                                       yirage_tensor **out) {
  return capi::clamp("yirage_block_graph_clamp", g, x, lo, hi, out);
}
yirage_status yirage_block_graph_mul_scalar(yirage_block_graph *g, yirage_tensor *x, double scalar,
                                            yirage_tensor **out) {
  return capi::mul_scalar("yirage_block_graph_mul_scalar", g, x, scalar, out);
}
yirage_status yirage_block_graph_add(yirage_block_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_block_graph_add", OpKind::kAdd, g, a, b, out);
}
yirage_status yirage_block_graph_sub(yirage_block_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_block_graph_sub", OpKind::kSub, g, a, b, out);
}
yirage_status yirage_block_graph_mul(yirage_block_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_block_graph_mul", OpKind::kMul, g, a, b, out);
}
yirage_status yirage_block_graph_div(yirage_block_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_block_graph_div", OpKind::kDiv, g, a, b, out);
}
yirage_status yirage_block_graph_pow(yirage_block_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_block_graph_pow", OpKind::kPow, g, a, b, out);
}
yirage_status yirage_block_graph_max(yirage_block_graph *g, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return capi::binary("yirage_block_graph_max", OpKind::kMax, g, a, b, out);
}
yirage_status yirage_block_graph_reduction(yirage_block_graph *g, yirage_tensor *x, int32_t dim, yirage_tensor **out) {
  return capi::reduction("yirage_block_graph_reduction", OpKind::kReduction, g, x, dim, out);
}
yirage_status yirage_block_graph_reduction_max(yirage_block_graph *g, yirage_tensor *x, int32_t dim,
                                               yirage_tensor **out) {
  return capi::reduction("yirage_block_graph_reduction_max", OpKind::kReductionMax, g, x, dim, out);
}
yirage_status yirage_block_graph_rms_norm(yirage_block_graph *g, yirage_tensor *x, size_t n_normalized,
                                          const int64_t *normalized_shape, double eps, yirage_tensor *weight,
                                          yirage_tensor **out) {
  return capi::rms_norm("yirage_block_graph_rms_norm", g, x, n_normalized, normalized_shape, eps, weight, out);
}
yirage_status yirage_block_graph_concat(yirage_block_graph *g, yirage_tensor *a, yirage_tensor *b, int32_t dim,
                                        yirage_tensor **out) {
  return capi::concat("yirage_block_graph_concat", g, a, b, dim, out);
}

yirage_status yirage_block_graph_accumulate(yirage_block_graph *block_graph, yirage_tensor *x, yirage_accumulator kind,
                                            yirage_tensor **out_tensor) {
  const char *function = "yirage_block_graph_accumulate";
  return build_tensor(function, block_graph, out_tensor, [&](yirage_block_graph_s &bg) {
    const TensorId x_id = tensor_id(function, "X", &bg, x);
    const auto value = static_cast<int32_t>(kind);
    if (value < YIRAGE_ACCUM_SUM || value > YIRAGE_ACCUM_MAX) {
      yirage::invalid_argument(std::string(function) + ": kind " + std::to_string(value) +
                               " is not a yirage_accumulator");
    }
    // yirage_accumulator values 1..5 are OpKind kAccumSum..kAccumMax in order.
    const auto op = static_cast<OpKind>(static_cast<int32_t>(OpKind::kAccumSum) + value - 1);
    return bg.graph.accumulate(op, x_id);
  });
}

yirage_status yirage_block_graph_accumulate_to_dimx(yirage_block_graph *block_graph, yirage_tensor *x, int64_t dimx,
                                                    yirage_tensor **out_tensor) {
  const char *function = "yirage_block_graph_accumulate_to_dimx";
  return build_tensor(function, block_graph, out_tensor, [&](yirage_block_graph_s &bg) {
    return bg.graph.accumulate_to_dimx(tensor_id(function, "X", &bg, x), dimx);
  });
}

yirage_status yirage_block_graph_accumulate_rescale(yirage_block_graph *block_graph, yirage_tensor *x, yirage_tensor *m,
                                                    yirage_tensor **out_tensor) {
  const char *function = "yirage_block_graph_accumulate_rescale";
  return build_tensor(function, block_graph, out_tensor, [&](yirage_block_graph_s &bg) {
    return bg.graph.accumulate_rescale(tensor_id(function, "X", &bg, x), tensor_id(function, "M", &bg, m));
  });
}

yirage_status yirage_block_graph_new_output(yirage_block_graph *block_graph, yirage_tensor *s, const int32_t *omap,
                                            int32_t forloop_dim) {
  const char *function = "yirage_block_graph_new_output";
  return guard([&] {
    yirage_block_graph_s &bg = checked_holder(function, block_graph);
    bg.graph.new_output(tensor_id(function, "S", &bg, s), grid_map_from(function, "omap", omap), forloop_dim);
  });
}

yirage_status yirage_block_graph_new_output_as(yirage_block_graph *block_graph, yirage_tensor *s, const int32_t *omap,
                                               int32_t forloop_dim, yirage_dtype dtype) {
  const char *function = "yirage_block_graph_new_output_as";
  return guard([&] {
    yirage_block_graph_s &bg = checked_holder(function, block_graph);
    bg.graph.new_output(tensor_id(function, "S", &bg, s), grid_map_from(function, "omap", omap), forloop_dim,
                        static_cast<yirage::DType>(dtype));
  });
}

yirage_status yirage_block_graph_num_outputs(const yirage_block_graph *block_graph, size_t *out_count) {
  const char *function = "yirage_block_graph_num_outputs";
  return guard([&] {
    const yirage_block_graph_s &bg = checked_holder(function, block_graph);
    require_non_null(function, "out_count", out_count);
    *out_count = bg.graph.outputs().size();
  });
}

yirage_status yirage_block_graph_shared_memory_bytes(const yirage_block_graph *block_graph, int64_t *out_bytes) {
  const char *function = "yirage_block_graph_shared_memory_bytes";
  return guard([&] {
    const yirage_block_graph_s &bg = checked_holder(function, block_graph);
    require_non_null(function, "out_bytes", out_bytes);
    *out_bytes = bg.graph.shared_memory_bytes();
  });
}

yirage_status yirage_graph_customized(yirage_graph *graph, const yirage_block_graph *block_graph,
                                      yirage_tensor **out_outputs) {
  const char *function = "yirage_graph_customized";
  return capi::build_tensors(function, graph, out_outputs, [&](yirage_graph_s &g) {
    const yirage_block_graph_s &bg = checked_holder(function, block_graph);
    std::vector<TensorId> inputs;
    for (size_t i = 0; i < bg.graph.inputs().size(); ++i) {
      const yirage_tensor_s *t = bg.inputs[i];
      // The tensors the iterators read must still be live and belong to this graph.
      inputs.push_back(tensor_id(function, "a block graph input", &g, t));
    }
    return g.graph.customized(inputs, std::make_shared<const yirage::BlockGraph>(bg.graph));
  });
}

}  // extern "C"
