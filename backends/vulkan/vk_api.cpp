#include "vk_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace yirage::vulkan {

const Loader *Loader::load(std::string &why) {
  static Loader loader;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *override_path = std::getenv("YIRAGE_VULKAN_LIBRARY");
    loader.library = override_path != nullptr && *override_path != '\0' ? override_path : "libvulkan.so.1";
    void *handle = dlopen(loader.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char *e = dlerror();
      failure = "vulkan: no loader: " + (e ? std::string(e) : loader.library + " cannot be opened") +
                " (Debian: libvulkan1 and a driver such as mesa-vulkan-drivers)";
      return;
    }
    loader.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(handle, "vkGetInstanceProcAddr"));
    if (loader.vkGetInstanceProcAddr == nullptr) {
      failure = "vulkan: " + loader.library + " lacks vkGetInstanceProcAddr";
      return;
    }
#define YIRAGE_RESOLVE(name)                                                                       \
  loader.name = reinterpret_cast<PFN_##name>(loader.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name)); \
  if (loader.name == nullptr && failure.empty()) failure = "vulkan: " + loader.library + " lacks " #name;
    YIRAGE_VULKAN_GLOBAL_FUNCTIONS(YIRAGE_RESOLVE)
#undef YIRAGE_RESOLVE
  });
  why = failure;
  return failure.empty() ? &loader : nullptr;
}

Api Api::resolve(const Loader &loader, VkInstance instance) {
  Api api;
#define YIRAGE_RESOLVE(name)                                                                                      \
  api.name = reinterpret_cast<PFN_##name>(loader.vkGetInstanceProcAddr(instance, #name));                         \
  if (api.name == nullptr) {                                                                                      \
    throw Error(ErrorCode::kBackend, "vulkan: " + loader.library + " gives no " #name " (Vulkan 1.1 is needed)"); \
  }
  YIRAGE_VULKAN_INSTANCE_FUNCTIONS(YIRAGE_RESOLVE)
#undef YIRAGE_RESOLVE
  api.vkCreateDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      loader.vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  api.vkDestroyDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      loader.vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
  return api;
}

void check(VkResult result, const std::string &what) {
  if (result == VK_SUCCESS) return;
  const bool memory = result == VK_ERROR_OUT_OF_HOST_MEMORY || result == VK_ERROR_OUT_OF_DEVICE_MEMORY;
  throw backend::NativeError(memory ? ErrorCode::kOutOfMemory : ErrorCode::kBackend,
                             "vulkan: " + what + ": " + result_name(result), result);
}

std::string result_name(VkResult result) {
  switch (result) {
#define YIRAGE_NAME(c) \
  case c: return #c;
    YIRAGE_NAME(VK_SUCCESS)
    YIRAGE_NAME(VK_NOT_READY)
    YIRAGE_NAME(VK_TIMEOUT)
    YIRAGE_NAME(VK_INCOMPLETE)
    YIRAGE_NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
    YIRAGE_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    YIRAGE_NAME(VK_ERROR_INITIALIZATION_FAILED)
    YIRAGE_NAME(VK_ERROR_DEVICE_LOST)
    YIRAGE_NAME(VK_ERROR_MEMORY_MAP_FAILED)
    YIRAGE_NAME(VK_ERROR_LAYER_NOT_PRESENT)
    YIRAGE_NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
    YIRAGE_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
    YIRAGE_NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
    YIRAGE_NAME(VK_ERROR_TOO_MANY_OBJECTS)
    YIRAGE_NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
    YIRAGE_NAME(VK_ERROR_FRAGMENTED_POOL)
    YIRAGE_NAME(VK_ERROR_UNKNOWN)
    YIRAGE_NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
    YIRAGE_NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    YIRAGE_NAME(VK_ERROR_FRAGMENTATION)
    YIRAGE_NAME(VK_ERROR_INVALID_SHADER_NV)
    YIRAGE_NAME(VK_PIPELINE_COMPILE_REQUIRED)
#undef YIRAGE_NAME
    default: return "VkResult " + std::to_string(static_cast<int>(result));
  }
}

}  // namespace yirage::vulkan
