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

const yirage_tensor_s &checked_tensor(const char *function, const char *role, const yirage_tensor *tensor,
                                      const void *owner) {
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

yirage_graph *adopt_graph(KernelGraph &&graph) {
  auto handle = std::make_unique<yirage_graph_s>();
  handle->graph = std::move(graph);
  register_handle(handle.get(), HandleKind::kGraph);
  try {
    // On failure this unregisters the tensor handles it made.
    adopt_new_tensors(*handle, OperatorGraph::Checkpoint{0, 0, 0, 0});
  } catch (...) {
    unregister_handle(handle.get());
    throw;
  }
  return handle.release();
}

yirage_blob *adopt_blob(std::vector<uint8_t> &&bytes) {
  auto blob = std::make_unique<yirage_blob_s>();
  blob->bytes = std::move(bytes);
  register_handle(blob.get(), HandleKind::kBlob);
  return blob.release();
}

}  // namespace yirage::capi
