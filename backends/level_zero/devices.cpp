#include "devices.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "target_name.hpp"

namespace yirage::level_zero {
namespace {

// The ordinal of the first command queue group that takes compute commands.
uint32_t compute_ordinal(const Api &api, ze_device_handle_t device) {
  uint32_t count = 0;
  api.check(api.zeDeviceGetCommandQueueGroupProperties(device, &count, nullptr),
            "zeDeviceGetCommandQueueGroupProperties");
  std::vector<ze_command_queue_group_properties_t> groups(count);
  for (auto &g : groups) g = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES, nullptr, 0, 0, 0};
  api.check(api.zeDeviceGetCommandQueueGroupProperties(device, &count, groups.data()),
            "zeDeviceGetCommandQueueGroupProperties");
  for (uint32_t i = 0; i < count; ++i) {
    if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) return i;
  }
  throw Error(ErrorCode::kUnsupported, "level_zero: the device has no command queue group for compute");
}

// Fills the device's description from its properties. Level Zero reports no bandwidths: memory
// bandwidth is the larger of the memory's clock × bus width and 16 GB/s per Xe-core (about what
// Arc and Data Center GPU Max have), L2 three times that; FLOP/s are the EUs' FMA lanes at the
// core clock (no matrix units: OpenCL C reaches only the vector engines).
void describe(const Api &api, Device &d, int32_t index) {
  ze_device_properties_t p{};
  p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;  // timerResolution in cycles per second
  api.check(api.zeDeviceGetProperties(d.id, &p), "zeDeviceGetProperties");
  if (p.type != ZE_DEVICE_TYPE_GPU) throw Error(ErrorCode::kUnsupported, "level_zero: not a GPU");
  ze_device_compute_properties_t compute{};
  compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  api.check(api.zeDeviceGetComputeProperties(d.id, &compute), "zeDeviceGetComputeProperties");
  uint32_t memories = 0;
  api.check(api.zeDeviceGetMemoryProperties(d.id, &memories, nullptr), "zeDeviceGetMemoryProperties");
  std::vector<ze_device_memory_properties_t> memory(memories);
  for (auto &m : memory) m = {ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES, nullptr, 0, 0, 0, 0, {}};
  api.check(api.zeDeviceGetMemoryProperties(d.id, &memories, memory.data()), "zeDeviceGetMemoryProperties");
  uint32_t caches = 0;
  api.check(api.zeDeviceGetCacheProperties(d.id, &caches, nullptr), "zeDeviceGetCacheProperties");
  std::vector<ze_device_cache_properties_t> cache(caches);
  for (auto &c : cache) c = {ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES, nullptr, 0, 0};
  api.check(api.zeDeviceGetCacheProperties(d.id, &caches, cache.data()), "zeDeviceGetCacheProperties");

  d.device_name = std::string(p.name, strnlen(p.name, sizeof p.name));
  d.timer_hz = static_cast<double>(p.timerResolution);
  d.timestamp_bits = std::clamp<uint32_t>(p.timestampValidBits, 1, 64);
  d.max_alloc_bytes = static_cast<int64_t>(std::min<uint64_t>(p.maxMemAllocSize, INT64_MAX));
  if (d.timer_hz <= 0) throw Error(ErrorCode::kBackend, "level_zero: the device reports no timer resolution");

  const int64_t xe_cores = std::max<int64_t>(1, int64_t{p.numSlices} * p.numSubslicesPerSlice);
  const int64_t eus = xe_cores * std::max<uint32_t>(1, p.numEUsPerSubslice);
  const int64_t simd = std::max<uint32_t>(1, p.physicalEUSimdWidth);
  const int64_t max_group = std::max<int64_t>(1, std::min<int64_t>(compute.maxTotalGroupSize, compute.maxGroupSizeX));
  const int64_t local = compute.maxSharedLocalMemory;
  if (local <= 0) throw Error(ErrorCode::kUnsupported, "level_zero: the device reports no shared local memory");
  int64_t warp = 0;
  for (uint32_t i = 0; i < std::min<uint32_t>(compute.numSubGroupSizes, ZE_SUBGROUPSIZE_COUNT); ++i) {
    warp = std::max<int64_t>(warp, compute.subGroupSizes[i]);
  }
  int64_t memory_bytes = 0;
  double memory_bandwidth = 0;
  for (const auto &m : memory) {
    memory_bytes += static_cast<int64_t>(std::min<uint64_t>(m.totalSize, INT64_MAX / 4));
    memory_bandwidth = std::max(memory_bandwidth, 1e6 * m.maxClockRate * (m.maxBusWidth / 8.0));
  }
  int64_t l2 = 0;
  for (const auto &c : cache) l2 = std::max<int64_t>(l2, static_cast<int64_t>(c.cacheSize));

  yirage_backend_device_info &info = d.info;
  info.struct_size = sizeof info;
  const std::string name = d.device_name.substr(0, 80) + " (Level Zero, driver " + d.driver_version + ")";
  std::snprintf(info.name, sizeof info.name, "%s", name.c_str());
  yirage_target_properties &t = info.target;
  t.struct_size = sizeof t;
  std::snprintf(t.name, sizeof t.name, "%s", backend::target_name("level-zero-", d.device_name).c_str());
  t.kind = YIRAGE_TARGET_GPU;
  t.compute_units = xe_cores;  // a work-group runs on one Xe-core (subslice)
  t.max_threads_per_block = max_group;
  t.max_blocks_per_compute_unit = 16;
  t.threads_per_compute_unit = std::max<int64_t>(
      max_group, int64_t{std::max<uint32_t>(1, p.numEUsPerSubslice)} * std::max<uint32_t>(1, p.numThreadsPerEU) * simd);
  t.shared_memory_per_block = local;
  t.shared_memory_per_compute_unit = local;
  t.warp_width = warp > 0 ? warp : 16;
  t.memory_bytes = std::max<int64_t>(1, memory_bytes);
  t.memory_bandwidth = std::clamp(std::max(memory_bandwidth, 16e9 * static_cast<double>(xe_cores)), 1e9, 1e14);
  t.l2_bytes = l2 > 0 ? l2 : int64_t{4} << 20;
  t.l2_bandwidth = 3 * t.memory_bandwidth;
  const double clock = std::max<uint32_t>(1, p.coreClockRate) * 1e6;
  t.peak_flops_float32 = t.vector_flops_float32 = std::max(1e9, 2.0 * static_cast<double>(eus * simd) * clock);
  // Every dtype is stored as itself and computed in float32 (vload_half, 16-bit shifts).
  t.peak_flops_float16 = t.peak_flops_bfloat16 = t.peak_flops_float32;
  t.launch_overhead_seconds = 5e-6;
  t.loop_iteration_seconds = 1e-6;
  info.dtypes = (1u << YIRAGE_FLOAT16) | (1u << YIRAGE_BFLOAT16) | (1u << YIRAGE_FLOAT32);
  info.dlpack_device_type = kDLOneAPI;
  info.dlpack_device_id = index;

  d.target.max_local_bytes = local;
  d.target.max_work_group = max_group;
  // What Intel's OpenCL reports as CL_DEVICE_MAX_COMPUTE_UNITS (EUs), so that the same GPU gets
  // the same source through both plugins.
  d.target.compute_units = eus;
  d.target.cpu = false;
}

