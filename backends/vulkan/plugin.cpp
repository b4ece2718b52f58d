// The Vulkan backend (libyirage-backend-vulkan.so): every physical device the Vulkan loader lists
// (GPUs through their drivers, CPUs through Mesa's lavapipe). Kernel programs become GLSL 450
// compute shaders (codegen/glsl_source.hpp), compiled to SPIR-V in the process and cached
// (shaders.hpp). The loader is opened with dlopen (vk_api.hpp), so the plugin loads anywhere;
// without a loader or a driver it reports zero devices and why (docs/backends/vulkan.md).
//
// Buffers are VkBuffers with memory of their own (DLPack kDLVulkan: the data field holds the
// VkBuffer handle; only buffers this instance allocated can be wrapped again). The only stream is
// NULL, the device's queue, in order (devices.hpp: submit). Timers are timestamp queries.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "devices.hpp"
#include "serialize/kernel_program.hpp"
#include "shaders.hpp"
#include "util/file_cache.hpp"
#include "vk_api.hpp"
#include "vulkan/codegen/glsl_source.hpp"
#include "yirage_backend.h"

using yirage::Error;
using yirage::ErrorCode;
using yirage::vulkan::Api;
using yirage::vulkan::Device;

struct yirage_backend_instance_s {
  yirage::vulkan::Instance vk;
  std::string cache_dir;
  void (*log)(void *, yirage_backend_log_level, const char *) = nullptr;  // the host's; may be NULL
  void *log_user_data = nullptr;
  std::atomic<bool> cache_warning_given{false};
  std::mutex buffers_lock;  // buffers: what buffer_native handed out, for buffer_wrap
  std::unordered_map<VkBuffer, std::pair<int32_t, size_t>> buffers;

  void warn(const std::string &message) const {
    if (log != nullptr) log(log_user_data, YIRAGE_BACKEND_LOG_WARNING, message.c_str());
  }
};

struct yirage_backend_buffer_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  yirage::vulkan::Memory memory;
  size_t bytes;
  bool owned;
};

struct yirage_backend_executable_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  yirage::vulkan::Pipeline pipeline;
  yirage::codegen::VulkanKernel launch;
  std::vector<size_t> input_bytes, output_bytes;
};

struct yirage_backend_timer_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  uint32_t query;
  bool recorded = false;
};

