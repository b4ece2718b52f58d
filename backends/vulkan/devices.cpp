#include "devices.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "target/target.hpp"
#include "target_name.hpp"
#include "util/file_cache.hpp"

namespace yirage::vulkan {
namespace {

constexpr const char *kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool validation_asked() {
  const char *v = std::getenv("YIRAGE_VULKAN_VALIDATION");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

// The packed 16-bit path on every device (tests of the path devices without 16-bit storage take).
bool packed_16bit_forced() {
  const char *v = std::getenv("YIRAGE_VULKAN_PACKED_16BIT");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                     void *user_data) {
  auto *instance = static_cast<Instance *>(user_data);
  const std::string message =
      std::string("vulkan: validation: ") + (data != nullptr && data->pMessage ? data->pMessage : "(no message)");
  {
    const std::lock_guard<std::mutex> lock(instance->last_message_lock);
    instance->last_validation_message = message;
  }
  instance->validation_messages.fetch_add(1);
  if (instance->log_warning) instance->log_warning(message);
  return VK_FALSE;
}

bool has_layer(const Loader &loader, const char *name) {
  uint32_t count = 0;
  if (loader.vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (loader.vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) return false;
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties &l) { return std::strcmp(l.layerName, name) == 0; });
}

bool has_device_extension(const Api &api, VkPhysicalDevice physical, const char *name) {
  uint32_t count = 0;
  if (api.vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(count);
  if (api.vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data()) != VK_SUCCESS) {
    return false;
  }
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const VkExtensionProperties &e) { return std::strcmp(e.extensionName, name) == 0; });
}

// The first memory type among `allowed` (a bit per type) with all of `wanted`, else the first
// with all of `fallback`.
uint32_t memory_type(const VkPhysicalDeviceMemoryProperties &m, uint32_t allowed, VkMemoryPropertyFlags wanted,
                     VkMemoryPropertyFlags fallback) {
  for (VkMemoryPropertyFlags flags : {wanted, fallback}) {
    for (uint32_t i = 0; i < m.memoryTypeCount; ++i) {
      if ((allowed & (1u << i)) != 0 && (m.memoryTypes[i].propertyFlags & flags) == flags) return i;
    }
  }
  throw Error(ErrorCode::kBackend, "vulkan: the device has no memory type for storage buffers");
}

// The figures Vulkan does not report: a CPU device (lavapipe) is this host (its measured
// description); an NVIDIA GPU is its compute capability's built-in description without the tensor
// cores, as the OpenCL plugin does; other GPUs are estimated from their work-group limits.
void fill_figures(const VkPhysicalDeviceProperties &p, bool cpu, int64_t local_heap, yirage_target_properties &t) {
  if (cpu) {
    const targets::TargetProperties &host = targets::host_cpu_target();
    t.compute_units = std::max<int64_t>(1, host.compute_units);
    t.memory_bandwidth = host.memory_bandwidth;
    t.l2_bytes = host.l2_bytes;
    t.l2_bandwidth = host.l2_bandwidth;
    t.peak_flops_float32 = t.vector_flops_float32 = host.vector_flops_float32;
    t.launch_overhead_seconds = 3e-5;  // a submission and a fence through lavapipe's threads
    return;
  }
  t.launch_overhead_seconds = 1e-5;
  t.loop_iteration_seconds = 1e-6;
  constexpr uint32_t kNvidia = 0x10de;
  if (p.vendorID == kNvidia) {
    // NVIDIA's device names carry no compute capability; an H100/H200 by name, else estimated.
    const std::string name = p.deviceName;
    if (name.find("H100") != std::string::npos || name.find("H200") != std::string::npos) {
      if (auto chip = targets::builtin_cuda_target(90, t.memory_bytes)) {
        t.compute_units = chip->compute_units;
        t.memory_bandwidth = chip->memory_bandwidth;
        t.l2_bandwidth = chip->l2_bandwidth;
        t.l2_bytes = chip->l2_bytes;
        t.peak_flops_float32 = t.vector_flops_float32 = chip->vector_flops_float32;
        t.threads_per_compute_unit = chip->threads_per_compute_unit;
        t.max_blocks_per_compute_unit = chip->max_blocks_per_compute_unit;
        return;
      }
    }
  }
  // Vulkan reports no compute-unit count: 64 units at 1.5 GHz, 128 FLOP per unit and cycle,
  // 1 TB/s for a discrete GPU, a tenth of that otherwise.
  t.compute_units = 64;
  t.peak_flops_float32 = t.vector_flops_float32 = 128.0 * 1.5e9 * 64;
  t.memory_bandwidth = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? 1e12 : 1e11;
  t.l2_bandwidth = 3 * t.memory_bandwidth;
  (void)local_heap;
}

