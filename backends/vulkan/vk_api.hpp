// The Vulkan API, opened at run time from the loader (libvulkan.so.1, or the file named by
// YIRAGE_VULKAN_LIBRARY) with dlopen, never linked: the plugin must load on machines without one.
// The Khronos headers are used for their types only. Entries are resolved through
// vkGetInstanceProcAddr for one VkInstance (device entries through the loader's trampolines).
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

#include "entry_guard.hpp"

namespace yirage::vulkan {

// clang-format off: one function per line
#define YIRAGE_VULKAN_GLOBAL_FUNCTIONS(X) \
  X(vkCreateInstance)                     \
  X(vkEnumerateInstanceLayerProperties)   \
  X(vkEnumerateInstanceExtensionProperties)

#define YIRAGE_VULKAN_INSTANCE_FUNCTIONS(X)   \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkDestroyDevice)                          \
  X(vkGetDeviceQueue)                         \
  X(vkDeviceWaitIdle)                         \
  X(vkQueueSubmit)                            \
  X(vkQueueWaitIdle)                          \
  X(vkCreateBuffer)                           \
  X(vkDestroyBuffer)                          \
  X(vkGetBufferMemoryRequirements)            \
  X(vkAllocateMemory)                         \
  X(vkFreeMemory)                             \
  X(vkBindBufferMemory)                       \
  X(vkMapMemory)                              \
  X(vkUnmapMemory)                            \
  X(vkCreateShaderModule)                     \
  X(vkDestroyShaderModule)                    \
  X(vkCreateDescriptorSetLayout)              \
  X(vkDestroyDescriptorSetLayout)             \
  X(vkCreatePipelineLayout)                   \
  X(vkDestroyPipelineLayout)                  \
  X(vkCreateComputePipelines)                 \
  X(vkDestroyPipeline)                        \
  X(vkCreatePipelineCache)                    \
  X(vkDestroyPipelineCache)                   \
  X(vkGetPipelineCacheData)                   \
  X(vkCreateDescriptorPool)                   \
  X(vkDestroyDescriptorPool)                  \
  X(vkAllocateDescriptorSets)                 \
  X(vkUpdateDescriptorSets)                   \
  X(vkCreateCommandPool)                      \
  X(vkDestroyCommandPool)                     \
  X(vkAllocateCommandBuffers)                 \
  X(vkFreeCommandBuffers)                     \
  X(vkBeginCommandBuffer)                     \
  X(vkEndCommandBuffer)                       \
  X(vkCmdBindPipeline)                        \
  X(vkCmdBindDescriptorSets)                  \
  X(vkCmdPushConstants)                       \
  X(vkCmdDispatch)                            \
  X(vkCmdPipelineBarrier)                     \
  X(vkCmdCopyBuffer)                          \
  X(vkCmdWriteTimestamp)                      \
  X(vkCmdResetQueryPool)                      \
  X(vkCreateQueryPool)                        \
  X(vkDestroyQueryPool)                       \
  X(vkGetQueryPoolResults)                    \
  X(vkCreateFence)                            \
  X(vkDestroyFence)                           \
  X(vkWaitForFences)                          \
  X(vkGetFenceStatus)
// clang-format on

// The loader's global entries, opened once per process.
struct Loader {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define YIRAGE_DECLARE(name) PFN_##name name = nullptr;
  YIRAGE_VULKAN_GLOBAL_FUNCTIONS(YIRAGE_DECLARE)
#undef YIRAGE_DECLARE
  std::string library;  // the file opened

  // nullptr with `why` set when there is no loader or it lacks an entry.
  static const Loader *load(std::string &why);
};

// One VkInstance's entries.
struct Api {
#define YIRAGE_DECLARE(name) PFN_##name name = nullptr;
  YIRAGE_VULKAN_INSTANCE_FUNCTIONS(YIRAGE_DECLARE)
#undef YIRAGE_DECLARE
  // VK_EXT_debug_utils, present only where validation was asked for (YIRAGE_VULKAN_VALIDATION).
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;

  // The entries of `instance`; throws Error(kBackend) naming one that is missing.
  static Api resolve(const Loader &loader, VkInstance instance);
};

// A Vulkan struct of `type` chained to `next`, every other field zero.
template <class T>
T vk_struct(VkStructureType type, void *next = nullptr) {
  T value{};
  value.sType = type;
  value.pNext = next;
  return value;
}

// Throws NativeError (the VkResult as native code; OUT_OF_MEMORY for VK_ERROR_OUT_OF_HOST_MEMORY
// and VK_ERROR_OUT_OF_DEVICE_MEMORY, BACKEND otherwise) unless result is VK_SUCCESS.
void check(VkResult result, const std::string &what);

// "VK_ERROR_DEVICE_LOST" for -4, …; "VkResult <n>" for codes it does not know.
std::string result_name(VkResult result);

}  // namespace yirage::vulkan
