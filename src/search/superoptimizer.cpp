#include "search/superoptimizer.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>

#include "ir/block_graph.hpp"
#include "ir/rebuild.hpp"
#include "search/block_search.hpp"
#include "search/cost_model.hpp"
#include "search/dim_classes.hpp"
#include "search/loop_split.hpp"
#include "search/norm_weights.hpp"
#include "search/result_cache.hpp"
#include "search/search_pass.hpp"
#include "search/segments.hpp"
#include "search/terms.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"
#include "verify/equivalence.hpp"

namespace yirage::search {

void validate(const SearchOptions &o) {
  targets::validate(o.target);
  auto bad = [](const std::string &what) { invalid_argument("superoptimize: " + what); };
  if (!(o.time_budget_seconds > 0)) bad("time_budget_seconds must be positive");
  if (o.threads < 0) bad("threads must be 0 (all cores) or positive");
  if (o.max_kernel_ops < 1 || o.max_kernel_ops > 8) bad("max_kernel_ops must be in 1..8");
  if (o.max_block_ops < 1 || o.max_block_ops > 16) bad("max_block_ops must be in 1..16");
  if (o.max_grid_axes < 0 || o.max_grid_axes > 3) bad("max_grid_axes must be in 0..3");
  if (o.max_customized_inputs < 1 || o.max_customized_inputs > 16) {
    bad("max_customized_inputs must be in 1..16");
  }
  if (o.max_candidates < 1) bad("max_candidates must be at least 1");
  if (o.verify_trials < 1 || o.verify_trials > 16) bad("verify_trials must be in 1..16");
  if (o.z3_rlimit < 0) bad("z3_rlimit must not be negative");
  for (int64_t g : o.grid_candidates) {
    if (g < 2) bad("grid_candidates must all be at least 2 (an axis of one block is no axis)");
  }
  for (int64_t f : o.forloop_candidates) {
    if (f < 2) bad("forloop_candidates must all be at least 2 (a range of 1 is no loop)");
  }
  if (o.fixed_grid) {
    for (int64_t g : *o.fixed_grid) {
      if (g < 1) bad("fixed_grid sizes must be positive");
    }
  }
  if (o.fixed_forloop && *o.fixed_forloop < 1) bad("fixed_forloop must be positive");
  if (o.profile_top_k < 1) bad("profile_top_k must be at least 1");
  if (o.segment_above_ops < 0) bad("segment_above_ops must be 0 (never in segments) or positive");
  if (o.max_segment_ops < 1) bad("max_segment_ops must be at least 1");
}

namespace {

using Clock = std::chrono::steady_clock;

// Powers of two p dividing `extent` with 2 <= p <= limit; at most `count` of them, spread over
// the range (largest first).
std::vector<int64_t> spread_powers(int64_t extent, int64_t limit, size_t count) {
  std::vector<int64_t> all;
  for (int64_t p = 2; p <= std::min(extent, limit); p *= 2) {
    if (extent % p == 0) all.push_back(p);
  }
  std::reverse(all.begin(), all.end());
  if (all.size() <= count) return all;
  std::vector<int64_t> picked;
  for (size_t k = 0; k < count; ++k) picked.push_back(all[k * (all.size() - 1) / (count - 1)]);
  return picked;
}

}  // namespace

std::vector<int64_t> grid_sizes(const SearchOptions &o, int64_t extent, size_t axis) {
  if (o.fixed_grid) {
    const int64_t g = (*o.fixed_grid)[axis];
    return extent % g == 0 && g > 1 ? std::vector<int64_t>{g} : std::vector<int64_t>{};
  }
  if (!o.grid_candidates.empty()) {
    std::vector<int64_t> fit;
    for (int64_t g : o.grid_candidates) {
      if (extent % g == 0) fit.push_back(g);
    }
    return fit;
  }
  const targets::TargetProperties &t = o.target;
  const int64_t slots = t.compute_units * std::max<int64_t>(1, t.max_blocks_per_compute_unit);
  std::vector<int64_t> sizes = spread_powers(extent, std::max<int64_t>(2, 4 * slots), 3);
  // Tiles 1, 2 and 4 times as tall as the matrix unit, where that leaves fewer blocks than
  // compute units (an axis the spread above jumps over: attention's 256 query rows get 256, 32
  // and 2 blocks; 16 blocks of 16 rows, one mma tile each, run it fastest unsplit, and 4 blocks
  // of 64 rows split over 16 key chunks faster still than 16 rows over 4 chunks: the fewer rows
  // a block takes, the more often K and V are read).
  const int64_t rows = t.matrix_unit[0];
  for (int64_t tiles = 1; rows > 1 && tiles <= 4; tiles *= 2) {
    if (extent % (rows * tiles) != 0) break;
    const int64_t blocks = extent / (rows * tiles);
    if (blocks >= 2 && blocks < t.compute_units && (blocks & (blocks - 1)) == 0 &&
        std::find(sizes.begin(), sizes.end(), blocks) == sizes.end()) {
      sizes.push_back(blocks);
    }
  }
  // One and two waves of blocks on a GPU (the powers of two nearest its compute units): a
  // memory-bound product streams its weights at full rate only with every unit loading, and the
  // spread above can jump over both (6144 columns: 2048, 64 and 2 blocks on an H100's 132). And
  // tiles of 32: the columns one block of CUDA's weight-product kernel streams (16-bit weights,
  // backends/cuda/codegen/cuda_matmul.hpp), which takes a µGraph of a few rows only at that grid.
  if (t.kind != targets::TargetKind::kCpu) {
    int64_t wave = 1;
    while (wave * 2 <= t.compute_units) wave *= 2;
    for (int64_t blocks : {wave, 2 * wave, extent % 32 == 0 ? extent / 32 : 0}) {
      if (blocks >= 2 && extent % blocks == 0 && std::find(sizes.begin(), sizes.end(), blocks) == sizes.end()) {
        sizes.push_back(blocks);
      }
    }
  }
  std::sort(sizes.rbegin(), sizes.rend());
  return sizes;
}

std::vector<int64_t> loop_sizes(const SearchOptions &o, int64_t extent) {
  std::vector<int64_t> fit;
  if (o.fixed_forloop) {
    if (*o.fixed_forloop > 1 && extent % *o.fixed_forloop == 0) fit.push_back(*o.fixed_forloop);
    return fit;
  }
  if (!o.forloop_candidates.empty()) {
    for (int64_t f : o.forloop_candidates) {
      if (extent % f == 0) fit.push_back(f);
    }
    return fit;
  }
  // Tiles of at least 16 elements along the loop, so each iteration feeds the matrix unit.
  return spread_powers(extent, std::max<int64_t>(2, extent / 16), 3);
}

namespace {

// The input graph's measurement, made before the search whatever the time: it is correct by
// definition, and without it a search that verified nothing (a budget too short) has no answer;
// made first, its check falls within the budget like the search. `deadline` ends its timed runs. Its estimate stands
// beside the candidates' so that the model's ranking can be checked against the measurements on every graph
// (benchmarks/models/).
struct InputMeasurement {
  SearchCandidate candidate;
  ProfileRecord record;
  Clock::duration took;
};

// Where the measurer found the candidate faster with kernels run as one program
// (Measured::faster_form), the candidate becomes that form, described as `grouped` (its
// description without the form) says, then ", with kernels run as one program".
void take_faster_form(SearchCandidate &c, ProfileRecord &record, const std::string &grouped) {
  if (!record.measured.correct || !record.measured.faster_form) return;
  c.graph = *record.measured.faster_form;
  c.description = grouped + ", with kernels run as one program";
  record.description = c.description;
}

InputMeasurement measure_input(const KernelGraph &graph, const SearchOptions &options, Clock::time_point deadline) {
  const double estimate = estimate_cost(graph, options.target, options.backend_estimates).seconds;
  const auto started = Clock::now();
  InputMeasurement m{SearchCandidate{graph, estimate, 0, "the input graph, unchanged", -1},
                     ProfileRecord{"the input graph, unchanged", estimate, options.measure(graph, deadline)},
                     Clock::duration{}};
  m.took = Clock::now() - started;
  take_faster_form(m.candidate, m.record, "the input graph");
  if (m.record.measured.correct) {
    m.candidate.measured_seconds = m.record.measured.seconds;
    m.candidate.spread = m.record.measured.spread;
  }
  return m;
}

}  // namespace

std::vector<size_t> candidates_to_profile(const std::vector<SearchCandidate> &candidates, int k) {
  const auto limit = static_cast<size_t>(std::max(k, 0));
  std::vector<size_t> chosen, twins;
  for (size_t i = 0; i < candidates.size() && chosen.size() < limit; ++i) {
    const double estimate = candidates[i].estimated_seconds;
    const bool twin = std::any_of(chosen.begin(), chosen.end(), [&](size_t c) {
      return std::abs(candidates[c].estimated_seconds - estimate) <= kTwinEstimate * std::abs(estimate);
    });
    (twin ? twins : chosen).push_back(i);
  }
  for (size_t i = 0; i < twins.size() && chosen.size() < limit; ++i) chosen.push_back(twins[i]);
  std::sort(chosen.begin(), chosen.end());
  std::set<size_t> counts;
  for (size_t i : chosen) counts.insert(kernel_count(candidates[i].graph));
  if (chosen.size() >= 2 && counts.size() == 1) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (counts.count(kernel_count(candidates[i].graph)) == 0) {
        chosen.back() = i;
        break;
      }
    }
    std::sort(chosen.begin(), chosen.end());
  }
  return chosen;
}