void describe(const Api &api, Device &d, int32_t index) {
  auto subgroup = vk_struct<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
  auto maintenance3 = vk_struct<VkPhysicalDeviceMaintenance3Properties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES, &subgroup);
  auto properties =
      vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &maintenance3);
  api.vkGetPhysicalDeviceProperties2(d.physical, &properties);
  const VkPhysicalDeviceProperties &p = properties.properties;
  if (VK_API_VERSION_MAJOR(p.apiVersion) == 1 && VK_API_VERSION_MINOR(p.apiVersion) < 1) {
    throw Error(ErrorCode::kUnsupported, "vulkan: the device speaks Vulkan 1.0; 1.1 is needed");
  }
  auto float16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  auto storage16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, &float16);
  auto features = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &storage16);
  api.vkGetPhysicalDeviceFeatures2(d.physical, &features);
  d.name = p.deviceName;
  d.api_version = p.apiVersion;
  d.storage16 = storage16.storageBuffer16BitAccess == VK_TRUE;
  d.float16 = float16.shaderFloat16 == VK_TRUE;
  d.nv_cooperative_matrix = has_device_extension(api, d.physical, "VK_NV_cooperative_matrix");
  d.timestamp_period = p.limits.timestampPeriod;
  for (int i = 0; i < 3; ++i) d.max_groups[i] = p.limits.maxComputeWorkGroupCount[i];
  d.max_alloc_bytes = maintenance3.maxMemoryAllocationSize;
  d.max_storage_range = p.limits.maxStorageBufferRange;
  const bool cpu = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  const int64_t max_group =
      std::min<int64_t>(p.limits.maxComputeWorkGroupInvocations, p.limits.maxComputeWorkGroupSize[0]);
  const int64_t shared = p.limits.maxComputeSharedMemorySize;

  VkPhysicalDeviceMemoryProperties memory;
  api.vkGetPhysicalDeviceMemoryProperties(d.physical, &memory);
  d.memory = memory;
  const uint32_t heap = memory.memoryTypes[memory_type(memory, ~0u, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0)].heapIndex;

  yirage_backend_device_info &info = d.info;
  info.struct_size = sizeof info;
  const std::string name = d.name.substr(0, 100) + " (Vulkan)";
  std::snprintf(info.name, sizeof info.name, "%s", name.c_str());
  yirage_target_properties &t = info.target;
  t.struct_size = sizeof t;
  std::snprintf(t.name, sizeof t.name, "%s", backend::target_name("vulkan-", d.name).c_str());
  t.kind = cpu ? YIRAGE_TARGET_CPU : YIRAGE_TARGET_GPU;
  t.max_threads_per_block = max_group;
  t.max_blocks_per_compute_unit = cpu ? 1 : 16;
  t.threads_per_compute_unit = max_group;
  t.shared_memory_per_block = shared;
  t.shared_memory_per_compute_unit = shared;
  t.warp_width = std::max<uint32_t>(1, subgroup.subgroupSize);
  t.memory_bytes = static_cast<int64_t>(memory.memoryHeaps[heap].size);
  fill_figures(p, cpu, shared, t);
  // Every dtype is stored as itself and computed in float32 (no matrix units are used).
  t.peak_flops_float16 = t.peak_flops_bfloat16 = t.peak_flops_float32;
  info.dtypes = (1u << YIRAGE_FLOAT16) | (1u << YIRAGE_BFLOAT16) | (1u << YIRAGE_FLOAT32);
  info.dlpack_device_type = kDLVulkan;
  info.dlpack_device_id = index;

  d.target.max_shared_bytes = shared;
  d.target.max_work_group = max_group;
  d.target.compute_units = t.compute_units;
  d.target.max_groups_yz = std::min(d.max_groups[1], d.max_groups[2]);
  d.target.max_buffer_bytes = static_cast<int64_t>(d.max_storage_range);
  d.target.storage16 = d.storage16 && !packed_16bit_forced();
  d.target.cpu = cpu;
}

