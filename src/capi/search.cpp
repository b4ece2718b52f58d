// yirage.h: yirage_superoptimize and its result handle.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "capi/handles.hpp"
#include "capi/runtime_handles.hpp"
#include "capi/status.hpp"
#include "capi/targets.hpp"
#include "profiling/search_on_device.hpp"

#include "capi/search_handles.hpp"

namespace {

using yirage::capi::require_non_null;

constexpr size_t kOptionsSizeV1 = offsetof(yirage_search_options, cache_dir) + sizeof(const char *);
constexpr size_t kInfoSizeV1 = offsetof(yirage_search_candidate_info, description) + 256;
constexpr size_t kStatsSizeV1 = offsetof(yirage_search_stats, from_cache) + sizeof(int32_t);
// Fields appended in ABI 1.1 are read or written only when the caller's struct has them.
constexpr size_t kOptionsSizeV1_1 = offsetof(yirage_search_options, profile_repeats) + sizeof(uint32_t);
constexpr size_t kOptionsSizeV1_5 = offsetof(yirage_search_options, remeasure) + sizeof(int32_t);
constexpr size_t kInfoSizeV1_1 = offsetof(yirage_search_candidate_info, measured_seconds) + sizeof(double);
constexpr size_t kStatsSizeV1_4 = offsetof(yirage_search_stats, unbuildable) + sizeof(int64_t);
constexpr size_t kInfoSizeV1_7 = offsetof(yirage_search_candidate_info, not_measured) + 128;
constexpr size_t kRecordSizeV1_1 = offsetof(yirage_search_profile_record, error) + 512;
constexpr size_t kRecordSizeV1_7 = offsetof(yirage_search_profile_record, samples) + sizeof(uint32_t);

const yirage_search_result_s &checked_result(const char *function, const yirage_search_result *result) {
  if (result == nullptr) yirage::invalid_argument(std::string(function) + ": result is NULL");
  if (!yirage::capi::is_live(result, yirage::capi::HandleKind::kSearchResult)) {
    yirage::invalid_argument(std::string(function) + ": result is not a live yirage_search_result handle");
  }
  return *result;
}

std::vector<int64_t> copy_array(const char *function, const char *name, const int64_t *data, size_t count) {
  if (count == 0) return {};
  if (data == nullptr) {
    yirage::invalid_argument(std::string(function) + ": " + name + " is NULL but its count is " +
                             std::to_string(count));
  }
  if (count > 64) yirage::invalid_argument(std::string(function) + ": more than 64 " + name);
  return {data, data + count};
}

}  // namespace

namespace yirage::capi {

yirage::search::SearchOptions search_options_from_c(const char *function, const yirage_search_options &in,
                                                    const yirage::KernelGraph &reference) {
  require_struct_size(function, "options", in.struct_size, kOptionsSizeV1);
  yirage::search::SearchOptions o;
  const yirage_device_s *device =
      in.struct_size >= kOptionsSizeV1_1 && in.device ? &yirage::capi::checked_device(function, in.device) : nullptr;
  o.target = in.target ? yirage::capi::target_from_c(function, in.target)
             : device  ? device->plugin->device(device->index).target
                       : yirage::targets::builtin_target("cpu");
  o.time_budget_seconds = in.time_budget_seconds;
  o.threads = static_cast<int>(std::min<uint32_t>(in.threads, 4096));
  o.seed = in.seed;
  auto narrow = [](uint32_t v) { return static_cast<int>(std::min<uint32_t>(v, 1u << 30)); };
  o.max_kernel_ops = narrow(in.max_kernel_ops);
  o.max_block_ops = narrow(in.max_block_ops);
  o.max_grid_axes = narrow(in.max_grid_axes);
  o.max_customized_inputs = narrow(in.max_customized_inputs);
  o.grid_candidates = copy_array(function, "grid_candidates", in.grid_candidates, in.num_grid_candidates);
  o.forloop_candidates = copy_array(function, "forloop_candidates", in.forloop_candidates, in.num_forloop_candidates);
  const bool any_fixed = in.fixed_grid[0] || in.fixed_grid[1] || in.fixed_grid[2];
  if (any_fixed) o.fixed_grid = std::array<int64_t, 3>{in.fixed_grid[0], in.fixed_grid[1], in.fixed_grid[2]};
  if (in.fixed_forloop != 0) o.fixed_forloop = in.fixed_forloop;
  o.max_candidates = narrow(in.max_candidates);
  o.verify_trials = narrow(in.verify_trials);
  o.z3_rlimit = narrow(in.z3_rlimit);
  o.abstract_pruning = in.abstract_pruning != 0;
  if (in.progress) {
    const yirage_search_progress_fn fn = in.progress;
    void *user = in.progress_user_data;
    o.progress = [fn, user](const yirage::search::SearchProgress &p) {
      const yirage_search_progress c{sizeof(yirage_search_progress), p.states, p.candidates, p.seconds};
      fn(&c, user);
    };
  }
  if (in.cancel) {
    const int32_t *flag = in.cancel;
    o.cancelled = [flag] { return __atomic_load_n(flag, __ATOMIC_RELAXED) != 0; };
  }
  if (in.cache_dir) o.cache_dir = in.cache_dir;
  if (in.struct_size >= kOptionsSizeV1_5) o.remeasure = in.remeasure != 0;
  if (device != nullptr) {
    if (in.profile_top_k < 1 || in.profile_repeats < 1) {
      yirage::invalid_argument(std::string(function) + ": profile_top_k and profile_repeats must be at least 1");
    }
    o.profile_top_k = narrow(in.profile_top_k);
    yirage::runtime::MeasureOptions mo;
    mo.repeats = narrow(in.profile_repeats);
    mo.seed = in.seed;
    yirage::profiling::profile_on_device(o, *device->plugin, device->index, reference, mo);
  }
  return o;
}

void hand_out_result(const char *function, yirage::search::SearchResult &&result, yirage_search_result **out) {
  auto handle = std::make_unique<yirage_search_result_s>();
  handle->result = std::move(result);
  const yirage::search::SearchEnd end = handle->result.end;
  const size_t found = handle->result.candidates.size();
  register_handle(handle.get(), HandleKind::kSearchResult);
  *out = handle.release();
  if (end == yirage::search::SearchEnd::kTimeout) {
    throw yirage::Error(yirage::ErrorCode::kTimeout, std::string(function) + ": the time budget ran out; " +
                                                         std::to_string(found) +
                                                         " verified candidate(s) in the result");
  }
  if (end == yirage::search::SearchEnd::kCancelled) {
    throw yirage::Error(yirage::ErrorCode::kCancelled, std::string(function) + ": cancelled; " + std::to_string(found) +
                                                           " verified candidate(s) in the result");
  }
}

}  // namespace yirage::capi