namespace {

// Profiles the cheapest candidates while the budget lasts (see SearchOptions::measure), after
// the input graph's measurement; the input graph joins them. Returns false where the budget ran
// out before every chosen candidate was measured.
bool profile(SearchResult &result, const SearchOptions &options, Clock::time_point deadline, InputMeasurement in) {
  SearchCandidate input = std::move(in.candidate);
  result.profiled.push_back(std::move(in.record));
  // A measurement starts only while the time left is at least the longest one so far (a
  // compile takes most of it, and cannot be stopped halfway).
  Clock::duration longest = in.took;
  Clock::time_point started;
  std::vector<size_t> chosen = candidates_to_profile(result.candidates, options.profile_top_k);
  // A place whose candidate does not run correctly (it fails to compile or launch, or its
  // results are wrong) goes to the cheapest candidate not yet profiled.
  std::vector<bool> taken(result.candidates.size(), false), ran(result.candidates.size(), false);
  for (size_t i : chosen) taken[i] = true;
  size_t spare = 0;
  bool in_time = true;
  for (size_t q = 0; q < chosen.size(); ++q) {
    started = Clock::now();
    if (started + longest > deadline) {
      in_time = false;
      for (size_t r = q; r < chosen.size(); ++r) {  // returned unmeasured
        taken[chosen[r]] = false;
        result.candidates[chosen[r]].not_measured = "the budget ran out before its turn";
      }
      break;
    }
    SearchCandidate &c = result.candidates[chosen[q]];
    ProfileRecord record{c.description, c.estimated_seconds, options.measure(c.graph, deadline)};
    longest = std::max(longest, Clock::now() - started);
    take_faster_form(c, record, c.description);
    if (record.measured.correct) {
      c.measured_seconds = record.measured.seconds;
      c.spread = record.measured.spread;
      ran[chosen[q]] = true;
    } else {
      while (spare < taken.size() && taken[spare]) ++spare;
      if (spare < taken.size()) {
        taken[spare] = true;
        chosen.push_back(spare);
      }
    }
    result.profiled.push_back(std::move(record));
  }
  std::vector<SearchCandidate> correct, rest;
  for (size_t i = 0; i < result.candidates.size(); ++i) {
    if (ran[i]) {
      correct.push_back(std::move(result.candidates[i]));
    } else if (!taken[i]) {
      SearchCandidate &c = result.candidates[i];
      if (c.not_measured.empty()) {
        c.not_measured = "not among the " + std::to_string(options.profile_top_k) + " cheapest estimates profiled";
      }
      rest.push_back(std::move(c));
    }
  }
  std::stable_sort(correct.begin(), correct.end(), [](const SearchCandidate &a, const SearchCandidate &b) {
    return a.measured_seconds < b.measured_seconds;
  });
  // The input graph stays the answer unless a candidate is faster beyond the noise: its median
  // below the input graph's fastest timed run. A lead within the spread of the timed runs is
  // noise as often as not (such leads reversed when the same graphs were benchmarked:
  // benchmarks/models/RESULTS.md), and the user's own graph is never a wrong answer.
  if (input.measured_seconds >= 0) {
    const bool beaten = !correct.empty() &&
                        (input.spread.min_seconds < 0 || correct.front().measured_seconds < input.spread.min_seconds);
    auto at = correct.begin();
    if (beaten) {
      at = std::upper_bound(correct.begin(), correct.end(), input.measured_seconds,
                            [](double t, const SearchCandidate &c) { return t < c.measured_seconds; });
    }
    correct.insert(at, std::move(input));
  }
  for (SearchCandidate &c : rest) correct.push_back(std::move(c));
  result.candidates = std::move(correct);
  return in_time;
}

// Says why each candidate without a measurement has none, where profiling has not said.
void explain_unmeasured(SearchResult &result, const SearchOptions &options) {
  for (SearchCandidate &c : result.candidates) {
    if (c.measured_seconds >= 0 || !c.not_measured.empty()) continue;
    c.not_measured = !options.measure ? "the search had no device to profile on"
                                      : "not measured when this cached answer was profiled";
  }
}

}  // namespace