// The device's queue family with compute (a compute-only one first: it may run beside graphics).
uint32_t compute_family(const Api &api, Device &d) {
  uint32_t count = 0;
  api.vkGetPhysicalDeviceQueueFamilyProperties(d.physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  api.vkGetPhysicalDeviceQueueFamilyProperties(d.physical, &count, families.data());
  int64_t found = -1;
  for (uint32_t i = 0; i < count; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0) continue;
    if (found < 0 || (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) == 0) found = i;
  }
  if (found < 0) throw Error(ErrorCode::kUnsupported, "vulkan: the device has no compute queue");
  d.timestamp_bits = families[static_cast<size_t>(found)].timestampValidBits;
  return static_cast<uint32_t>(found);
}

void open_device(const Api &api, Device &d, const std::string &cache_dir, int32_t index) {
  describe(api, d, index);
  d.queue_family = compute_family(api, d);
  const float priority = 1.0f;
  auto queue = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queue.queueFamilyIndex = d.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  auto storage16 =
      vk_struct<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  storage16.storageBuffer16BitAccess = d.storage16 ? VK_TRUE : VK_FALSE;
  auto create = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &storage16);
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue;
  check(api.vkCreateDevice(d.physical, &create, nullptr, &d.device), "vkCreateDevice");
  api.vkGetDeviceQueue(d.device, d.queue_family, 0, &d.queue);
  auto pool = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool.queueFamilyIndex = d.queue_family;
  check(api.vkCreateCommandPool(d.device, &pool, nullptr, &d.pool), "vkCreateCommandPool");
  if (d.timestamp_bits > 0) {
    auto queries = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    queries.queryType = VK_QUERY_TYPE_TIMESTAMP;
    queries.queryCount = kTimestampQueries;
    check(api.vkCreateQueryPool(d.device, &queries, nullptr, &d.timestamps), "vkCreateQueryPool");
    for (uint32_t q = kTimestampQueries; q-- > 0;) d.free_queries.push_back(q);
  }
  // The pipeline cache of this device and driver, from disk where an intact one is kept (the
  // driver checks its own header too and ignores data of another device or version).
  auto ids = vk_struct<VkPhysicalDeviceIDProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES);
  auto properties = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &ids);
  api.vkGetPhysicalDeviceProperties2(d.physical, &properties);
  d.driver = std::to_string(properties.properties.driverVersion);
  const std::string uuid(reinterpret_cast<const char *>(properties.properties.pipelineCacheUUID), VK_UUID_SIZE);
  d.pipeline_cache_path = cache_dir + "/pipelines-" + util::hash_hex(d.name + '\0' + d.driver + '\0' + uuid) + ".bin";
  const std::optional<std::string> kept = util::read_cached(d.pipeline_cache_path);
  auto cache = vk_struct<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  if (kept) {
    cache.initialDataSize = kept->size();
    cache.pInitialData = kept->data();
  }
  check(api.vkCreatePipelineCache(d.device, &cache, nullptr, &d.pipeline_cache), "vkCreatePipelineCache");
}

void reclaim(const Api &api, Device &d, bool all) {
  auto done = [&](const Submission &s) { return all || api.vkGetFenceStatus(d.device, s.fence) == VK_SUCCESS; };
  std::vector<Submission> pending;
  for (Submission &s : d.in_flight) {
    if (!done(s)) {
      pending.push_back(s);
      continue;
    }
    api.vkDestroyFence(d.device, s.fence, nullptr);
    api.vkFreeCommandBuffers(d.device, d.pool, 1, &s.commands);
    if (s.descriptors != VK_NULL_HANDLE) api.vkDestroyDescriptorPool(d.device, s.descriptors, nullptr);
  }
  d.in_flight = std::move(pending);
}

// A lost device stays lost: its error is kept and thrown by every later call.
void check_device(Device &d, VkResult result, const std::string &what) {
  if (result == VK_ERROR_DEVICE_LOST && d.lost.empty()) d.lost = "vulkan: " + what + ": VK_ERROR_DEVICE_LOST";
  check(result, what);
}

