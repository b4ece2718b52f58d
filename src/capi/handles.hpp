// The objects behind the opaque handles of yirage.h, and the process-wide registry of live
// handles that lets every entry point refuse NULL, released or made-up handles before touching
// them.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/block_graph.hpp"
#include "ir/kernel_graph.hpp"
#include "util/error.hpp"
#include "yirage.h"

// A tensor of a kernel graph or of a block graph; `owner` is the yirage_graph_s or
// yirage_block_graph_s handle that owns it.
struct yirage_tensor_s {
  yirage::OperatorGraph *graph;
  const void *owner;
  yirage::TensorId id;
};

namespace yirage::capi {

enum class HandleKind {
  kGraph,
  kBlockGraph,
  kTensor,
  kBlob,
  kSearchResult,
  kContext,
  kDevice,
  kKernel,
  kBuffer,
  kSearchPlan
};

// What both graph handles hold: the graph, and one tensor handle per graph tensor, indexed by
// TensorId (always as long as graph.num_tensors()).
template <class Graph>
struct GraphHolder {
  template <class... Args>
  explicit GraphHolder(Args &&...args) : graph(std::forward<Args>(args)...) {}
  Graph graph;
  std::vector<std::unique_ptr<yirage_tensor_s>> tensor_handles;
};

}  // namespace yirage::capi

struct yirage_blob_s {
  std::vector<uint8_t> bytes;
};

struct yirage_graph_s : yirage::capi::GraphHolder<yirage::KernelGraph> {
  static constexpr auto kKind = yirage::capi::HandleKind::kGraph;
  static constexpr const char *kName = "yirage_graph";
  static constexpr const char *kArgument = "graph";  // the C ABI's parameter name
};

struct yirage_block_graph_s : yirage::capi::GraphHolder<yirage::BlockGraph> {
  static constexpr auto kKind = yirage::capi::HandleKind::kBlockGraph;
  static constexpr const char *kName = "yirage_block_graph";
  static constexpr const char *kArgument = "block_graph";
  using GraphHolder::GraphHolder;
  // The kernel-graph tensors read by the input iterators, in order, and their graph.
  std::vector<const yirage_tensor_s *> inputs;
  const yirage_graph_s *source = nullptr;
};

namespace yirage::capi {

// Registry operations; all thread-safe. register_handle may throw bad_alloc.
void register_handle(const void *handle, HandleKind kind);
void unregister_handle(const void *handle) noexcept;
bool is_live(const void *handle, HandleKind kind) noexcept;

// The live graph behind `handle` (a yirage_graph or yirage_block_graph), or throws
// invalid_argument naming `function`.
template <class Holder>
Holder &checked_holder(const char *function, const Holder *handle) {
  if (handle == nullptr) invalid_argument(std::string(function) + ": " + Holder::kArgument + " is NULL");
  if (!is_live(handle, Holder::kKind)) {
    invalid_argument(std::string(function) + ": " + Holder::kArgument + " is not a live " + Holder::kName +
                     " handle (released, or never created)");
  }
  return *const_cast<Holder *>(handle);
}

inline yirage_graph_s &checked_graph(const char *function, const yirage_graph *graph) {
  return checked_holder(function, graph);
}

// The live tensor behind `tensor`, or throws; `owner`, when given, must be its graph handle.
const yirage_tensor_s &checked_tensor(const char *function, const char *role, const yirage_tensor *tensor,
                                      const void *owner = nullptr);

// Creates handles for the tensors the last build added to the graph, rolling the graph back to
// `checkpoint` (and leaving no handle behind) if that fails.
template <class Holder>
void adopt_new_tensors(Holder &holder, const OperatorGraph::Checkpoint &checkpoint) {
  const size_t first = holder.tensor_handles.size();
  try {
    for (size_t id = first; id < holder.graph.num_tensors(); ++id) {
      auto handle =
          std::make_unique<yirage_tensor_s>(yirage_tensor_s{&holder.graph, &holder, static_cast<TensorId>(id)});
      holder.tensor_handles.push_back(nullptr);  // may throw: nothing registered yet
      register_handle(handle.get(), HandleKind::kTensor);
      holder.tensor_handles.back() = std::move(handle);
    }
  } catch (...) {
    for (size_t id = first; id < holder.tensor_handles.size(); ++id) {
      unregister_handle(holder.tensor_handles[id].get());
    }
    holder.tensor_handles.resize(first);
    holder.graph.rollback(checkpoint);
    throw;
  }
}

// Hands a graph out as a new handle with one handle per tensor; the caller owns it.
yirage_graph *adopt_graph(KernelGraph &&graph);

// Hands bytes out as a new blob; the caller owns it.
yirage_blob *adopt_blob(std::vector<uint8_t> &&bytes);

// Unregisters a graph handle and its tensors, then deletes it. Ignores NULL and dead handles.
template <class Holder>
void release_holder(Holder *holder) noexcept {
  if (holder == nullptr || !is_live(holder, Holder::kKind)) return;
  for (const auto &handle : holder->tensor_handles) unregister_handle(handle.get());
  unregister_handle(holder);
  delete holder;
}

}  // namespace yirage::capi