// The context, command list, event and staging buffer of a described device.
void open_queue(const Api &api, Device &d) {
  const ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  api.check(api.zeContextCreate(d.driver, &context_desc, &d.context), "zeContextCreate");
  const ze_command_queue_desc_t queue_desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                           nullptr,
                                           compute_ordinal(api, d.id),
                                           0,
                                           0,
                                           ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                           ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
  api.check(api.zeCommandListCreateImmediate(d.context, d.id, &queue_desc, &d.list), "zeCommandListCreateImmediate");
  const ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
  api.check(api.zeEventPoolCreate(d.context, &pool_desc, 1, &d.id, &d.pool), "zeEventPoolCreate");
  const ze_event_desc_t event_desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                                   ZE_EVENT_SCOPE_FLAG_HOST};
  api.check(api.zeEventCreate(d.pool, &event_desc, &d.done), "zeEventCreate");
  const ze_host_mem_alloc_desc_t host_desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  api.check(api.zeMemAllocHost(d.context, &host_desc, kStagingBytes, 64, &d.staging),
            "zeMemAllocHost of the " + std::to_string(kStagingBytes) + "-byte staging buffer");
}

}  // namespace

std::vector<Device> open_devices(const Api &api, std::string &reason, std::vector<std::string> &skipped) {
  std::vector<Device> devices;
  size_t found = 0;
  for (ze_driver_handle_t driver : api.drivers) {
    ze_driver_properties_t driver_properties{};
    driver_properties.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    std::string version = "unknown";
    if (api.zeDriverGetProperties(driver, &driver_properties) == ZE_RESULT_SUCCESS) {
      const uint32_t v = driver_properties.driverVersion;
      version = std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 0xff) + "." + std::to_string(v & 0xffff);
    }
    uint32_t count = 0;
    if (api.zeDeviceGet(driver, &count, nullptr) != ZE_RESULT_SUCCESS || count == 0) continue;
    std::vector<ze_device_handle_t> ids(count);
    if (api.zeDeviceGet(driver, &count, ids.data()) != ZE_RESULT_SUCCESS) continue;
    ids.resize(count);
    found += count;
    for (ze_device_handle_t id : ids) {
      if (devices.size() >= kMaxDevices) break;
      Device d;
      d.driver = driver;
      d.id = id;
      d.driver_version = version;
      try {
        describe(api, d, static_cast<int32_t>(devices.size()));
        open_queue(api, d);
        devices.push_back(std::move(d));
      } catch (const Error &e) {
        close_device(api, d);
        skipped.push_back((d.device_name.empty() ? std::string("a device") : d.device_name) + ": " + e.what());
      }
    }
  }
  if (devices.empty()) {
    reason = "level_zero: no usable GPU: " + std::to_string(api.drivers.size()) + " driver(s) listed " +
             std::to_string(found) + " device(s)";
    for (const std::string &s : skipped) reason += "; " + s;
  }
  return devices;
}

void close_device(const Api &api, Device &d) {
  if (d.staging != nullptr) api.zeMemFree(d.context, d.staging);
  if (d.done != nullptr) api.zeEventDestroy(d.done);
  if (d.pool != nullptr) api.zeEventPoolDestroy(d.pool);
  if (d.list != nullptr) api.zeCommandListDestroy(d.list);
  if (d.context != nullptr) api.zeContextDestroy(d.context);
  d.staging = nullptr;
  d.done = nullptr;
  d.pool = nullptr;
  d.list = nullptr;
  d.context = nullptr;
}

}  // namespace yirage::level_zero