void close_device(const Api &api, Device &d) {
  if (d.device == VK_NULL_HANDLE) return;
  api.vkDeviceWaitIdle(d.device);
  {
    const std::lock_guard<std::mutex> lock(d.lock);
    reclaim(api, d, true);
  }
  release(api, d, d.staging);
  if (d.pipeline_cache != VK_NULL_HANDLE) {
    size_t size = 0;
    if (api.vkGetPipelineCacheData(d.device, d.pipeline_cache, &size, nullptr) == VK_SUCCESS && size > 0) {
      std::string data(size, '\0');
      if (api.vkGetPipelineCacheData(d.device, d.pipeline_cache, &size, data.data()) == VK_SUCCESS) {
        data.resize(size);
        try {
          util::store_cached(d.pipeline_cache_path, data);
        } catch (const Error &) {
          // An unwritable cache folder: the pipelines are built again next time (the SPIR-V cache
          // warns about the folder once).
        }
      }
    }
    api.vkDestroyPipelineCache(d.device, d.pipeline_cache, nullptr);
  }
  if (d.timestamps != VK_NULL_HANDLE) api.vkDestroyQueryPool(d.device, d.timestamps, nullptr);
  if (d.pool != VK_NULL_HANDLE) api.vkDestroyCommandPool(d.device, d.pool, nullptr);
  api.vkDestroyDevice(d.device, nullptr);
  d.device = VK_NULL_HANDLE;
}

}  // namespace

void open_instance(Instance &out, const std::string &cache_dir, std::vector<std::string> &skipped) {
  out.loader = Loader::load(out.reason);
  if (out.loader == nullptr) return;
  const Loader &loader = *out.loader;
  const bool validation = validation_asked();
  if (validation && !has_layer(loader, kValidationLayer)) {
    out.reason = std::string("vulkan: YIRAGE_VULKAN_VALIDATION is set but the layer ") + kValidationLayer +
                 " is not installed (Debian: vulkan-validationlayers)";
    return;
  }
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "yirage";
  app.pEngineName = "yirage";
  app.apiVersion = VK_API_VERSION_1_1;
  auto create = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  create.pApplicationInfo = &app;
  const char *layers[] = {kValidationLayer};
  const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  auto messenger =
      vk_struct<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  messenger.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  messenger.pfnUserCallback = on_validation_message;
  messenger.pUserData = &out;
  if (validation) {
    create.enabledLayerCount = 1;
    create.ppEnabledLayerNames = layers;
    create.enabledExtensionCount = 1;
    create.ppEnabledExtensionNames = extensions;
    create.pNext = &messenger;  // messages of vkCreateInstance and vkDestroyInstance too
  }
  const VkResult created = loader.vkCreateInstance(&create, nullptr, &out.instance);
  if (created != VK_SUCCESS) {
    out.instance = VK_NULL_HANDLE;
    out.reason = "vulkan: no instance (vkCreateInstance: " + result_name(created) +
                 "; is a driver such as mesa-vulkan-drivers installed?)";
    return;
  }
  out.api = Api::resolve(loader, out.instance);
  const Api &api = out.api;
  if (validation && api.vkCreateDebugUtilsMessengerEXT != nullptr) {
    check(api.vkCreateDebugUtilsMessengerEXT(out.instance, &messenger, nullptr, &out.messenger),
          "vkCreateDebugUtilsMessengerEXT");
  }
  uint32_t count = 0;
  const VkResult listed = api.vkEnumeratePhysicalDevices(out.instance, &count, nullptr);
  if (listed != VK_SUCCESS || count == 0) {
    out.reason = "vulkan: no physical device (vkEnumeratePhysicalDevices: " +
                 (listed != VK_SUCCESS ? result_name(listed) : std::string("none")) +
                 "; is a driver such as mesa-vulkan-drivers installed?)";
    return;
  }
  std::vector<VkPhysicalDevice> physical(count);
  const VkResult got = api.vkEnumeratePhysicalDevices(out.instance, &count, physical.data());
  if (got != VK_SUCCESS && got != VK_INCOMPLETE) check(got, "vkEnumeratePhysicalDevices");
  physical.resize(count);
  for (VkPhysicalDevice p : physical) {
    if (out.devices.size() >= kMaxDevices) break;
    auto d = std::make_unique<Device>();
    d->physical = p;
    try {
      open_device(api, *d, cache_dir, static_cast<int32_t>(out.devices.size()));
      out.devices.push_back(std::move(d));
    } catch (const Error &e) {
      close_device(api, *d);
      skipped.push_back((d->name.empty() ? std::string("a device") : d->name) + ": " + e.what());
    }
  }
  if (out.devices.empty()) {
    out.reason = "vulkan: no usable device among " + std::to_string(count);
    for (const std::string &s : skipped) out.reason += "; " + s;
  }
}

void close_instance(Instance &instance) {
  for (auto &d : instance.devices) close_device(instance.api, *d);
  instance.devices.clear();
  if (instance.instance == VK_NULL_HANDLE) return;
  if (instance.messenger != VK_NULL_HANDLE) {
    instance.api.vkDestroyDebugUtilsMessengerEXT(instance.instance, instance.messenger, nullptr);
  }
  instance.api.vkDestroyInstance(instance.instance, nullptr);
  instance.instance = VK_NULL_HANDLE;
}