namespace {

// Runs an entry's body; under YIRAGE_VULKAN_VALIDATION a message of the validation layer during
// the call fails it (BACKEND, the message), so that a test run sees every one.
template <class Body>
yirage_status protect(yirage_backend_instance_s *instance, yirage_backend_error *error, Body &&body) noexcept {
  const uint64_t before = instance != nullptr ? instance->vk.validation_messages.load() : 0;
  return yirage::backend::protect("vulkan", error, [&] {
    body();
    if (instance != nullptr && instance->vk.validation_messages.load() != before) {
      const std::lock_guard<std::mutex> lock(instance->vk.last_message_lock);
      throw Error(ErrorCode::kBackend, instance->vk.last_validation_message);
    }
  });
}

[[noreturn]] void invalid(const std::string &message) {
  yirage::backend::invalid("vulkan", message);
}

void require(const void *pointer, const char *name) {
  yirage::backend::require("vulkan", pointer, name);
}

Device &device_of(yirage_backend_instance *instance, int32_t device) {
  require(instance, "instance");
  return *yirage::backend::device_at("vulkan", instance->vk.devices, device, instance->vk.reason);
}

void check_stream(void *stream) {
  if (stream != nullptr) {
    invalid("the only stream is NULL, the device's queue (this plugin makes no other streams)");
  }
}

yirage::serialize::KernelProgram parse(const void *program, size_t size) {
  require(program, "program");
  return yirage::serialize::kernel_program_from_bytes(program, size);
}

// ---- the table's entries ----

yirage_status create(const yirage_backend_host *host, yirage_backend_instance **out, yirage_backend_error *error) {
  return protect(nullptr, error, [&] {
    yirage::backend::check_host("vulkan", host, out);
    auto instance = std::make_unique<yirage_backend_instance_s>();
    instance->cache_dir = host->cache_dir && *host->cache_dir ? std::string(host->cache_dir) + "/vulkan"
                                                              : yirage::util::default_cache_dir("vulkan");
    instance->log = host->log;
    instance->log_user_data = host->log_user_data;
    yirage_backend_instance_s *self = instance.get();
    instance->vk.log_warning = [self](const std::string &message) {
      if (self->log != nullptr) {
        self->warn(message);
      } else {
        std::fprintf(stderr, "%s\n", message.c_str());  // asked for by YIRAGE_VULKAN_VALIDATION
      }
    };
    std::vector<std::string> skipped;
    try {
      yirage::vulkan::open_instance(instance->vk, instance->cache_dir, skipped);
    } catch (const Error &e) {
      yirage::vulkan::close_instance(instance->vk);
      instance->vk.reason = e.what();
    }
    for (const std::string &s : skipped) instance->warn("vulkan: device left out: " + s);
    *out = instance.release();
  });
}

void destroy(yirage_backend_instance *instance) {
  if (instance == nullptr) return;
  yirage::vulkan::close_instance(instance->vk);
  delete instance;
}

yirage_status device_count(yirage_backend_instance *instance, int32_t *out, yirage_backend_error *error) {
  return protect(instance, error, [&] {
    require(instance, "instance");
    require(out, "out_count");
    *out = static_cast<int32_t>(instance->vk.devices.size());
  });
}

const char *unavailable_reason(yirage_backend_instance *instance) {
  return instance == nullptr ? "no instance" : instance->vk.reason.c_str();
}

yirage_status device_info(yirage_backend_instance *instance, int32_t device, yirage_backend_device_info *out,
                          yirage_backend_error *error) {
  return protect(instance, error, [&] {
    const Device &d = device_of(instance, device);
    yirage::backend::copy_device_info("vulkan", d.info, out);
  });
}

yirage_status buffer_alloc(yirage_backend_instance *instance, int32_t device, size_t bytes, yirage_backend_buffer **out,
                           yirage_backend_error *error) {
  return protect(instance, error, [&] {
    require(out, "out_buffer");
    const Device &d = device_of(instance, device);
    const VkDeviceSize most = d.max_alloc_bytes / 16 * 16;
    if (bytes > most) {
      throw Error(ErrorCode::kOutOfMemory, "vulkan: cannot allocate " + std::to_string(bytes) +
                                               " bytes: the device's largest allocation is " + std::to_string(most) +
                                               " (maxMemoryAllocationSize)");
    }
    auto buffer = std::make_unique<yirage_backend_buffer_s>(yirage_backend_buffer_s{
        instance, device, yirage::vulkan::allocate(instance->vk.api, d, bytes, false), bytes, true});
    {
      const std::lock_guard<std::mutex> lock(instance->buffers_lock);
      instance->buffers[buffer->memory.buffer] = {device, bytes};
    }
    *out = buffer.release();
  });
}

// Only a VkBuffer this instance allocated on the device, and no more bytes than it has: Vulkan
// cannot tell the size or the device of any other.
yirage_status buffer_wrap(yirage_backend_instance *instance, int32_t device, void *native, size_t bytes,
                          yirage_backend_buffer **out, yirage_backend_error *error) {
  return protect(instance, error, [&] {
    require(out, "out_buffer");
    device_of(instance, device);
    if (native == nullptr) invalid("buffer_wrap: native is NULL");
    const VkBuffer handle = reinterpret_cast<VkBuffer>(native);
    std::pair<int32_t, size_t> known{-1, 0};
    {
      const std::lock_guard<std::mutex> lock(instance->buffers_lock);
      const auto found = instance->buffers.find(handle);
      if (found != instance->buffers.end()) known = found->second;
    }
    if (known.first != device) {
      throw Error(ErrorCode::kUnsupported,
                  "vulkan: buffer_wrap takes only buffers this plugin allocated on device " + std::to_string(device) +
                      " (buffer_native's value): Vulkan cannot tell another VkBuffer's size or device");
    }
    if (known.second < bytes) {
      invalid("buffer_wrap: the buffer holds " + std::to_string(known.second) + " bytes, " + std::to_string(bytes) +
              " were asked for");
    }
    yirage::vulkan::Memory memory;
    memory.buffer = handle;
    memory.size = std::max<VkDeviceSize>(16, (known.second + 15) / 16 * 16);  // as allocate() made it
    *out = new yirage_backend_buffer_s{instance, device, memory, bytes, false};
  });
}

void buffer_release(yirage_backend_buffer *buffer) {
  if (buffer == nullptr) return;
  if (buffer->owned) {
    yirage_backend_instance_s *instance = buffer->instance;
    {
      const std::lock_guard<std::mutex> lock(instance->buffers_lock);
      instance->buffers.erase(buffer->memory.buffer);
    }
    Device &d = *instance->vk.devices[static_cast<size_t>(buffer->device)];
    // Kernels still queued may use it: wait for them (a lost device has nothing running).
    try {
      yirage::vulkan::wait_idle(instance->vk.api, d);
    } catch (const Error &) {
    }
    yirage::vulkan::release(instance->vk.api, d, buffer->memory);
  }
  delete buffer;
}

// Host copies go through the device's staging buffer, a chunk at a time.
void copy_through_staging(yirage_backend_buffer *buffer, size_t offset, void *host, size_t bytes, bool to_device) {
  Device &d = device_of(buffer->instance, buffer->device);
  const Api &api = buffer->instance->vk.api;
  const std::lock_guard<std::mutex> lock(d.staging_lock);
  if (d.staging.buffer == VK_NULL_HANDLE)
    d.staging = yirage::vulkan::allocate(api, d, yirage::vulkan::kStagingBytes, true);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(bytes - done, yirage::vulkan::kStagingBytes);
    char *at = static_cast<char *>(host) + done;
    if (to_device) std::memcpy(d.staging.mapped, at, n);
    yirage::vulkan::submit(
        api, d,
        [&](VkCommandBuffer commands) {
          VkBufferCopy region{};
          region.size = n;
          if (to_device) {
            region.dstOffset = offset + done;
            api.vkCmdCopyBuffer(commands, d.staging.buffer, buffer->memory.buffer, 1, &region);
          } else {
            region.srcOffset = offset + done;
            api.vkCmdCopyBuffer(commands, buffer->memory.buffer, d.staging.buffer, 1, &region);
            auto to_host = yirage::vulkan::vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
            to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
            to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
            api.vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                                     &to_host, 0, nullptr, 0, nullptr);
          }
        },
        true);
    if (!to_device) std::memcpy(at, d.staging.mapped, n);
    done += n;
  }
}

