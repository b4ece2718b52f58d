// The objects behind the opaque handles of yirage.h, and the process-wide registry of live
// handles that lets every entry point refuse NULL, released or made-up handles before touching
// them.
#pragma once

#include <memory>
#include <vector>

#include "ir/kernel_graph.hpp"
#include "yirage.h"

struct yirage_tensor_s {
  yirage_graph_s *owner;
  yirage::TensorId id;
};

struct yirage_graph_s {
  yirage::KernelGraph graph;
  // One handle per graph tensor, indexed by TensorId; always as long as graph.num_tensors().
  std::vector<std::unique_ptr<yirage_tensor_s>> tensor_handles;
};

namespace yirage::capi {

enum class HandleKind { kGraph, kTensor };

// Registry operations; all thread-safe. register_handle may throw bad_alloc.
void register_handle(const void *handle, HandleKind kind);
void unregister_handle(const void *handle) noexcept;
bool is_live(const void *handle, HandleKind kind) noexcept;

// The live graph behind `graph`, or throws invalid_argument naming `function`.
yirage_graph_s &checked_graph(const char *function, const yirage_graph *graph);

// The live tensor behind `tensor`, or throws; `owner`, when given, must be its graph.
const yirage_tensor_s &checked_tensor(const char *function, const char *role,
                                      const yirage_tensor *tensor,
                                      const yirage_graph_s *owner = nullptr);

// Creates handles for the tensors the last build added to the graph, rolling the graph back to
// `checkpoint` (and leaving no handle behind) if that fails.
void adopt_new_tensors(yirage_graph_s &graph, const KernelGraph::Checkpoint &checkpoint);

}  // namespace yirage::capi