void submit(const Api &api, Device &d, const std::function<void(VkCommandBuffer)> &record, bool wait,
            VkDescriptorPool descriptors) {
  const std::lock_guard<std::mutex> lock(d.lock);
  Submission s;
  s.descriptors = descriptors;
  auto give_up = [&] {
    if (s.fence != VK_NULL_HANDLE) api.vkDestroyFence(d.device, s.fence, nullptr);
    if (s.commands != VK_NULL_HANDLE) api.vkFreeCommandBuffers(d.device, d.pool, 1, &s.commands);
    if (s.descriptors != VK_NULL_HANDLE) api.vkDestroyDescriptorPool(d.device, s.descriptors, nullptr);
  };
  try {
    if (!d.lost.empty()) throw backend::NativeError(ErrorCode::kBackend, d.lost, VK_ERROR_DEVICE_LOST);
    reclaim(api, d, false);
    auto allocate = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    allocate.commandPool = d.pool;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    check(api.vkAllocateCommandBuffers(d.device, &allocate, &s.commands), "vkAllocateCommandBuffers");
    auto begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(api.vkBeginCommandBuffer(s.commands, &begin), "vkBeginCommandBuffer");
    // Everything earlier on the queue, kernels and copies, before anything here.
    auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                            VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    api.vkCmdPipelineBarrier(s.commands, stages, stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    record(s.commands);
    check(api.vkEndCommandBuffer(s.commands), "vkEndCommandBuffer");
    auto fence = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    check(api.vkCreateFence(d.device, &fence, nullptr, &s.fence), "vkCreateFence");
    auto info = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    info.commandBufferCount = 1;
    info.pCommandBuffers = &s.commands;
    check_device(d, api.vkQueueSubmit(d.queue, 1, &info, s.fence), "vkQueueSubmit");
  } catch (...) {
    give_up();
    throw;
  }
  d.in_flight.push_back(s);
  if (wait) check_device(d, api.vkWaitForFences(d.device, 1, &s.fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

void wait_idle(const Api &api, Device &d) {
  const std::lock_guard<std::mutex> lock(d.lock);
  if (!d.lost.empty()) throw backend::NativeError(ErrorCode::kBackend, d.lost, VK_ERROR_DEVICE_LOST);
  check_device(d, api.vkQueueWaitIdle(d.queue), "vkQueueWaitIdle");
  reclaim(api, d, true);
}

Memory allocate(const Api &api, const Device &d, VkDeviceSize bytes, bool host) {
  Memory m;
  auto create = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  create.size = std::max<VkDeviceSize>(16, (bytes + 15) / 16 * 16);
  create.usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  try {
    check(api.vkCreateBuffer(d.device, &create, nullptr, &m.buffer),
          "vkCreateBuffer of " + std::to_string(bytes) + " bytes");
    m.size = create.size;
    VkMemoryRequirements needs;
    api.vkGetBufferMemoryRequirements(d.device, m.buffer, &needs);
    auto allocate = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    allocate.allocationSize = needs.size;
    const VkMemoryPropertyFlags mapped = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    allocate.memoryTypeIndex =
        host ? memory_type(d.memory, needs.memoryTypeBits, mapped, mapped)
             : memory_type(d.memory, needs.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    check(api.vkAllocateMemory(d.device, &allocate, nullptr, &m.memory),
          "vkAllocateMemory of " + std::to_string(needs.size) + " bytes");
    check(api.vkBindBufferMemory(d.device, m.buffer, m.memory, 0), "vkBindBufferMemory");
    if (host) check(api.vkMapMemory(d.device, m.memory, 0, VK_WHOLE_SIZE, 0, &m.mapped), "vkMapMemory");
  } catch (...) {
    release(api, d, m);
    throw;
  }
  return m;
}

void release(const Api &api, const Device &d, Memory &m) {
  if (m.mapped != nullptr) api.vkUnmapMemory(d.device, m.memory);
  if (m.buffer != VK_NULL_HANDLE) api.vkDestroyBuffer(d.device, m.buffer, nullptr);
  if (m.memory != VK_NULL_HANDLE) api.vkFreeMemory(d.device, m.memory, nullptr);
  m = Memory{};
}

}  // namespace yirage::vulkan
