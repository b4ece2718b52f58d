#include "codegen/lower_operator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.hpp"

namespace yirage::codegen {

namespace {

Expr at(const TensorRef &t, const Expr &index) {
  return load(t.buffer, t.base + index);
}

Block unary(const Operator &op, const TensorRef &x, const TensorRef &o, Sharing sharing) {
  const Expr e = var("e0");
  return {loop({num_elements(o.dims)}, {"e0"}, sharing,
               {let("v", at(x, e)), store(o.buffer, e, unary_value(op.kind, op.attributes, var("v")))})};
}

Block binary_op(OpKind kind, const TensorRef &a, const TensorRef &b, const TensorRef &o, Sharing sharing) {
  if (a.dims == o.dims && b.dims == o.dims) {  // no broadcast: one flat loop, no index arithmetic
    const Expr e = var("e0");
    return {
        loop({num_elements(o.dims)}, {"e0"}, sharing, {store(o.buffer, e, binary_value(kind, at(a, e), at(b, e)))})};
  }
  const std::vector<std::string> names = numbered("i", o.dims.size());
  const std::vector<Expr> v = vars_of(names);
  const Expr value = binary_value(kind, at(a, index_of(v, broadcast_strides(a.dims, o.dims))),
                                  at(b, index_of(v, broadcast_strides(b.dims, o.dims))));
  return {loop(o.dims, names, sharing, {store(o.buffer, index_of(v, row_major_strides(o.dims)), value)})};
}

Expr reduced(bool is_max, const Expr &acc, const Expr &v) {
  return is_max ? call("yr_max", {acc, v}) : acc + v;
}

// The number of elements each rms_norm normalizes together: its trailing dims.
int64_t norm_columns(const Operator &op, const Dims &dims) {
  int64_t cols = 1;
  for (size_t d = dims.size() - op.attributes.sizes.size(); d < dims.size(); ++d) cols *= dims[d];
  return cols;
}

Block reduction(const Operator &op, const TensorRef &x, const TensorRef &o, Sharing sharing) {
  const AxisView v = axis_view(x.dims, static_cast<size_t>(op.attributes.dim));
  const bool is_max = op.kind == OpKind::kReductionMax;
  const Expr E = int_const(v.extent), I = int_const(v.inner);
  if (sharing == Sharing::kThreads) {  // row r is (outer, inner) = (r / inner, r % inner)
    RowReduce rr;
    rr.rows = v.outer * v.inner;
    rr.cols = v.extent;
    rr.is_max = is_max;
    rr.value = at(x, ((var("r") / I) * E + var("c")) * I + var("r") % I);
    rr.finish = {loop({1}, {"c"}, Sharing::kRowLanes, {store(o.buffer, var("r"), var("total"))})};
    return {Stmt{rr}};
  }
  const Expr r0 = var("r0"), r1 = var("r1");
  Block body;
  body.push_back(let_mutable("acc", float_const(is_max ? -INFINITY : 0.0)));
  body.push_back(loop({v.extent}, {"e"}, Sharing::kSerial,
                      {assign("acc", reduced(is_max, var("acc"), at(x, (r0 * E + var("e")) * I + r1)))}));
  body.push_back(store(o.buffer, r0 * I + r1, var("acc")));
  return {loop({v.outer, v.inner}, {"r0", "r1"}, sharing, std::move(body))};
}

// One row of rms_norm (`row` its index, `cols` long) once `total` = Σ x² over it is known:
// x · 1 / sqrt(total / cols + eps), times the weight, the row's stores shared as `lanes` says.
// Where that mean is out of range (rms_mean_in_range: a row of 1e19s or of 1e-23s), the row again,
// scaled by its largest magnitude, in serial loops (rare: each thread of the row runs them):
// (x · scale) / sqrt(Σ (x · scale)² / cols + eps · scale²), a division, where a compiler allowed
// to reassociate would turn (x · scale) · inv into x · (scale · inv), which can exceed float32.
Block normalize_row(const Operator &op, const std::vector<TensorRef> &in, const TensorRef &o, const Expr &row,
                    int64_t cols, const Expr &total, Sharing lanes) {
  const double eps = op.attributes.eps;
  const Expr element = row * int_const(cols) + var("c"), x = at(in[0], element), scale = var("scale");
  const Expr count = float_const(static_cast<double>(cols));
  auto weighted = [&](Expr v) { return op.attributes.has_weight ? std::move(v) * at(in[1], var("c")) : v; };
  auto stores = [&](const Expr &value) {
    return loop({cols}, {"c"}, lanes, {store(o.buffer, element, weighted(value))});
  };
  Expr mean = total / count;
  if (eps != 0) mean = mean + float_const(eps);
  const Block plain = {let("inv", call("yr_rsqrt", {var("mean")})), stores(x * var("inv"))};
  const Block scaled = {
      let_mutable("peak", float_const(0)),
      loop({cols}, {"c"}, Sharing::kSerial, {assign("peak", call("yr_max", {var("peak"), magnitude(x)}))}),
      let("scale", rms_scale(var("peak"), eps)),
      let_mutable("squares", float_const(0)),
      loop({cols}, {"c"}, Sharing::kSerial,
           {let("v", x * scale), assign("squares", var("squares") + var("v") * var("v"))}),
      let("norm", call("yr_sqrt", {rms_scaled_mean(var("squares"), cols, eps, scale)})),
      stores((x * scale) / var("norm"))};
  return {let("mean", mean), if_then(rms_mean_in_range(var("mean")), plain, scaled)};
}

// x / sqrt(mean(x²) + eps) · weight over the trailing dims (norm_columns).
Block rms_norm(const Operator &op, const std::vector<TensorRef> &in, const TensorRef &o, Sharing sharing) {
  const TensorRef &x = in[0];
  const int64_t cols = norm_columns(op, x.dims);
  const Expr C = int_const(cols);
  if (sharing == Sharing::kThreads) {
    RowReduce rr;
    rr.rows = num_elements(x.dims) / cols;
    rr.cols = cols;
    rr.value = at(x, var("r") * C + var("c")) * at(x, var("r") * C + var("c"));
    // One reciprocal square root per row, then a multiplication per element.
    rr.finish = normalize_row(op, in, o, var("r"), cols, var("total"), Sharing::kRowLanes);
    return {Stmt{rr}};
  }
  Block body;
  body.push_back(let_mutable("total", float_const(0)));
  body.push_back(
      loop({cols}, {"c"}, Sharing::kSerial,
           {let("v", at(x, var("r0") * C + var("c"))), assign("total", var("total") + var("v") * var("v"))}));
  for (Stmt &s : normalize_row(op, in, o, var("r0"), cols, var("total"), Sharing::kSerial))
    body.push_back(std::move(s));
  return {loop({num_elements(x.dims) / cols}, {"r0"}, sharing, std::move(body))};
}

Block concat(const Operator &op, const TensorRef &a, const TensorRef &b, const TensorRef &o, Sharing sharing) {
  const auto dim = static_cast<size_t>(op.attributes.dim);
  const std::vector<std::string> names = numbered("i", o.dims.size());
  const std::vector<Expr> v = vars_of(names);
  std::vector<Expr> vb = v;
  vb[dim] = v[dim] - int_const(a.dims[dim]);
  const Expr value = select(binary("<", v[dim], int_const(a.dims[dim])), at(a, index_of(v, row_major_strides(a.dims))),
                            at(b, index_of(vb, row_major_strides(b.dims))));
  return {loop(o.dims, names, sharing, {store(o.buffer, index_of(v, row_major_strides(o.dims)), value)})};
}

Block split(const Operator &op, const TensorRef &x, const std::vector<TensorRef> &parts, Sharing sharing) {
  const auto dim = static_cast<size_t>(op.attributes.dim);
  Block loops;
  int64_t start = 0;
  for (const TensorRef &part : parts) {
    const std::vector<std::string> names = numbered("i", part.dims.size());
    const std::vector<Expr> v = vars_of(names);
    std::vector<Expr> vx = v;
    vx[dim] = v[dim] + int_const(start);
    loops.push_back(loop(part.dims, names, sharing,
                         {store(part.buffer, index_of(v, row_major_strides(part.dims)),
                                at(x, index_of(vx, row_major_strides(x.dims))))}));
    start += part.dims[dim];
  }
  return loops;
}

// A view materialised compact: reshape keeps row-major order (a flat copy); permute walks the
// output and reads x where output dim i is x's dim order[i].
Block view(const Operator &op, const TensorRef &x, const TensorRef &o, Sharing sharing) {
  if (op.kind == OpKind::kReshape) {
    const Expr e = var("e0");
    return {loop({num_elements(o.dims)}, {"e0"}, sharing, {store(o.buffer, e, at(x, e))})};
  }
  const Dims x_strides = row_major_strides(x.dims);
  Dims strides(o.dims.size());
  for (size_t i = 0; i < strides.size(); ++i) strides[i] = x_strides[static_cast<size_t>(op.attributes.sizes[i])];
  const std::vector<std::string> names = numbered("i", o.dims.size());
  const std::vector<Expr> v = vars_of(names);
  return {loop(o.dims, names, sharing,
               {store(o.buffer, index_of(v, row_major_strides(o.dims)), at(x, index_of(v, strides)))})};
}

}  // namespace

Expr magnitude(const Expr &v) {
  return call("yr_max", {v, -v});
}

Expr rms_peak(const Expr &peak, double eps) {
  return call("yr_clamp", {peak, float_const(std::max(kRmsPeakFloor, std::sqrt(eps))), float_const(0x1p126)});
}

Expr rms_scale(const Expr &peak, double eps) {
  return float_const(1) / rms_peak(peak, eps);
}

Expr rms_scaled_mean(const Expr &squares, int64_t count, double eps, const Expr &scale) {
  Expr mean = squares / float_const(static_cast<double>(count));
  if (eps != 0) mean = mean + float_const(eps) * scale * scale;
  return mean;
}

Expr rms_scaled_inverse(const Expr &squares, int64_t count, double eps, const Expr &scale) {
  return call("yr_rsqrt", {rms_scaled_mean(squares, count, eps, scale)});
}

Expr rms_mean_in_range(const Expr &mean) {
  const Expr bounded = call("yr_clamp", {mean, float_const(0x1p-102), float_const(std::numeric_limits<float>::max())});
  return binary("==", bounded, mean);
}

Block lower_operator(const Operator &op, const std::vector<TensorRef> &in, const std::vector<TensorRef> &out,
                     Sharing sharing) {
  if (is_unary(op.kind)) return unary(op, in[0], out[0], sharing);
  if (is_binary(op.kind)) return binary_op(op.kind, in[0], in[1], out[0], sharing);
  switch (op.kind) {
    case OpKind::kMatmul:
      return {Stmt{Matmul{in[0], in[1], out[0], sharing, std::nullopt, std::nullopt, std::nullopt}}};
    case OpKind::kReduction:
    case OpKind::kReductionMax: return reduction(op, in[0], out[0], sharing);
    case OpKind::kRmsNorm: return rms_norm(op, in, out[0], sharing);
    case OpKind::kConcat: return concat(op, in[0], in[1], out[0], sharing);
    case OpKind::kSplit: return split(op, in[0], out, sharing);
    case OpKind::kReshape:
    case OpKind::kPermute: return view(op, in[0], out[0], sharing);
    default: break;
  }
  throw Error(ErrorCode::kUnsupported, std::string("codegen: operator ") + op_name(op.kind) + " has no loop form");
}

}  // namespace yirage::codegen
