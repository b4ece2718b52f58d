#include "search/segments.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "ir/rebuild.hpp"
#include "search/cost_model.hpp"
#include "serialize/graph_file.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "verify/equivalence.hpp"

namespace yirage::search {

namespace {

using Clock = std::chrono::steady_clock;

// A cut costs the bytes of the tensors crossing it (each written, then read again, where one
// segment could have kept it on chip), a norm's result 16 times over (a cut after it forfeits a
// norm fused into the product that reads it), and kCutBytes more: the least data crossing first,
// then the fewest segments. A segment costs kOutputBytes per result beyond its first: the search
// fuses a segment's last operators into one customized operator, which rarely computes several
// results of different shapes.
constexpr int64_t kCutBytes = 16384, kOutputBytes = 16384, kNormFactor = 16;
// A segment reading more tensors than a customized operator may, and one more for a pre-defined
// operator before it, costs this much per tensor beyond.
constexpr int64_t kInputBytes = 16384;

// Where every segment's search must end, as a share of the whole budget: the rest is for
// fingerprinting and measuring the joined graph beside the input graph.
constexpr double kSegmentsShare = 0.85;
// A segment with less time than this is not searched.
constexpr double kLeastSegmentSeconds = 0.05;

int weight(const Operator &op) {
  return is_view(op.kind) ? 0 : 1;
}

bool same_graph(const KernelGraph &a, const KernelGraph &b) {
  return serialize::graph_to_bytes(a, serialize::GraphFormat::kBinary) ==
         serialize::graph_to_bytes(b, serialize::GraphFormat::kBinary);
}

}  // namespace

std::vector<Segment> plan_segments(const KernelGraph &graph, int segment_above_ops, int max_ops, int max_inputs) {
  if (max_ops < 1) invalid_argument("plan_segments: max_ops must be at least 1");
  const auto &all = graph.operators();
  Segment ops;
  int total = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].kind == OpKind::kInput) continue;
    ops.push_back(i);
    total += weight(all[i]);
  }
  if (segment_above_ops <= 0 || total <= segment_above_ops) return {ops};
  // crossing[p]: what a cut after ops[p] costs (kCutBytes above) for the tensors that ops[0..p]
  // compute and ops[p+1..] read.
  const size_t n = ops.size();
  std::vector<int64_t> produced(graph.num_tensors(), -1), last_read(graph.num_tensors(), -1);
  std::vector<bool> returned(graph.num_tensors(), false);
  for (TensorId t : graph.outputs()) returned[static_cast<size_t>(t)] = true;
  for (size_t p = 0; p < n; ++p) {
    for (TensorId t : all[ops[p]].inputs) last_read[static_cast<size_t>(t)] = static_cast<int64_t>(p);
    for (TensorId t : all[ops[p]].outputs) produced[static_cast<size_t>(t)] = static_cast<int64_t>(p);
  }
  std::vector<int64_t> crossing(n + 1, 0);
  for (size_t t = 0; t < produced.size(); ++t) {
    if (produced[t] < 0 || last_read[t] <= produced[t]) continue;
    const auto p = static_cast<size_t>(produced[t]);
    const int64_t factor = all[ops[p]].kind == OpKind::kRmsNorm ? kNormFactor : 1;
    const auto bytes = factor * static_cast<int64_t>(tensor_bytes(graph.tensor(static_cast<TensorId>(t))));
    crossing[p] += bytes;
    crossing[static_cast<size_t>(last_read[t])] -= bytes;
  }
  for (size_t p = 1; p < n; ++p) crossing[p] += crossing[p - 1];
  // The tensors ops[i..j) read and do not compute (graph inputs too).
  auto reads = [&](size_t i, size_t j) {
    std::set<TensorId> outside;
    for (size_t p = i; p < j; ++p) {
      for (TensorId t : all[ops[p]].inputs) {
        if (produced[static_cast<size_t>(t)] < static_cast<int64_t>(i)) outside.insert(t);
      }
    }
    return static_cast<int64_t>(outside.size());
  };
  // The results of ops[i..j) that ops[j..] read or the graph returns.
  auto results = [&](size_t i, size_t j) {
    int64_t count = 0;
    for (size_t p = i; p < j; ++p) {
      for (TensorId t : all[ops[p]].outputs) {
        count += returned[static_cast<size_t>(t)] || last_read[static_cast<size_t>(t)] >= static_cast<int64_t>(j);
      }
    }
    return count;
  };
  // cost[j]: the cheapest cuts of ops[0..j); from[j]: where its last segment starts.
  std::vector<int64_t> cost(n + 1, std::numeric_limits<int64_t>::max()), from(n + 1, 0);
  cost[0] = 0;
  for (size_t j = 1; j <= n; ++j) {
    int ops_in = 0;
    for (size_t i = j; i-- > 0;) {
      ops_in += weight(all[ops[i]]);
      if (ops_in > max_ops) break;
      const int64_t c = cost[i] + (i == 0 ? 0 : crossing[i - 1] + kCutBytes) +
                        kOutputBytes * std::max<int64_t>(0, results(i, j) - 1) +
                        kInputBytes * std::max<int64_t>(0, reads(i, j) - (max_inputs + 1));
      if (c < cost[j]) {
        cost[j] = c;
        from[j] = static_cast<int64_t>(i);
      }
    }
  }
  std::vector<Segment> segments;
  for (size_t j = n; j > 0; j = static_cast<size_t>(from[j])) {
    segments.emplace(segments.begin(), ops.begin() + from[j], ops.begin() + static_cast<int64_t>(j));
  }
  return segments;
}