extern "C" {

void yirage_search_options_init(yirage_search_options *options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  const yirage::search::SearchOptions d;
  options->struct_size = sizeof *options;
  options->time_budget_seconds = d.time_budget_seconds;
  options->seed = d.seed;
  options->max_kernel_ops = static_cast<uint32_t>(d.max_kernel_ops);
  options->max_block_ops = static_cast<uint32_t>(d.max_block_ops);
  options->max_grid_axes = static_cast<uint32_t>(d.max_grid_axes);
  options->max_customized_inputs = static_cast<uint32_t>(d.max_customized_inputs);
  options->max_candidates = static_cast<uint32_t>(d.max_candidates);
  options->verify_trials = static_cast<uint32_t>(d.verify_trials);
  options->z3_rlimit = static_cast<uint32_t>(d.z3_rlimit);
  options->abstract_pruning = d.abstract_pruning ? 1 : 0;
  options->profile_top_k = static_cast<uint32_t>(d.profile_top_k);
  options->profile_repeats = static_cast<uint32_t>(yirage::runtime::MeasureOptions().repeats);
}

yirage_status yirage_superoptimize(const yirage_graph *graph, const yirage_search_options *options,
                                   yirage_search_result **out_result) {
  const char *function = "yirage_superoptimize";
  return yirage::capi::guard([&] {
    const yirage_graph_s &g = yirage::capi::checked_graph(function, graph);
    require_non_null(function, "options", options);
    require_non_null(function, "out_result", out_result);
    const yirage::search::SearchOptions o = yirage::capi::search_options_from_c(function, *options, g.graph);
    yirage::capi::hand_out_result(function, yirage::search::superoptimize(g.graph, o), out_result);
  });
}

void yirage_search_result_release(yirage_search_result *result) {
  if (result == nullptr || !yirage::capi::is_live(result, yirage::capi::HandleKind::kSearchResult)) {
    return;
  }
  yirage::capi::unregister_handle(result);
  delete result;
}

yirage_status yirage_search_result_num_candidates(const yirage_search_result *result, size_t *out_count) {
  const char *function = "yirage_search_result_num_candidates";
  return yirage::capi::guard([&] {
    const yirage_search_result_s &r = checked_result(function, result);
    require_non_null(function, "out_count", out_count);
    *out_count = r.result.candidates.size();
  });
}

yirage_status yirage_search_result_candidate(const yirage_search_result *result, size_t index, yirage_graph **out_graph,
                                             yirage_search_candidate_info *out_info) {
  const char *function = "yirage_search_result_candidate";
  return yirage::capi::guard([&] {
    const yirage_search_result_s &r = checked_result(function, result);
    if (index >= r.result.candidates.size()) {
      yirage::invalid_argument(std::string(function) + ": index " + std::to_string(index) + " is out of range (" +
                               std::to_string(r.result.candidates.size()) + " candidates)");
    }
    if (out_info) yirage::capi::require_struct_size(function, "out_info", out_info->struct_size, kInfoSizeV1);
    const yirage::search::SearchCandidate &c = r.result.candidates[index];
    yirage_graph *graph = out_graph ? yirage::capi::adopt_graph(yirage::KernelGraph(c.graph)) : nullptr;
    if (out_info) {
      out_info->estimated_seconds = c.estimated_seconds;
      out_info->verified_trials = static_cast<uint32_t>(c.verified_trials);
      yirage::capi::copy_string(out_info->description, c.description);
      if (out_info->struct_size >= kInfoSizeV1_1) out_info->measured_seconds = c.measured_seconds;
      if (out_info->struct_size >= kInfoSizeV1_7) {
        out_info->measured_min_seconds = c.spread.min_seconds;
        out_info->measured_max_seconds = c.spread.max_seconds;
        out_info->measured_samples = static_cast<uint32_t>(std::max(c.spread.samples, 0));
        yirage::capi::copy_string(out_info->not_measured, c.not_measured);
      }
    }
    if (out_graph) *out_graph = graph;
  });
}

yirage_status yirage_search_result_stats(const yirage_search_result *result, yirage_search_stats *out_stats) {
  const char *function = "yirage_search_result_stats";
  return yirage::capi::guard([&] {
    const yirage_search_result_s &r = checked_result(function, result);
    require_non_null(function, "out_stats", out_stats);
    yirage::capi::require_struct_size(function, "out_stats", out_stats->struct_size, kStatsSizeV1);
    const yirage::search::SearchStats &s = r.result.stats;
    yirage_search_stats &o = *out_stats;
    o.states = s.states;
    o.pruned_shape = s.pruned_shape;
    o.pruned_abstract = s.pruned_abstract;
    o.pruned_canonical = s.pruned_canonical;
    o.pruned_dead = s.pruned_dead;
    o.plans = s.plans;
    o.structures = s.structures;
    o.candidates = s.candidates;
    o.infeasible = s.infeasible;
    o.oracle_queries = s.oracle_queries;
    o.oracle_index_answers = s.oracle_index_answers;
    o.z3_queries = s.z3_queries;
    o.z3_proved = s.z3_proved;
    o.z3_unknown = s.z3_unknown;
    o.z3_seconds = s.z3_seconds;
    o.fingerprint_checks = s.fingerprint_checks;
    o.fingerprint_rejected = s.fingerprint_rejected;
    o.fingerprint_seconds = s.fingerprint_seconds;
    o.first_fused_seconds = s.first_fused_seconds;
    o.seconds = s.seconds;
    o.from_cache = s.from_cache ? 1 : 0;
    if (out_stats->struct_size >= kStatsSizeV1_4) o.unbuildable = s.unbuildable;
  });
}

yirage_status yirage_search_result_num_profiled(const yirage_search_result *result, size_t *out_count) {
  const char *function = "yirage_search_result_num_profiled";
  return yirage::capi::guard([&] {
    const yirage_search_result_s &r = checked_result(function, result);
    require_non_null(function, "out_count", out_count);
    *out_count = r.result.profiled.size();
  });
}

yirage_status yirage_search_result_profiled(const yirage_search_result *result, size_t index,
                                            yirage_search_profile_record *out_record) {
  const char *function = "yirage_search_result_profiled";
  return yirage::capi::guard([&] {
    const yirage_search_result_s &r = checked_result(function, result);
    require_non_null(function, "out_record", out_record);
    yirage::capi::require_struct_size(function, "out_record", out_record->struct_size, kRecordSizeV1_1);
    if (index >= r.result.profiled.size()) {
      yirage::invalid_argument(std::string(function) + ": index " + std::to_string(index) + " is out of range (" +
                               std::to_string(r.result.profiled.size()) + " profiled)");
    }
    const yirage::search::ProfileRecord &p = r.result.profiled[index];
    yirage::capi::copy_string(out_record->description, p.description);
    out_record->estimated_seconds = p.estimated_seconds;
    out_record->measured_seconds = p.measured.seconds;
    out_record->relative_error = p.measured.relative_error;
    out_record->kept = p.measured.correct ? 1 : 0;
    yirage::capi::copy_string(out_record->error, p.measured.error);
    if (out_record->struct_size >= kRecordSizeV1_7) {
      out_record->min_seconds = p.measured.spread.min_seconds;
      out_record->max_seconds = p.measured.spread.max_seconds;
      out_record->samples = static_cast<uint32_t>(std::max(p.measured.spread.samples, 0));
    }
  });
}

}  // extern "C"
