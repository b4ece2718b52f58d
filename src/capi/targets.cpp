// yirage.h: built-in target descriptions and cost estimates.
#include <algorithm>
#include <cstring>
#include <string>

#include "capi/handles.hpp"
#include "capi/targets.hpp"
#include "capi/status.hpp"
#include "search/cost_model.hpp"
#include "search/target.hpp"

namespace {

constexpr size_t kPropertiesSizeV1 =
    offsetof(yirage_target_properties, launch_overhead_seconds) + sizeof(double);

void check_size(const char *function, const char *what, size_t size) {
  yirage::capi::require_struct_size(function, what, size, kPropertiesSizeV1);
}

void to_c(const yirage::search::TargetProperties &t, yirage_target_properties &out) {
  const size_t n = std::min(t.name.size(), sizeof out.name - 1);
  std::memcpy(out.name, t.name.data(), n);
  out.name[n] = '\0';
  out.kind = static_cast<yirage_target_kind>(t.kind);
  out.compute_units = t.compute_units;
  out.max_threads_per_block = t.max_threads_per_block;
  out.max_blocks_per_compute_unit = t.max_blocks_per_compute_unit;
  out.threads_per_compute_unit = t.threads_per_compute_unit;
  out.shared_memory_per_block = t.shared_memory_per_block;
  out.shared_memory_per_compute_unit = t.shared_memory_per_compute_unit;
  out.warp_width = t.warp_width;
  out.memory_bytes = t.memory_bytes;
  out.memory_bandwidth = t.memory_bandwidth;
  out.l2_bytes = t.l2_bytes;
  out.l2_bandwidth = t.l2_bandwidth;
  out.peak_flops_float16 = t.peak_flops_float16;
  out.peak_flops_bfloat16 = t.peak_flops_bfloat16;
  out.peak_flops_float32 = t.peak_flops_float32;
  out.vector_flops_float32 = t.vector_flops_float32;
  for (size_t i = 0; i < 3; ++i) out.matrix_unit[i] = t.matrix_unit[i];
  out.launch_overhead_seconds = t.launch_overhead_seconds;
}

yirage::search::TargetProperties from_c(const yirage_target_properties &in) {
  yirage::search::TargetProperties t;
  t.name.assign(in.name, strnlen(in.name, sizeof in.name));
  t.kind = static_cast<yirage::search::TargetKind>(in.kind);
  t.compute_units = in.compute_units;
  t.max_threads_per_block = in.max_threads_per_block;
  t.max_blocks_per_compute_unit = in.max_blocks_per_compute_unit;
  t.threads_per_compute_unit = in.threads_per_compute_unit;
  t.shared_memory_per_block = in.shared_memory_per_block;
  t.shared_memory_per_compute_unit = in.shared_memory_per_compute_unit;
  t.warp_width = in.warp_width;
  t.memory_bytes = in.memory_bytes;
  t.memory_bandwidth = in.memory_bandwidth;
  t.l2_bytes = in.l2_bytes;
  t.l2_bandwidth = in.l2_bandwidth;
  t.peak_flops_float16 = in.peak_flops_float16;
  t.peak_flops_bfloat16 = in.peak_flops_bfloat16;
  t.peak_flops_float32 = in.peak_flops_float32;
  t.vector_flops_float32 = in.vector_flops_float32;
  for (size_t i = 0; i < 3; ++i) t.matrix_unit[i] = in.matrix_unit[i];
  t.launch_overhead_seconds = in.launch_overhead_seconds;
  return t;
}

}  // namespace

namespace yirage::capi {

search::TargetProperties target_from_c(const char *function, const yirage_target_properties *in) {
  require_non_null(function, "target", in);
  check_size(function, "target", in->struct_size);
  search::TargetProperties t = from_c(*in);
  search::validate(t);
  return t;
}

}  // namespace yirage::capi

extern "C" {

yirage_status yirage_target_builtin(const char *name, yirage_target_properties *out_properties) {
  const char *function = "yirage_target_builtin";
  return yirage::capi::guard([&] {
    yirage::capi::require_non_null(function, "name", name);
    yirage::capi::require_non_null(function, "out_properties", out_properties);
    check_size(function, "out_properties", out_properties->struct_size);
    const yirage::search::TargetProperties t = yirage::search::builtin_target(name);
    to_c(t, *out_properties);
  });
}

yirage_status yirage_graph_estimate_cost(const yirage_graph *graph,
                                         const yirage_target_properties *target,
                                         double *out_seconds) {
  const char *function = "yirage_graph_estimate_cost";
  return yirage::capi::guard([&] {
    const yirage_graph_s &g = yirage::capi::checked_graph(function, graph);
    const yirage::search::TargetProperties t = yirage::capi::target_from_c(function, target);
    yirage::capi::require_non_null(function, "out_seconds", out_seconds);
    const yirage::search::CostEstimate e = yirage::search::estimate_cost(g.graph, t);
    if (!e.feasible) {
      throw yirage::Error(yirage::ErrorCode::kUnsupported,
                          std::string(function) + ": " + e.infeasible_reason);
    }
    *out_seconds = e.seconds;
  });
}

}  // extern "C"