yirage_status buffer_write(yirage_backend_buffer *buffer, size_t offset, const void *source, size_t bytes,
                           yirage_backend_error *error) {
  return protect(buffer != nullptr ? buffer->instance : nullptr, error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(source, "source");
    yirage::backend::check_range("vulkan", buffer->bytes, offset, bytes, "buffer_write");
    if (bytes > 0) copy_through_staging(buffer, offset, const_cast<void *>(source), bytes, true);
  });
}

yirage_status buffer_read(yirage_backend_buffer *buffer, size_t offset, void *destination, size_t bytes,
                          yirage_backend_error *error) {
  return protect(buffer != nullptr ? buffer->instance : nullptr, error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(destination, "destination");
    yirage::backend::check_range("vulkan", buffer->bytes, offset, bytes, "buffer_read");
    if (bytes > 0) copy_through_staging(buffer, offset, destination, bytes, false);
  });
}

yirage_status buffer_native(yirage_backend_buffer *buffer, void **out_native, yirage_backend_error *error) {
  return protect(buffer != nullptr ? buffer->instance : nullptr, error, [&] {
    require(buffer, "buffer");
    require(out_native, "out_native");
    *out_native = reinterpret_cast<void *>(buffer->memory.buffer);
  });
}

yirage_status supports(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                       yirage_backend_error *error) {
  return protect(instance, error, [&] {
    const Device &d = device_of(instance, device);
    (void)yirage::codegen::glsl_source(parse(program, size), d.target);
  });
}

yirage_status compile(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                      const yirage_backend_compile_options *options, yirage_backend_executable **out,
                      yirage_backend_error *error) {
  return protect(instance, error, [&] {
    require(out, "out_executable");
    const Device &d = device_of(instance, device);
    const int level = yirage::backend::optimization_level("vulkan", options);
    const yirage::serialize::KernelProgram parsed = parse(program, size);
    auto executable = std::make_unique<yirage_backend_executable_s>();
    executable->instance = instance;
    executable->device = device;
    executable->input_bytes = parsed.input_bytes();
    executable->output_bytes = parsed.output_bytes();
    executable->launch = yirage::codegen::glsl_source(parsed, d.target);
    const auto warn = [instance](yirage::vulkan::BuildWarning kind, const std::string &message) {
      const bool once = kind == yirage::vulkan::BuildWarning::kCacheUnwritable;
      if (!once || !instance->cache_warning_given.exchange(true)) instance->warn(message);
    };
    const std::vector<uint32_t> spirv =
        yirage::vulkan::cached_spirv(executable->launch.source, level, instance->cache_dir, warn);
    executable->pipeline =
        yirage::vulkan::create_pipeline(instance->vk.api, d, spirv, static_cast<uint32_t>(executable->launch.buffers));
    *out = executable.release();
  });
}

