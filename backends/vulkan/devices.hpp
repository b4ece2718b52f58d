// The Vulkan devices a plugin instance serves: one VkInstance, and every physical device with a
// compute queue as one yirage device, each with its own VkDevice, queue, command pool, timestamp
// queries and pipeline cache, described for the search (yirage_backend_device_info) from what the
// device reports (docs/backends/vulkan.md).
//
// Work reaches a device's one queue through submit(): each command buffer starts with a global
// memory barrier, so that everything submitted runs as in one in-order stream (a kernel sees the
// writes of every earlier kernel and copy).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vk_api.hpp"
#include "vulkan/codegen/glsl_source.hpp"
#include "yirage_backend.h"

namespace yirage::vulkan {

// A command buffer on its way through the queue, with what it holds until it completes.
struct Submission {
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool descriptors = VK_NULL_HANDLE;  // a launch's descriptor set, or none
};

// A buffer with its own memory.
struct Memory {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void *mapped = nullptr;  // host-visible memory only
  VkDeviceSize size = 0;   // the VkBuffer's size
};

constexpr uint32_t kTimestampQueries = 4096;
constexpr size_t kStagingBytes = size_t{16} << 20;

struct Device {
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkQueryPool timestamps = VK_NULL_HANDLE;  // none where the queue has no timestamps
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  std::string pipeline_cache_path;
  std::string name, driver;
  uint32_t api_version = 0;
  bool storage16 = false;              // storageBuffer16BitAccess
  bool float16 = false;                // shaderFloat16 (reported; the generated code computes in float32)
  bool nv_cooperative_matrix = false;  // VK_NV_cooperative_matrix (reported; not used yet)
  double timestamp_period = 1;         // nanoseconds per tick
  uint32_t timestamp_bits = 0;         // valid bits; 0: no timestamps on this queue
  uint32_t max_groups[3] = {65535, 65535, 65535};
  VkDeviceSize max_alloc_bytes = 0;           // maxMemoryAllocationSize
  VkDeviceSize max_storage_range = 0;         // maxStorageBufferRange
  VkPhysicalDeviceMemoryProperties memory{};  // buffers take the first fitting type (devices.cpp: allocate)
  codegen::VulkanTarget target;
  yirage_backend_device_info info{};

  std::mutex lock;  // the queue, the command pool, in_flight, free_queries, lost
  std::vector<Submission> in_flight;
  std::vector<uint32_t> free_queries;
  std::string lost;  // set once the device was lost: every later call fails with it

  std::mutex staging_lock;  // the staging buffer of host copies
  Memory staging;
};

// What create() opened: the instance and its devices, or why there are none.
struct Instance {
  const Loader *loader = nullptr;
  Api api;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<Device>> devices;
  std::string reason;  // why there are no devices
  // YIRAGE_VULKAN_VALIDATION: the validation layer's messages, counted and logged.
  std::function<void(const std::string &)> log_warning;
  std::atomic<uint64_t> validation_messages{0};
  std::mutex last_message_lock;
  std::string last_validation_message;
};

// Opens the instance and every device (at most kMaxDevices) into `out`. Where there are none,
// out.reason says why; a device that could not be opened is left out and named in `skipped`.
// `cache_dir` holds the pipeline caches.
constexpr size_t kMaxDevices = 64;
void open_instance(Instance &out, const std::string &cache_dir, std::vector<std::string> &skipped);

// Waits for the devices, keeps their pipeline caches, releases everything.
void close_instance(Instance &instance);

// Records `record` into a command buffer after the global barrier and submits it; with `wait`,
// returns once it completed. `descriptors` is released when it completed. A lost device throws
// with its VkResult, and the device stays lost.
void submit(const Api &api, Device &d, const std::function<void(VkCommandBuffer)> &record, bool wait,
            VkDescriptorPool descriptors = VK_NULL_HANDLE);

// Waits for everything submitted to the device.
void wait_idle(const Api &api, Device &d);

// A buffer of `bytes` (at least 16, whole 16-byte words) usable as storage and copy source and
// destination, in device-local memory, or host-visible coherent memory (mapped) with `host`.
Memory allocate(const Api &api, const Device &d, VkDeviceSize bytes, bool host);
void release(const Api &api, const Device &d, Memory &memory);

}  // namespace yirage::vulkan