void add_block_counts(SearchStats &s, const BlockSearchStats &b) {
  s.states += b.states;
  s.pruned_shape += b.pruned_shape;
  s.pruned_abstract += b.pruned_abstract;
  s.pruned_canonical += b.pruned_canonical;
  s.pruned_dead += b.pruned_dead;
  s.structures += b.structures;
}

void add_counts(SearchStats &s, const SearchStats &o) {
  for (auto field :
       {&SearchStats::states, &SearchStats::pruned_shape, &SearchStats::pruned_abstract, &SearchStats::pruned_canonical,
        &SearchStats::pruned_dead, &SearchStats::plans, &SearchStats::structures, &SearchStats::candidates,
        &SearchStats::infeasible, &SearchStats::oracle_queries, &SearchStats::oracle_index_answers,
        &SearchStats::z3_queries, &SearchStats::z3_proved, &SearchStats::z3_unknown, &SearchStats::fingerprint_checks,
        &SearchStats::fingerprint_rejected, &SearchStats::unbuildable}) {
    s.*field += o.*field;
  }
  s.z3_seconds += o.z3_seconds;
  s.fingerprint_seconds += o.fingerprint_seconds;
  if (s.first_fused_seconds < 0 || (o.first_fused_seconds >= 0 && o.first_fused_seconds < s.first_fused_seconds)) {
    s.first_fused_seconds = o.first_fused_seconds;
  }
}

