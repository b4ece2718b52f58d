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

namespace yirage::capi {

// The live device behind `device`, or invalid_argument naming `function`.
const yirage_device_s &checked_device(const char *function, const yirage_device *device);

}  // namespace yirage::capi
