// yirage.h: searches in shards (yirage_search_plan_*), over search/shards.hpp.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "capi/handles.hpp"
#include "capi/search_handles.hpp"
#include "capi/status.hpp"
#include "search/shards.hpp"
#include "util/file_cache.hpp"

struct yirage_search_plan_s {
  static constexpr auto kKind = yirage::capi::HandleKind::kSearchPlan;
  // The graph first: the options' profiling (with a device) checks against it.
  std::unique_ptr<yirage::KernelGraph> graph;
  std::unique_ptr<yirage::search::ShardedSearch> search;
  mutable std::mutex mutex;  // guards `done`: units are added while others run
  std::map<uint32_t, yirage::search::UnitResult> done;
};

namespace {

using yirage::capi::guard;
using yirage::capi::require_non_null;

const yirage_search_plan_s &checked_plan(const char *function, const yirage_search_plan *plan) {
  if (plan == nullptr) yirage::invalid_argument(std::string(function) + ": plan is NULL");
  if (!yirage::capi::is_live(plan, yirage::capi::HandleKind::kSearchPlan)) {
    yirage::invalid_argument(std::string(function) + ": plan is not a live yirage_search_plan handle");
  }
  return *plan;
}

}  // namespace

extern "C" {

yirage_status yirage_search_plan_create(const yirage_graph *graph, const yirage_search_options *options,
                                        uint32_t min_units, yirage_search_plan **out_plan) {
  const char *function = "yirage_search_plan_create";
  return guard([&] {
    const yirage_graph_s &g = yirage::capi::checked_graph(function, graph);
    require_non_null(function, "options", options);
    require_non_null(function, "out_plan", out_plan);
    if (min_units < 1) yirage::invalid_argument(std::string(function) + ": min_units must be at least 1");
    auto plan = std::make_unique<yirage_search_plan_s>();
    plan->graph = std::make_unique<yirage::KernelGraph>(g.graph);
    const yirage::search::SearchOptions o = yirage::capi::search_options_from_c(function, *options, *plan->graph);
    plan->search = std::make_unique<yirage::search::ShardedSearch>(*plan->graph, o, min_units);
    yirage::capi::register_handle(plan.get(), yirage::capi::HandleKind::kSearchPlan);
    *out_plan = plan.release();
  });
}

void yirage_search_plan_release(yirage_search_plan *plan) {
  if (plan == nullptr || !yirage::capi::is_live(plan, yirage::capi::HandleKind::kSearchPlan)) return;
  yirage::capi::unregister_handle(plan);
  delete plan;
}

yirage_status yirage_search_plan_num_units(const yirage_search_plan *plan, size_t *out_count) {
  const char *function = "yirage_search_plan_num_units";
  return guard([&] {
    const yirage_search_plan_s &p = checked_plan(function, plan);
    require_non_null(function, "out_count", out_count);
    *out_count = p.search->num_units();
  });
}

yirage_status yirage_search_plan_id(const yirage_search_plan *plan, char out_id[33]) {
  const char *function = "yirage_search_plan_id";
  return guard([&] {
    const yirage_search_plan_s &p = checked_plan(function, plan);
    require_non_null(function, "out_id", out_id);
    const std::vector<uint8_t> &request = p.search->request();
    const std::string id = yirage::util::hash_hex(std::string(request.begin(), request.end())).substr(0, 32);
    std::memcpy(out_id, id.c_str(), id.size() + 1);
  });
}

yirage_status yirage_search_plan_run_units(const yirage_search_plan *plan, const uint32_t *units, size_t n_units,
                                           yirage_blob **out_partial) {
  const char *function = "yirage_search_plan_run_units";
  return guard([&] {
    const yirage_search_plan_s &p = checked_plan(function, plan);
    if (n_units > 0) require_non_null(function, "units", units);
    require_non_null(function, "out_partial", out_partial);
    // run checks every index (invalid_argument) before anything runs.
    const yirage::search::ShardResult shard = p.search->run(std::vector<uint32_t>(units, units + n_units));
    *out_partial = yirage::capi::adopt_blob(p.search->to_bytes(shard));
    if (!shard.complete) {
      throw yirage::Error(yirage::ErrorCode::kTimeout,
                          std::string(function) + ": stopped (the budget ran out or the search was cancelled); " +
                              std::to_string(shard.units.size()) + " finished unit(s) in the partial result");
    }
  });
}

yirage_status yirage_search_plan_add_partial(yirage_search_plan *plan, const void *data, size_t size,
                                             size_t *out_new_units) {
  const char *function = "yirage_search_plan_add_partial";
  return guard([&] {
    yirage_search_plan_s &p = const_cast<yirage_search_plan_s &>(checked_plan(function, plan));
    if (size > 0) require_non_null(function, "data", data);
    yirage::search::ShardResult shard = p.search->from_bytes(data, size);
    size_t added = 0;
    {
      std::lock_guard lock(p.mutex);
      for (yirage::search::UnitResult &u : shard.units) added += p.done.emplace(u.unit, std::move(u)).second;
    }
    if (out_new_units) *out_new_units = added;
  });
}

yirage_status yirage_search_plan_unit_done(const yirage_search_plan *plan, size_t unit, int32_t *out_done) {
  const char *function = "yirage_search_plan_unit_done";
  return guard([&] {
    const yirage_search_plan_s &p = checked_plan(function, plan);
    require_non_null(function, "out_done", out_done);
    p.search->unit(unit);  // invalid_argument past the plan's units
    std::lock_guard lock(p.mutex);
    *out_done = p.done.count(static_cast<uint32_t>(unit)) ? 1 : 0;
  });
}

yirage_status yirage_search_plan_merge(const yirage_search_plan *plan, const yirage_search_options *options,
                                       yirage_search_result **out_result) {
  const char *function = "yirage_search_plan_merge";
  return guard([&] {
    const auto started = std::chrono::steady_clock::now();
    const yirage_search_plan_s &p = checked_plan(function, plan);
    require_non_null(function, "options", options);
    require_non_null(function, "out_result", out_result);
    const yirage::search::SearchOptions o = yirage::capi::search_options_from_c(function, *options, *p.graph);
    yirage::search::ShardResult all{p.search->request(), {}};
    {
      std::lock_guard lock(p.mutex);
      for (const auto &[index, unit] : p.done) all.units.push_back(unit);
    }
    yirage::capi::hand_out_result(function, p.search->merge({all}, o, started), out_result);
  });
}

}  // extern "C"
