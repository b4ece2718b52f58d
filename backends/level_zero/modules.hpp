// Level Zero modules from SPIR-V (ZE_MODULE_FORMAT_IL_SPIRV): the driver compiles the module for
// its GPU when it is created; a module that fails to build is an error with the driver's build
// log. The driver keeps its own cache of native code; ours holds the SPIR-V
// (spirv_compiler.hpp).
#pragma once

#include <string>

#include "devices.hpp"

namespace yirage::level_zero {

// A module and its one kernel, with its work-group size set; both released by release_kernel.
struct BuiltKernel {
  ze_module_handle_t module = nullptr;
  ze_kernel_handle_t kernel = nullptr;
};

// Longest build log kept in an error (the error channel holds 4 KiB).
constexpr size_t kMaxLogBytes = 3000;

// The kernel `symbol` of `spirv` for `device`, launched in work-groups of `group_size`
// work-items. A failed build throws NativeError(kBackend) with the driver's code and build log; a
// group size the kernel cannot have, NativeError(kUnsupported).
BuiltKernel build_kernel(const Api &api, const Device &device, const std::string &spirv, const char *symbol,
                         uint32_t group_size);

void release_kernel(const Api &api, BuiltKernel &built);

}  // namespace yirage::level_zero