SegmentGraph segment_graph(const KernelGraph &graph, const Segment &segment) {
  if (segment.empty()) invalid_argument("segment_graph: the segment is empty");
  const auto &all = graph.operators();
  SegmentGraph s;
  std::vector<TensorId> local(graph.num_tensors(), -1);
  for (size_t i : segment) {
    const Operator &op = all.at(i);
    if (op.kind == OpKind::kInput) invalid_argument("segment_graph: operator " + std::to_string(i) + " is an input");
    std::vector<TensorId> inputs;
    for (TensorId t : op.inputs) {
      TensorId &mapped = local[static_cast<size_t>(t)];
      if (mapped < 0) {
        mapped = s.graph.new_input(graph.tensor(t).dims, graph.tensor(t).dtype);
        s.inputs.push_back(t);
      }
      inputs.push_back(mapped);
    }
    const std::vector<TensorId> outputs = add_operator(s.graph, op, inputs);
    for (size_t k = 0; k < outputs.size(); ++k) local[static_cast<size_t>(op.outputs[k])] = outputs[k];
  }
  // What later operators read or the graph returns, in the order computed.
  std::vector<bool> needed(graph.num_tensors(), false);
  for (size_t i = segment.back() + 1; i < all.size(); ++i) {
    for (TensorId t : all[i].inputs) needed[static_cast<size_t>(t)] = true;
  }
  for (TensorId t : graph.outputs()) needed[static_cast<size_t>(t)] = true;
  for (size_t i : segment) {
    for (TensorId t : all[i].outputs) {
      if (!needed[static_cast<size_t>(t)]) continue;
      s.graph.mark_output(local[static_cast<size_t>(t)]);
      s.outputs.push_back(t);
    }
  }
  return s;
}