void executable_release(yirage_backend_executable *executable) {
  if (executable == nullptr) return;
  yirage_backend_instance_s *instance = executable->instance;
  Device &d = *instance->vk.devices[static_cast<size_t>(executable->device)];
  try {
    yirage::vulkan::wait_idle(instance->vk.api, d);  // a queued run may still use the pipeline
  } catch (const Error &) {
    // A lost device runs nothing more, so the pipeline is free to go; a release reports nothing.
  }
  yirage::vulkan::release_pipeline(instance->vk.api, d, executable->pipeline);
  delete executable;
}

yirage_status launch(yirage_backend_executable *executable, void *stream, yirage_backend_buffer *const *inputs,
                     size_t num_inputs, yirage_backend_buffer *const *outputs, size_t num_outputs,
                     yirage_backend_error *error) {
  return protect(executable != nullptr ? executable->instance : nullptr, error, [&] {
    require(executable, "executable");
    check_stream(stream);
    yirage::backend::check_launch_buffers("vulkan", "input", inputs, num_inputs, executable->input_bytes);
    yirage::backend::check_launch_buffers("vulkan", "output", outputs, num_outputs, executable->output_bytes);
    Device &d = device_of(executable->instance, executable->device);
    const Api &api = executable->instance->vk.api;
    const yirage::vulkan::Pipeline &pipeline = executable->pipeline;
    const uint32_t n = pipeline.buffers;
    // The run's descriptor set, in a pool of its own that lives until the run completed.
    VkDescriptorPoolSize sizes{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max<uint32_t>(1, n)};
    auto pool_info =
        yirage::vulkan::vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &sizes;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    yirage::vulkan::check(api.vkCreateDescriptorPool(d.device, &pool_info, nullptr, &pool), "vkCreateDescriptorPool");
    VkDescriptorSet set = VK_NULL_HANDLE;
    try {
      auto allocate =
          yirage::vulkan::vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
      allocate.descriptorPool = pool;
      allocate.descriptorSetCount = 1;
      allocate.pSetLayouts = &pipeline.set_layout;
      yirage::vulkan::check(api.vkAllocateDescriptorSets(d.device, &allocate, &set), "vkAllocateDescriptorSets");
      std::vector<VkDescriptorBufferInfo> infos(n);
      std::vector<VkWriteDescriptorSet> writes(n);
      for (uint32_t i = 0; i < n; ++i) {
        const yirage_backend_buffer *b = i < num_inputs ? inputs[i] : outputs[i - num_inputs];
        // A shader sees at most maxStorageBufferRange bytes (compile refused larger tensors).
        infos[i] = {b->memory.buffer, 0,
                    b->memory.size > d.max_storage_range ? d.max_storage_range / 4 * 4 : VK_WHOLE_SIZE};
        writes[i] = yirage::vulkan::vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
        writes[i].dstSet = set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
      }
      api.vkUpdateDescriptorSets(d.device, n, writes.data(), 0, nullptr);
    } catch (...) {  // submit owns the pool from its call on; until then it is ours to free
      api.vkDestroyDescriptorPool(d.device, pool, nullptr);
      throw;
    }
    const auto &groups = executable->launch.groups;
    yirage::vulkan::submit(
        api, d,
        [&](VkCommandBuffer commands) {
          api.vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
          api.vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &set, 0,
                                      nullptr);
          // A grid wider than the device dispatches is run in parts along x.
          const int64_t step = d.max_groups[0];
          for (int64_t base = 0; base < groups[0]; base += step) {
            const yirage::codegen::GlslPushConstants push{static_cast<int32_t>(base), static_cast<int32_t>(groups[0])};
            api.vkCmdPushConstants(commands, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
            api.vkCmdDispatch(commands, static_cast<uint32_t>(std::min(step, groups[0] - base)),
                              static_cast<uint32_t>(groups[1]), static_cast<uint32_t>(groups[2]));
          }
        },
        false, pool);
  });
}

yirage_status synchronize(yirage_backend_instance *instance, int32_t device, void *stream,
                          yirage_backend_error *error) {
  return protect(instance, error, [&] {
    Device &d = device_of(instance, device);
    check_stream(stream);
    yirage::vulkan::wait_idle(instance->vk.api, d);
  });
}