SearchResult superoptimize(const KernelGraph &graph, const SearchOptions &requested) {
  validate(requested);
  if (graph.outputs().empty()) invalid_argument("superoptimize: the graph has no outputs");
  // Operators no output depends on never run (kernel_operators): the search leaves them out too (a
  // segment of only such operators would have nothing to return).
  const std::vector<bool> live = live_operators(graph);
  for (size_t i = 0; i < live.size(); ++i) {
    if (!live[i] && graph.operators()[i].kind != OpKind::kInput) {
      return superoptimize(without_dead_operators(graph), requested);
    }
  }
  const std::vector<Segment> segments =
      plan_segments(graph, requested.segment_above_ops, requested.max_segment_ops, requested.max_customized_inputs);
  if (segments.size() > 1) return superoptimize_in_segments(graph, requested, segments);
  return superoptimize_from(graph, requested, nullptr, Clock::now());
}

SearchResult superoptimize_from(const KernelGraph &graph, const SearchOptions &requested,
                                const std::vector<TaskStructures> *given,
                                std::chrono::steady_clock::time_point started) {
  // Profiling takes the cheapest verified candidates: the search keeps at least as many, and half
  // as many again to replace those that do not run (profile).
  SearchOptions options = requested;
  if (options.measure) {
    options.max_candidates = std::max(options.max_candidates, options.profile_top_k + (options.profile_top_k + 1) / 2);
  }
  const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(std::min(options.time_budget_seconds, 1e9)));
  std::vector<uint8_t> request, measured;
  SearchResult result;
  std::optional<std::vector<SearchCandidate>> cached;
  if (!options.cache_dir.empty() && !given) {
    request = cache_request(graph, options);
    // A profiled answer from the same plugin build and device: the answer, nothing measured.
    if (options.measure && !options.measured_by.empty()) {
      measured = measured_request(request, options);
      std::optional<std::vector<SearchCandidate>> answer;
      if (!options.remeasure) answer = cache_read(options.cache_dir, measured);
      if (answer && !answer->empty() && answer->front().measured_seconds >= 0) {
        result.candidates = std::move(*answer);
        result.stats.candidates = static_cast<int64_t>(result.candidates.size());
        result.stats.from_cache = true;
        result.end = SearchEnd::kComplete;
        explain_unmeasured(result, options);
        result.stats.seconds = seconds_since(started);
        return result;
      }
    }
    cached = cache_read(options.cache_dir, request);
  }
  // The input graph's timed runs take at most the first quarter of the budget.
  std::optional<InputMeasurement> input;
  if (options.measure) input = measure_input(graph, options, started + (deadline - started) / 4);
  if (cached) {
    // The cache holds what passed verification; what builds depends on the backend asking now.
    for (SearchCandidate &c : *cached) {
      if (!builds(options, c.graph)) {
        ++result.stats.unbuildable;
      } else {
        result.candidates.push_back(std::move(c));
      }
    }
    result.stats.candidates = static_cast<int64_t>(cached->size());
    result.stats.from_cache = true;
  } else {
    result = run_passes(graph, options, started, given);
    // Only a search that ran to the end is the answer to its request.
    if (!request.empty() && result.end == SearchEnd::kComplete) {
      cache_write(options.cache_dir, request, result.candidates, result.stats.seconds);
    }
  }
  // Without a device, a search run to its end that verified nothing (none could be: a graph the
  // fingerprints cannot check, or limits too tight) answers with the input graph by its
  // estimate, as one with a device answers with it measured (profile).
  if (!input && result.end == SearchEnd::kComplete && result.candidates.empty()) {
    result.candidates.push_back(SearchCandidate{graph,
                                                estimate_cost(graph, options.target, options.backend_estimates).seconds,
                                                0, "the input graph, unchanged"});
  }
  const bool profiled_in_time = !input || profile(result, options, deadline, std::move(*input));
  if (!profiled_in_time && result.end == SearchEnd::kComplete) result.end = SearchEnd::kTimeout;
  // The profiled answer of a complete search (or of its cached candidates).
  if (!measured.empty() && profiled_in_time && (cached || result.end == SearchEnd::kComplete) &&
      !result.candidates.empty() && result.candidates.front().measured_seconds >= 0) {
    cache_write(options.cache_dir, measured, result.candidates, result.stats.seconds);
  }
  explain_unmeasured(result, options);
  result.stats.seconds = seconds_since(started);
  return result;
}

}  // namespace yirage::search