KernelGraph join_segments(const KernelGraph &graph, const std::vector<SegmentGraph> &segments,
                          const std::vector<const KernelGraph *> &chosen) {
  if (chosen.size() != segments.size()) invalid_argument("join_segments: one graph per segment");
  KernelGraph joined;
  std::vector<TensorId> at(graph.num_tensors(), -1);
  for (TensorId t : graph.inputs())
    at[static_cast<size_t>(t)] = joined.new_input(graph.tensor(t).dims, graph.tensor(t).dtype);
  for (size_t s = 0; s < segments.size(); ++s) {
    const KernelGraph &c = *chosen[s];
    if (c.inputs().size() != segments[s].inputs.size() || c.outputs().size() != segments[s].outputs.size()) {
      invalid_argument("join_segments: the graph for segment " + std::to_string(s) + " has " +
                       std::to_string(c.inputs().size()) + " inputs and " + std::to_string(c.outputs().size()) +
                       " outputs; the segment has " + std::to_string(segments[s].inputs.size()) + " and " +
                       std::to_string(segments[s].outputs.size()));
    }
    std::vector<TensorId> local(c.num_tensors(), -1);
    for (size_t k = 0; k < c.inputs().size(); ++k) {
      local[static_cast<size_t>(c.inputs()[k])] = at[static_cast<size_t>(segments[s].inputs[k])];
    }
    for (const Operator &op : c.operators()) {
      if (op.kind == OpKind::kInput) continue;
      std::vector<TensorId> inputs;
      for (TensorId t : op.inputs) inputs.push_back(local[static_cast<size_t>(t)]);
      const std::vector<TensorId> outputs = add_operator(joined, op, inputs);
      for (size_t k = 0; k < outputs.size(); ++k) local[static_cast<size_t>(op.outputs[k])] = outputs[k];
    }
    for (size_t k = 0; k < c.outputs().size(); ++k) {
      at[static_cast<size_t>(segments[s].outputs[k])] = local[static_cast<size_t>(c.outputs()[k])];
    }
  }
  for (TensorId t : graph.outputs()) joined.mark_output(at[static_cast<size_t>(t)]);
  return joined;
}

