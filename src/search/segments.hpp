// Large graphs searched in segments (docs/search.md, "Segments"). The search fuses a suffix of
// a graph into one customized operator after at most a few pre-defined ones, so a whole model
// layer (thirty operators, outputs at several depths) gives it nothing to fuse. Such a graph is
// cut into consecutive segments of a few operators each, where little data crosses the cuts; each
// segment is superoptimized on its own as a graph (its own candidates, fingerprints, profiling
// and cache entry), and the segments' answers are put back together into one graph, which is
// fingerprinted against the whole input graph and measured beside it.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/kernel_graph.hpp"
#include "search/superoptimizer.hpp"

namespace yirage::search {

// Operator indices of the input graph (inputs left out), in the graph's order.
using Segment = std::vector<size_t>;

// The graph's operators in consecutive segments of at most `max_ops` operators each (views
// count as none), cut where the fewest bytes cross (then into the fewest segments, each
// reading at most `max_inputs` + 1 tensors where it can); one segment when the graph has at most
// `segment_above_ops` operators.
std::vector<Segment> plan_segments(const KernelGraph &graph, int segment_above_ops, int max_ops, int max_inputs = 4);

// A segment as a graph of its own: its inputs are the tensors it reads that it does not compute
// (graph inputs or earlier segments' results), in the order it first reads them; its outputs
// are what it computes that later operators read or the graph returns, in the order computed.
struct SegmentGraph {
  KernelGraph graph;
  std::vector<TensorId> inputs, outputs;  // the whole graph's tensors they stand for
};
SegmentGraph segment_graph(const KernelGraph &graph, const Segment &segment);

// The whole graph with each segment replaced by `chosen[i]`, a graph with segment i's inputs and
// outputs (in order), the graph's outputs marked in their order.
KernelGraph join_segments(const KernelGraph &graph, const std::vector<SegmentGraph> &segments,
                          const std::vector<const KernelGraph *> &chosen);

// superoptimize() on a graph of several segments: each segment searched with a share of the
// budget (options.measure_for measuring it on the device), the answers joined, fingerprinted
// against `graph`, and measured beside it (options.measure). Candidates: the joined graph (where
// a segment changed) and the input graph, fastest first where measured.
SearchResult superoptimize_in_segments(const KernelGraph &graph, const SearchOptions &options,
                                       const std::vector<Segment> &segments);

}  // namespace yirage::search
