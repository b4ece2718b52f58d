#include "modules.hpp"

#include <cstdint>

namespace yirage::level_zero {
namespace {

// The log's text, and the log released.
std::string take_log(const Api &api, ze_module_build_log_handle_t log) {
  if (log == nullptr) return "";
  std::string text;
  size_t size = 0;
  if (api.zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS && size > 0) {
    text.assign(size, '\0');
    if (api.zeModuleBuildLogGetString(log, &size, text.data()) != ZE_RESULT_SUCCESS) text.clear();
    text = text.c_str();  // without the NUL
  }
  api.zeModuleBuildLogDestroy(log);
  if (text.size() > kMaxLogBytes) text = text.substr(0, kMaxLogBytes) + "\n[build log truncated]";
  return text;
}

}  // namespace

BuiltKernel build_kernel(const Api &api, const Device &device, const std::string &spirv, const char *symbol,
                         uint32_t group_size) {
  BuiltKernel built;
  const ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC,
                              nullptr,
                              ZE_MODULE_FORMAT_IL_SPIRV,
                              spirv.size(),
                              reinterpret_cast<const uint8_t *>(spirv.data()),
                              "",
                              nullptr};
  ze_module_build_log_handle_t log = nullptr;
  const ze_result_t created = api.zeModuleCreate(device.context, device.id, &desc, &built.module, &log);
  if (created != ZE_RESULT_SUCCESS) {
    const std::string text = take_log(api, log);
    if (built.module != nullptr) api.zeModuleDestroy(built.module);
    throw backend::NativeError(ErrorCode::kBackend,
                               "level_zero: zeModuleCreate (SPIR-V, " + std::to_string(spirv.size()) +
                                   " bytes): " + result_name(created) + (text.empty() ? "" : ":\n" + text),
                               static_cast<int64_t>(created));
  }
  if (log != nullptr) api.zeModuleBuildLogDestroy(log);  // the driver's warnings: nothing to report
  const ze_kernel_desc_t kernel_desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, symbol};
  const ze_result_t kernel = api.zeKernelCreate(built.module, &kernel_desc, &built.kernel);
  if (kernel != ZE_RESULT_SUCCESS) {
    release_kernel(api, built);
    api.check(kernel, std::string("zeKernelCreate(") + symbol + ")");
  }
  const ze_result_t sized = api.zeKernelSetGroupSize(built.kernel, group_size, 1, 1);
  if (sized != ZE_RESULT_SUCCESS) {
    release_kernel(api, built);
    throw backend::NativeError(ErrorCode::kUnsupported,
                               "level_zero: the device refuses a work-group of " + std::to_string(group_size) +
                                   " work-items for this kernel (zeKernelSetGroupSize: " + result_name(sized) + ")",
                               static_cast<int64_t>(sized));
  }
  return built;
}

void release_kernel(const Api &api, BuiltKernel &built) {
  if (built.kernel != nullptr) api.zeKernelDestroy(built.kernel);
  if (built.module != nullptr) api.zeModuleDestroy(built.module);
  built = BuiltKernel{};
}

}  // namespace yirage::level_zero
