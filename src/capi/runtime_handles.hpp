// The objects behind yirage_context, yirage_device and yirage_kernel. A context's plugins are
// shared with the kernels compiled from it, so a kernel outlives its context safely.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "capi/handles.hpp"
#include "runtime/compiled_graph.hpp"
#include "runtime/context.hpp"

struct yirage_device_s {
  std::shared_ptr<const yirage::runtime::Context> context;
  const yirage::runtime::Plugin *plugin;
  int32_t index;
};

struct yirage_context_s {
  std::shared_ptr<const yirage::runtime::Context> context;
  std::vector<std::unique_ptr<yirage_device_s>> devices;  // handed out, registered
  std::string load_errors;                                // one line per skipped plugin
};

struct yirage_kernel_s {
  std::shared_ptr<const yirage::runtime::Context> context;
  std::unique_ptr<yirage::runtime::CompiledGraph> compiled;
};

// Device memory allocated through a plugin (yirage_buffer). The storage is shared with the DLPack
// tensors exported from it, so it lives until the handle and every export are released; it
// holds the context, which holds the plugin.
struct yirage_buffer_s {
  struct Storage {
    std::shared_ptr<const yirage::runtime::Context> context;
    const yirage::runtime::Plugin *plugin;
    int32_t device;
    yirage::runtime::Buffer buffer;
    size_t bytes;
  };
  std::shared_ptr<Storage> storage;
};

namespace yirage::capi {

// The live handle of `kind` behind `handle` (named `role`, of C type `type`), or
// invalid_argument naming `function`.
template <class Handle>
Handle &checked(const char *function, const char *role, const Handle *handle, HandleKind kind, const char *type) {
  if (handle == nullptr) invalid_argument(std::string(function) + ": " + role + " is NULL");
  if (!is_live(handle, kind)) {
    invalid_argument(std::string(function) + ": " + role + " is not a live " + type +
                     " handle (released, or never created)");
  }
  return *const_cast<Handle *>(handle);
}

// The live device behind `device`, or invalid_argument naming `function`.
const yirage_device_s &checked_device(const char *function, const yirage_device *device);

}  // namespace yirage::capi