SearchResult superoptimize_in_segments(const KernelGraph &graph, const SearchOptions &options,
                                       const std::vector<Segment> &segments) {
  const auto started = Clock::now();
  const auto deadline =
      started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.time_budget_seconds));
  std::vector<SegmentGraph> parts;
  int weights_left = 0;
  for (const Segment &s : segments) {
    parts.push_back(segment_graph(graph, s));
    weights_left += 1 + static_cast<int>(s.size());
  }
  SearchResult result;
  // Each segment's answer: a candidate of its search, or the segment itself.
  std::vector<SearchCandidate> answers;
  std::vector<bool> found;  // whether answers[i] came from the search (not the segment itself)
  SearchProgress before;    // the finished segments' counts, added to the next one's progress
  for (size_t i = 0; i < parts.size(); ++i) {
    const KernelGraph &part = parts[i].graph;
    const int w = 1 + static_cast<int>(segments[i].size());
    SearchCandidate answer{part, estimate_cost(part, options.target, options.backend_estimates).seconds, 0,
                           "unchanged"};
    bool found_one = false;
    // This segment's share of what is left of the segments' part of the budget; none left, or
    // cancelled: the segment stays as it is.
    const double share = (options.time_budget_seconds * kSegmentsShare - seconds_since(started)) * w / weights_left;
    const bool cancelled = result.end == SearchEnd::kCancelled || (options.cancelled && options.cancelled());
    if (cancelled) result.end = SearchEnd::kCancelled;
    if (!cancelled && share < kLeastSegmentSeconds && result.end == SearchEnd::kComplete)
      result.end = SearchEnd::kTimeout;
    if (!cancelled && share >= kLeastSegmentSeconds) {
      SearchOptions o = options;
      o.segment_above_ops = 0;
      o.time_budget_seconds = share;
      o.measure = options.measure_for ? options.measure_for(part) : nullptr;
      if (options.progress) {
        o.progress = [&options, before](const SearchProgress &p) {
          options.progress({before.states + p.states, before.candidates + p.candidates, p.seconds});
        };
      }
      SearchResult r;
      try {
        r = superoptimize(part, o);
      } catch (const Error &e) {
        // A segment the search refuses (one holding a customized operator) stays as it is; one
        // the fingerprints cannot check (exp of exp) answers with itself, as any graph does.
        if (e.code() != ErrorCode::kUnsupported) throw;
      }
      add_counts(result.stats, r.stats);
      before.states += r.stats.states;
      before.candidates += r.stats.candidates;
      if (result.end == SearchEnd::kComplete) result.end = r.end;
      for (ProfileRecord &p : r.profiled) {
        p.description = "segment " + std::to_string(i + 1) + ": " + p.description;
        result.profiled.push_back(std::move(p));
      }
      // Measured: the fastest correct candidate (the segment itself among them); not measured:
      // the cheapest estimate, where it is below the segment's own.
      if (!r.candidates.empty()) {
        SearchCandidate &best = r.candidates.front();
        const bool better = o.measure ? best.measured_seconds >= 0 : best.estimated_seconds < answer.estimated_seconds;
        if (better && !same_graph(best.graph, part)) {
          answer = std::move(best);
          found_one = true;
        }
      }
    }
    weights_left -= w;
    std::string ops;
    for (size_t k : segments[i]) ops += std::string(ops.empty() ? "" : " ") + op_name(graph.operators()[k].kind);
    util::log_line(util::LogLevel::kDebug, "search: segment " + std::to_string(i + 1) + " (" + ops + "; " +
                                               std::to_string(parts[i].inputs.size()) + " inputs, " +
                                               std::to_string(parts[i].outputs.size()) +
                                               " outputs): " + answer.description);
    answers.push_back(std::move(answer));
    found.push_back(found_one);
  }
  // The input graph, and the segments' answers joined where one of them changed its segment.
  const double input_estimate = estimate_cost(graph, options.target, options.backend_estimates).seconds;
  result.candidates.push_back(SearchCandidate{graph, input_estimate, 0, "the input graph, unchanged"});
  std::vector<const KernelGraph *> chosen;
  std::string description = "in " + std::to_string(parts.size()) + " segments:";
  double estimate = 0;
  bool changed = false;
  for (size_t i = 0; i < answers.size(); ++i) {
    chosen.push_back(&answers[i].graph);
    estimate += answers[i].estimated_seconds;
    changed = changed || found[i];
    description += (i == 0 ? " " : "; ") + std::to_string(i + 1) + ". " + answers[i].description;
  }
  if (changed) {
    KernelGraph joined = join_segments(graph, parts, chosen);
    // Each segment's answer passed its own fingerprints; the joined graph must pass the whole
    // graph's. A graph the fingerprints cannot check (exp of exp) keeps the input graph alone.
    const verify::FingerprintCheck check(graph, {options.verify_trials, options.seed, options.threads});
    std::optional<verify::EquivalenceResult> r;
    try {
      r = check.check(joined);
    } catch (const Error &e) {
      if (e.code() != ErrorCode::kUnsupported) throw;
    }
    if (r) {
      ++result.stats.fingerprint_checks;
      result.stats.fingerprint_seconds += r->seconds;
      if (!r->equivalent) {
        throw Error(ErrorCode::kInternal,
                    "superoptimize: the segments' answers joined differ from the input graph (" + r->reason + ")");
      }
      result.candidates.push_back(SearchCandidate{std::move(joined), estimate, r->trials, std::move(description)});
    }
  }
  if (options.measure) {
    // The input graph first (it is the answer whatever the time), then the joined graph, which
    // is dropped where its run fails or is wrong.
    for (SearchCandidate &c : result.candidates) {
      ProfileRecord record{c.description, c.estimated_seconds, options.measure(c.graph, deadline)};
      if (record.measured.correct) {
        c.measured_seconds = record.measured.seconds;
        c.spread = record.measured.spread;
      } else {
        c.not_measured = "its measurement failed: " + record.measured.error;
      }
      result.profiled.push_back(std::move(record));
    }
    if (result.candidates.size() == 2 && result.candidates.back().measured_seconds < 0) result.candidates.pop_back();
    std::stable_sort(result.candidates.begin(), result.candidates.end(),
                     [](const SearchCandidate &a, const SearchCandidate &b) {
                       const bool am = a.measured_seconds >= 0, bm = b.measured_seconds >= 0;
                       return am != bm ? am : am && a.measured_seconds < b.measured_seconds;
                     });
  } else {
    for (SearchCandidate &c : result.candidates) c.not_measured = "the search had no device to profile on";
    std::stable_sort(
        result.candidates.begin(), result.candidates.end(),
        [](const SearchCandidate &a, const SearchCandidate &b) { return a.estimated_seconds < b.estimated_seconds; });
  }
  result.stats.seconds = seconds_since(started);
  return result;
}

}  // namespace yirage::search
