#include "capi/handles.hpp"

#include <mutex>
#include <string>
#include <unordered_map>

#include "util/error.hpp"

namespace yirage::capi {

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<const void *, HandleKind> live;
};

Registry &registry() {
  static Registry *instance = new Registry;  // never destroyed: handles may outlive statics
  return *instance;
}

}  // namespace

void register_handle(const void *handle, HandleKind kind) {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  r.live.emplace(handle, kind);
}

void unregister_handle(const void *handle) noexcept {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  r.live.erase(handle);
}

bool is_live(const void *handle, HandleKind kind) noexcept {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  const auto it = r.live.find(handle);
  return it != r.live.end() && it->second == kind;
}

yirage_graph_s &checked_graph(const char *function, const yirage_graph *graph) {
  if (graph == nullptr) invalid_argument(std::string(function) + ": graph is NULL");
  if (!is_live(graph, HandleKind::kGraph)) {
    invalid_argument(std::string(function) +
                     ": graph is not a live yirage_graph handle (released, or never created)");
  }
  return *const_cast<yirage_graph *>(graph);
}

const yirage_tensor_s &checked_tensor(const char *function, const char *role,
                                      const yirage_tensor *tensor, const yirage_graph_s *owner) {
  if (tensor == nullptr) invalid_argument(std::string(function) + ": " + role + " is NULL");
  if (!is_live(tensor, HandleKind::kTensor)) {
    invalid_argument(std::string(function) + ": " + role +
                     " is not a live yirage_tensor handle (its graph was released, or it was "
                     "never created)");
  }
  if (owner != nullptr && tensor->owner != owner) {
    invalid_argument(std::string(function) + ": " + role + " belongs to another graph");
  }
  return *tensor;
}

void adopt_new_tensors(yirage_graph_s &graph, const KernelGraph::Checkpoint &checkpoint) {
  const size_t first = graph.tensor_handles.size();
  try {
    for (size_t id = first; id < graph.graph.num_tensors(); ++id) {
      auto handle =
          std::make_unique<yirage_tensor_s>(yirage_tensor_s{&graph, static_cast<TensorId>(id)});
      graph.tensor_handles.push_back(nullptr);  // may throw: nothing registered yet
      register_handle(handle.get(), HandleKind::kTensor);
      graph.tensor_handles.back() = std::move(handle);
    }
  } catch (...) {
    for (size_t id = first; id < graph.tensor_handles.size(); ++id) {
      unregister_handle(graph.tensor_handles[id].get());
    }
    graph.tensor_handles.resize(first);
    graph.graph.rollback(checkpoint);
    throw;
  }
}

}  // namespace yirage::capi