yirage_status timer_create(yirage_backend_instance *instance, int32_t device, yirage_backend_timer **out,
                           yirage_backend_error *error) {
  return protect(instance, error, [&] {
    require(out, "out_timer");
    Device &d = device_of(instance, device);
    if (d.timestamps == VK_NULL_HANDLE) {
      throw Error(ErrorCode::kUnsupported,
                  "vulkan: the device's compute queue has no timestamps (timestampValidBits 0)");
    }
    uint32_t query = 0;
    {
      const std::lock_guard<std::mutex> lock(d.lock);
      if (d.free_queries.empty()) {
        throw Error(ErrorCode::kBackend, "vulkan: all " + std::to_string(yirage::vulkan::kTimestampQueries) +
                                             " timestamp queries of the device are in use by live timers");
      }
      query = d.free_queries.back();
      d.free_queries.pop_back();
    }
    *out = new yirage_backend_timer_s{instance, device, query};
  });
}

void timer_release(yirage_backend_timer *timer) {
  if (timer == nullptr) return;
  Device &d = *timer->instance->vk.devices[static_cast<size_t>(timer->device)];
  if (timer->recorded) {
    try {
      yirage::vulkan::wait_idle(timer->instance->vk.api, d);  // its query may still be written
    } catch (const Error &) {
    }
  }
  {
    const std::lock_guard<std::mutex> lock(d.lock);
    d.free_queries.push_back(timer->query);
  }
  delete timer;
}

yirage_status timer_record(yirage_backend_timer *timer, void *stream, yirage_backend_error *error) {
  return protect(timer != nullptr ? timer->instance : nullptr, error, [&] {
    require(timer, "timer");
    check_stream(stream);
    Device &d = device_of(timer->instance, timer->device);
    const Api &api = timer->instance->vk.api;
    yirage::vulkan::submit(
        api, d,
        [&](VkCommandBuffer commands) {
          api.vkCmdResetQueryPool(commands, d.timestamps, timer->query, 1);
          api.vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, d.timestamps, timer->query);
        },
        false);
    timer->recorded = true;
  });
}

// The device time at which the timer's timestamp was written, in ticks.
uint64_t timestamp_of(const yirage_backend_timer *timer) {
  Device &d = *timer->instance->vk.devices[static_cast<size_t>(timer->device)];
  uint64_t ticks = 0;
  yirage::vulkan::check(
      timer->instance->vk.api.vkGetQueryPoolResults(d.device, d.timestamps, timer->query, 1, sizeof ticks, &ticks,
                                                    sizeof ticks, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
      "vkGetQueryPoolResults");
  return d.timestamp_bits >= 64 ? ticks : ticks & ((uint64_t{1} << d.timestamp_bits) - 1);
}

yirage_status timer_elapsed(yirage_backend_timer *start, yirage_backend_timer *stop, double *out_seconds,
                            yirage_backend_error *error) {
  return protect(start != nullptr ? start->instance : nullptr, error, [&] {
    require(start, "start");
    require(stop, "stop");
    require(out_seconds, "out_seconds");
    if (!start->recorded || !stop->recorded) invalid("timer_elapsed: a timer was never recorded");
    if (start->instance != stop->instance || start->device != stop->device) {
      invalid("timer_elapsed: the timers belong to different devices");
    }
    const Device &d = device_of(start->instance, start->device);
    const uint64_t begin = timestamp_of(start), end = timestamp_of(stop);
    const double ticks = end >= begin ? static_cast<double>(end - begin) : -static_cast<double>(begin - end);
    *out_seconds = ticks * d.timestamp_period * 1e-9;
  });
}

const yirage_backend_api kApi = {
    sizeof(yirage_backend_api),
    YIRAGE_BACKEND_ABI_MAJOR,
    YIRAGE_BACKEND_ABI_MINOR,
    "vulkan",
    YIRAGE_VERSION_STRING,
    create,
    destroy,
    device_count,
    unavailable_reason,
    device_info,
    buffer_alloc,
    buffer_wrap,
    buffer_release,
    buffer_write,
    buffer_read,
    supports,
    compile,
    executable_release,
    launch,
    synchronize,
    timer_create,
    timer_release,
    timer_record,
    timer_elapsed,
    nullptr,  // estimate: the plain generated code has no pipelined loop to describe
    buffer_native,
    nullptr,  // recording_begin (ABI 1.3, optional): kernels are launched one by one
    nullptr,  // recording_end
    nullptr,  // recording_replay
    nullptr,  // recording_release
};

}  // namespace

extern "C" YIRAGE_BACKEND_EXPORT const yirage_backend_api *yirage_backend_entry(uint32_t, uint32_t) {
  return &kApi;
}
