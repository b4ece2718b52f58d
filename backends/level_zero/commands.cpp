#include "commands.hpp"

#include <cstdint>
#include <cstring>

namespace yirage::level_zero {
namespace {

void barrier(const Api &api, Device &d) {
  api.check(api.zeCommandListAppendBarrier(d.list, nullptr, 0, nullptr), "zeCommandListAppendBarrier");
}

// Waits for the device's `done` event, then resets it for the next wait.
void wait_done(const Api &api, Device &d, const char *what) {
  const ze_result_t waited = api.zeEventHostSynchronize(d.done, UINT64_MAX);
  const ze_result_t reset = api.zeEventHostReset(d.done);
  api.check(waited, std::string("zeEventHostSynchronize (") + what + ")");
  api.check(reset, "zeEventHostReset");
}

void copy(const Api &api, Device &d, void *destination, const void *source, size_t bytes, const char *what) {
  api.check(api.zeCommandListAppendMemoryCopy(d.list, destination, source, bytes, d.done, 0, nullptr),
            std::string("zeCommandListAppendMemoryCopy (") + what + ", " + std::to_string(bytes) + " bytes)");
  wait_done(api, d, what);
}

}  // namespace

void append_kernel(const Api &api, Device &d, ze_kernel_handle_t kernel, const ze_group_count_t &groups) {
  api.check(api.zeCommandListAppendLaunchKernel(d.list, kernel, &groups, nullptr, 0, nullptr),
            "zeCommandListAppendLaunchKernel (" + std::to_string(groups.groupCountX) + "×" +
                std::to_string(groups.groupCountY) + "×" + std::to_string(groups.groupCountZ) + " groups)");
  barrier(api, d);
}

void finish(const Api &api, Device &d) {
  api.check(api.zeCommandListAppendBarrier(d.list, d.done, 0, nullptr), "zeCommandListAppendBarrier");
  wait_done(api, d, "synchronize");
}

void copy_to_device(const Api &api, Device &d, void *destination, const void *source, size_t bytes) {
  for (size_t done = 0; done < bytes; done += kStagingBytes) {
    const size_t n = std::min(kStagingBytes, bytes - done);
    std::memcpy(d.staging, static_cast<const char *>(source) + done, n);
    copy(api, d, static_cast<char *>(destination) + done, d.staging, n, "host to device");
  }
}

void copy_to_host(const Api &api, Device &d, void *destination, const void *source, size_t bytes) {
  for (size_t done = 0; done < bytes; done += kStagingBytes) {
    const size_t n = std::min(kStagingBytes, bytes - done);
    copy(api, d, d.staging, static_cast<const char *>(source) + done, n, "device to host");
    std::memcpy(static_cast<char *>(destination) + done, d.staging, n);
  }
}

Timestamp create_timestamp(const Api &api, const Device &d) {
  Timestamp t;
  try {
    const ze_event_pool_desc_t pool_desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                         1};
    ze_device_handle_t device = d.id;
    api.check(api.zeEventPoolCreate(d.context, &pool_desc, 1, &device, &t.pool), "zeEventPoolCreate");
    const ze_event_desc_t event_desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                                     ZE_EVENT_SCOPE_FLAG_HOST};
    api.check(api.zeEventCreate(t.pool, &event_desc, &t.written), "zeEventCreate");
    const ze_host_mem_alloc_desc_t host_desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void *value = nullptr;
    api.check(api.zeMemAllocHost(d.context, &host_desc, sizeof(uint64_t), sizeof(uint64_t), &value),
              "zeMemAllocHost (a timestamp)");
    t.value = static_cast<uint64_t *>(value);
  } catch (...) {
    release_timestamp(api, d, t);
    throw;
  }
  return t;
}

void release_timestamp(const Api &api, const Device &d, Timestamp &t) {
  if (t.recorded) api.zeEventHostSynchronize(t.written, UINT64_MAX);  // the write must not land in freed memory
  if (t.value != nullptr) api.zeMemFree(d.context, t.value);
  if (t.written != nullptr) api.zeEventDestroy(t.written);
  if (t.pool != nullptr) api.zeEventPoolDestroy(t.pool);
  t = Timestamp{};
}

void record_timestamp(const Api &api, Device &d, Timestamp &t) {
  if (t.recorded) {
    api.check(api.zeEventHostSynchronize(t.written, UINT64_MAX), "zeEventHostSynchronize (the timer's last record)");
    api.check(api.zeEventHostReset(t.written), "zeEventHostReset");
    t.recorded = false;
  }
  api.check(api.zeCommandListAppendWriteGlobalTimestamp(d.list, t.value, t.written, 0, nullptr),
            "zeCommandListAppendWriteGlobalTimestamp");
  t.recorded = true;
  barrier(api, d);
}

uint64_t read_timestamp(const Api &api, const Device &d, const Timestamp &t) {
  api.check(api.zeEventHostSynchronize(t.written, UINT64_MAX), "zeEventHostSynchronize (a timer)");
  const uint64_t mask = d.timestamp_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << d.timestamp_bits) - 1;
  return *t.value & mask;
}

}  // namespace yirage::level_zero
