// The plumbing every graph-builder entry point shares, for kernel graphs and block graphs alike:
// handle checks, running the build, creating handles for the new tensors, and the out-params.
#pragma once

#include <string>
#include <vector>

#include "capi/handles.hpp"
#include "capi/status.hpp"

namespace yirage::capi {

inline TensorId tensor_id(const char *function, const char *role, const void *owner, const yirage_tensor *tensor) {
  return checked_tensor(function, role, tensor, owner).id;
}

// Runs `build` (holder → new tensor ids) with the checks every builder shares, creates handles
// for whatever it added, and stores the handles of the returned tensors in out[0..n).
template <class Holder, class Build>
yirage_status build_tensors(const char *function, Holder *handle, yirage_tensor **out, Build build) {
  return guard([&] {
    Holder &h = checked_holder(function, handle);
    require_non_null(function, "out_tensor", out);
    const auto checkpoint = h.graph.checkpoint();
    const std::vector<TensorId> ids = build(h);
    adopt_new_tensors(h, checkpoint);
    for (size_t i = 0; i < ids.size(); ++i) out[i] = h.tensor_handles[ids[i]].get();
  });
}

template <class Holder, class Build>
yirage_status build_tensor(const char *function, Holder *handle, yirage_tensor **out, Build build) {
  return build_tensors(function, handle, out, [&](Holder &h) { return std::vector<TensorId>{build(h)}; });
}

template <class Holder>
yirage_status unary(const char *function, OpKind kind, Holder *handle, yirage_tensor *x, yirage_tensor **out) {
  return build_tensor(function, handle, out,
                      [&](Holder &h) { return h.graph.unary(kind, tensor_id(function, "X", &h, x)); });
}

template <class Holder>
yirage_status binary(const char *function, OpKind kind, Holder *handle, yirage_tensor *a, yirage_tensor *b,
                     yirage_tensor **out) {
  return build_tensor(function, handle, out, [&](Holder &h) {
    return h.graph.binary(kind, tensor_id(function, "A", &h, a), tensor_id(function, "B", &h, b));
  });
}

template <class Holder>
yirage_status reduction(const char *function, OpKind kind, Holder *handle, yirage_tensor *x, int32_t dim,
                        yirage_tensor **out) {
  return build_tensor(function, handle, out,
                      [&](Holder &h) { return h.graph.reduction(kind, tensor_id(function, "X", &h, x), dim); });
}

inline Dims dims_from(const char *function, const char *name, size_t n, const int64_t *values) {
  if (n > 0) require_non_null(function, name, values);
  return Dims(values, values + n);
}

template <class Holder>
yirage_status matmul(const char *function, Holder *handle, yirage_tensor *a, yirage_tensor *b, yirage_tensor **out) {
  return build_tensor(function, handle, out, [&](Holder &h) {
    return h.graph.matmul(tensor_id(function, "A", &h, a), tensor_id(function, "B", &h, b));
  });
}

template <class Holder>
yirage_status clamp(const char *function, Holder *handle, yirage_tensor *x, double lo, double hi, yirage_tensor **out) {
  return build_tensor(function, handle, out,
                      [&](Holder &h) { return h.graph.clamp(tensor_id(function, "X", &h, x), lo, hi); });
}

template <class Holder>
yirage_status mul_scalar(const char *function, Holder *handle, yirage_tensor *x, double scalar, yirage_tensor **out) {
  return build_tensor(function, handle, out,
                      [&](Holder &h) { return h.graph.mul_scalar(tensor_id(function, "X", &h, x), scalar); });
}

template <class Holder>
yirage_status rms_norm(const char *function, Holder *handle, yirage_tensor *x, size_t n_normalized,
                       const int64_t *normalized_shape, double eps, yirage_tensor *weight, yirage_tensor **out) {
  return build_tensor(function, handle, out, [&](Holder &h) {
    const TensorId x_id = tensor_id(function, "X", &h, x);
    std::optional<TensorId> weight_id;
    if (weight != nullptr) weight_id = tensor_id(function, "weight", &h, weight);
    if (n_normalized > static_cast<size_t>(kMaxRank)) {
      invalid_argument(std::string(function) + ": n_normalized " + std::to_string(n_normalized) +
                       " exceeds the maximum rank");
    }
    return h.graph.rms_norm(x_id, dims_from(function, "normalized_shape", n_normalized, normalized_shape), eps,
                            weight_id);
  });
}

template <class Holder>
yirage_status concat(const char *function, Holder *handle, yirage_tensor *a, yirage_tensor *b, int32_t dim,
                     yirage_tensor **out) {
  return build_tensor(function, handle, out, [&](Holder &h) {
    return h.graph.concat(tensor_id(function, "A", &h, a), tensor_id(function, "B", &h, b), dim);
  });
}

}  // namespace yirage::capi
