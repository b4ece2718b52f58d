// yirage.h: built-in target descriptions and cost estimates.
#include <algorithm>
#include <cstring>
#include <string>

#include "capi/handles.hpp"
#include "capi/status.hpp"
#include "capi/targets.hpp"
#include "search/cost_model.hpp"
#include "target/target.hpp"
#include "target/target_abi.hpp"

namespace {

constexpr size_t kPropertiesSizeV1 = offsetof(yirage_target_properties, launch_overhead_seconds) + sizeof(double);

void check_size(const char *function, const char *what, size_t size) {
  yirage::capi::require_struct_size(function, what, size, kPropertiesSizeV1);
}

}  // namespace

namespace yirage::capi {

targets::TargetProperties target_from_c(const char *function, const yirage_target_properties *in) {
  require_non_null(function, "target", in);
  check_size(function, "target", in->struct_size);
  targets::TargetProperties t = targets::target_from_c(*in);
  targets::validate(t);
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
    const yirage::targets::TargetProperties t = yirage::targets::builtin_target(name);
    yirage::targets::target_to_c(t, *out_properties);
  });
}

yirage_status yirage_graph_estimate_cost(const yirage_graph *graph, const yirage_target_properties *target,
                                         double *out_seconds) {
  const char *function = "yirage_graph_estimate_cost";
  return yirage::capi::guard([&] {
    const yirage_graph_s &g = yirage::capi::checked_graph(function, graph);
    const yirage::targets::TargetProperties t = yirage::capi::target_from_c(function, target);
    yirage::capi::require_non_null(function, "out_seconds", out_seconds);
    const yirage::search::CostEstimate e = yirage::search::estimate_cost(g.graph, t);
    if (!e.feasible) {
      throw yirage::Error(yirage::ErrorCode::kUnsupported, std::string(function) + ": " + e.infeasible_reason);
    }
    *out_seconds = e.seconds;
  });
}

}  // extern "C"
