// The Level Zero backend (libyirage-backend-level_zero.so): Intel GPUs (Arc, Data Center GPU
// Max) through their Level Zero driver. Kernel programs become the OpenCL C the OpenCL backend
// generates (opencl/codegen/opencl_source.hpp), compiled to SPIR-V by clang and llvm-spirv and
// cached (spirv_compiler.hpp), then built by the driver as modules (modules.hpp). The loader is
// opened with dlopen (ze_api.hpp), so the plugin loads anywhere; without a driver or GPU it
// reports zero devices and why (docs/backends/level_zero.md).
//
// Buffers are device allocations (zeMemAllocDevice; DLPack kDLOneAPI: the data field holds the
// USM pointer). The stream is the device's immediate command list (only NULL: Level Zero objects
// belong to a context, and the plugin's context is its own); timers are global timestamps.
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "commands.hpp"
#include "devices.hpp"
#include "modules.hpp"
#include "opencl/codegen/opencl_source.hpp"
#include "serialize/kernel_program.hpp"
#include "spirv_compiler.hpp"
#include "util/file_cache.hpp"
#include "yirage_backend.h"
#include "ze_api.hpp"

using yirage::Error;
using yirage::ErrorCode;
using yirage::level_zero::Api;
using yirage::level_zero::Device;

struct yirage_backend_instance_s {
  const Api *api = nullptr;
  std::string reason;  // why there are no devices
  std::vector<Device> devices;
  std::unique_ptr<yirage::level_zero::SpirvCompiler> compiler;
  void (*log)(void *, yirage_backend_log_level, const char *) = nullptr;  // the host's; may be NULL
  void *log_user_data = nullptr;
  std::atomic<bool> cache_warning_given{false};

  void warn(const std::string &message) const {
    if (log != nullptr) log(log_user_data, YIRAGE_BACKEND_LOG_WARNING, message.c_str());
  }
};

struct yirage_backend_buffer_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  void *memory;  // nullptr for zero bytes
  size_t bytes;
  bool owned;
};

struct yirage_backend_executable_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  yirage::level_zero::BuiltKernel built;
  yirage::codegen::OpenclKernel launch;
  std::vector<size_t> input_bytes, output_bytes;
  std::mutex arguments;  // a kernel's arguments are state: set and appended under this lock
};

struct yirage_backend_timer_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  yirage::level_zero::Timestamp timestamp;
};

namespace {

template <class Body>
yirage_status protect(yirage_backend_error *error, Body &&body) noexcept {
  return yirage::backend::protect("level_zero", error, std::forward<Body>(body));
}

[[noreturn]] void invalid(const std::string &message) {
  yirage::backend::invalid("level_zero", message);
}

void require(const void *pointer, const char *name) {
  yirage::backend::require("level_zero", pointer, name);
}

Device &device_of(yirage_backend_instance *instance, int32_t device) {
  require(instance, "instance");
  return yirage::backend::device_at("level_zero", instance->devices, device, instance->reason);
}

void default_stream_only(void *stream) {
  if (stream != nullptr) {
    throw Error(ErrorCode::kUnsupported,
                "level_zero: only the default stream (NULL) is supported: the plugin's kernels and memory belong "
                "to its own Level Zero context");
  }
}

yirage::serialize::KernelProgram parse(const void *program, size_t size) {
  require(program, "program");
  return yirage::serialize::kernel_program_from_bytes(program, size);
}

// ---- the table's entries ----

yirage_status create(const yirage_backend_host *host, yirage_backend_instance **out, yirage_backend_error *error) {
  return protect(error, [&] {
    yirage::backend::check_host("level_zero", host, out);
    auto instance = std::make_unique<yirage_backend_instance_s>();
    instance->compiler = std::make_unique<yirage::level_zero::SpirvCompiler>(
        host->cache_dir && *host->cache_dir ? std::string(host->cache_dir) + "/level_zero"
                                            : yirage::util::default_cache_dir("level_zero"));
    instance->log = host->log;
    instance->log_user_data = host->log_user_data;
    instance->api = Api::load(instance->reason);
    if (instance->api != nullptr) {
      std::vector<std::string> skipped;
      instance->devices = yirage::level_zero::open_devices(*instance->api, instance->reason, skipped);
      for (const std::string &s : skipped) instance->warn("level_zero: device left out: " + s);
    }
    *out = instance.release();
  });
}

void destroy(yirage_backend_instance *instance) {
  if (instance == nullptr) return;
  for (Device &d : instance->devices) yirage::level_zero::close_device(*instance->api, d);
  delete instance;
}

yirage_status device_count(yirage_backend_instance *instance, int32_t *out, yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    require(out, "out_count");
    *out = static_cast<int32_t>(instance->devices.size());
  });
}

const char *unavailable_reason(yirage_backend_instance *instance) {
  return instance == nullptr ? "no instance" : instance->reason.c_str();
}

yirage_status device_info(yirage_backend_instance *instance, int32_t device, yirage_backend_device_info *out,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    const Device &d = device_of(instance, device);
    yirage::backend::copy_device_info("level_zero", d.info, out);
  });
}

yirage_status buffer_alloc(yirage_backend_instance *instance, int32_t device, size_t bytes, yirage_backend_buffer **out,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_buffer");
    const Device &d = device_of(instance, device);
    if (bytes > static_cast<size_t>(d.max_alloc_bytes)) {
      throw Error(ErrorCode::kOutOfMemory, "level_zero: cannot allocate " + std::to_string(bytes) +
                                               " bytes: the device's largest allocation is " +
                                               std::to_string(d.max_alloc_bytes) + " (maxMemAllocSize)");
    }
    void *memory = nullptr;
    if (bytes > 0) {
      const ze_device_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
      instance->api->check(instance->api->zeMemAllocDevice(d.context, &desc, bytes, 64, d.id, &memory),
                           "zeMemAllocDevice of " + std::to_string(bytes) + " bytes");
    }
    *out = new yirage_backend_buffer_s{instance, device, memory, bytes, true};
  });
}

// A USM allocation of the plugin's context for this device (one buffer_native gave) holding at
// least `bytes` from `native` on.
yirage_status buffer_wrap(yirage_backend_instance *instance, int32_t device, void *native, size_t bytes,
                          yirage_backend_buffer **out, yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_buffer");
    const Device &d = device_of(instance, device);
    if (native == nullptr && bytes > 0) invalid("buffer_wrap: native is NULL");
    if (native != nullptr) {
      const Api &api = *instance->api;
      ze_memory_allocation_properties_t properties{};
      properties.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
      ze_device_handle_t owner = nullptr;
      api.check(api.zeMemGetAllocProperties(d.context, native, &properties, &owner),
                "buffer_wrap: zeMemGetAllocProperties");
      if (properties.type == ZE_MEMORY_TYPE_UNKNOWN || (properties.type == ZE_MEMORY_TYPE_DEVICE && owner != d.id)) {
        invalid("buffer_wrap: the pointer is not memory of device " + std::to_string(device) +
                " in this plugin's Level Zero context (use buffers this plugin allocated, or host memory)");
      }
      void *base = nullptr;
      size_t size = 0;
      api.check(api.zeMemGetAddressRange(d.context, native, &base, &size), "buffer_wrap: zeMemGetAddressRange");
      const size_t available = size - static_cast<size_t>(static_cast<char *>(native) - static_cast<char *>(base));
      if (available < bytes) {
        invalid("buffer_wrap: the allocation holds " + std::to_string(available) + " bytes from the pointer on, " +
                std::to_string(bytes) + " were asked for");
      }
    }
    *out = new yirage_backend_buffer_s{instance, device, native, bytes, false};
  });
}

void buffer_release(yirage_backend_buffer *buffer) {
  if (buffer == nullptr) return;
  if (buffer->owned && buffer->memory != nullptr) {
    const Device &d = buffer->instance->devices[static_cast<size_t>(buffer->device)];
    buffer->instance->api->zeMemFree(d.context, buffer->memory);
  }
  delete buffer;
}

yirage_status buffer_write(yirage_backend_buffer *buffer, size_t offset, const void *source, size_t bytes,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(source, "source");
    yirage::backend::check_range("level_zero", buffer->bytes, offset, bytes, "buffer_write");
    if (bytes == 0) return;
    Device &d = device_of(buffer->instance, buffer->device);
    std::lock_guard<std::mutex> lock(*d.lock);
    yirage::level_zero::copy_to_device(*buffer->instance->api, d, static_cast<char *>(buffer->memory) + offset, source,
                                       bytes);
  });
}

yirage_status buffer_read(yirage_backend_buffer *buffer, size_t offset, void *destination, size_t bytes,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(destination, "destination");
    yirage::backend::check_range("level_zero", buffer->bytes, offset, bytes, "buffer_read");
    if (bytes == 0) return;
    Device &d = device_of(buffer->instance, buffer->device);
    std::lock_guard<std::mutex> lock(*d.lock);
    yirage::level_zero::copy_to_host(*buffer->instance->api, d, destination,
                                     static_cast<const char *>(buffer->memory) + offset, bytes);
  });
}

yirage_status buffer_native(yirage_backend_buffer *buffer, void **out_native, yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    require(out_native, "out_native");
    *out_native = buffer->memory;
  });
}

yirage_status supports(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                       yirage_backend_error *error) {
  return protect(error, [&] {
    const Device &d = device_of(instance, device);
    (void)yirage::codegen::opencl_source(parse(program, size), d.target);
  });
}

yirage_status compile(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                      const yirage_backend_compile_options *options, yirage_backend_executable **out,
                      yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_executable");
    const Device &d = device_of(instance, device);
    (void)yirage::backend::optimization_level("level_zero", options);  // checked; clang runs at -O2
    const yirage::serialize::KernelProgram parsed = parse(program, size);
    auto executable = std::make_unique<yirage_backend_executable_s>();
    executable->instance = instance;
    executable->device = device;
    executable->input_bytes = parsed.input_bytes();
    executable->output_bytes = parsed.output_bytes();
    const auto warn = [instance](const std::string &message) {
      const bool about_cache = message.find("cannot be written") != std::string::npos;
      if (!about_cache || !instance->cache_warning_given.exchange(true)) instance->warn(message);
    };
    executable->launch = yirage::codegen::opencl_source(parsed, d.target);
    const std::string spirv = instance->compiler->compile(executable->launch.source, warn);
    executable->built = yirage::level_zero::build_kernel(*instance->api, d, spirv, yirage::codegen::kOpenclKernelSymbol,
                                                         static_cast<uint32_t>(executable->launch.local_size));
    *out = executable.release();
  });
}

void executable_release(yirage_backend_executable *executable) {
  if (executable == nullptr) return;
  yirage::level_zero::release_kernel(*executable->instance->api, executable->built);
  delete executable;
}

yirage_status launch(yirage_backend_executable *executable, void *stream, yirage_backend_buffer *const *inputs,
                     size_t num_inputs, yirage_backend_buffer *const *outputs, size_t num_outputs,
                     yirage_backend_error *error) {
  return protect(error, [&] {
    require(executable, "executable");
    yirage::backend::check_launch_buffers("level_zero", "input", inputs, num_inputs, executable->input_bytes);
    yirage::backend::check_launch_buffers("level_zero", "output", outputs, num_outputs, executable->output_bytes);
    default_stream_only(stream);
    Device &d = device_of(executable->instance, executable->device);
    const Api &api = *executable->instance->api;
    const auto &groups = executable->launch.groups;
    const ze_group_count_t count{static_cast<uint32_t>(groups[0]), static_cast<uint32_t>(groups[1]),
                                 static_cast<uint32_t>(groups[2])};
    std::lock_guard<std::mutex> arguments(executable->arguments);
    for (size_t i = 0; i < num_inputs + num_outputs; ++i) {
      const yirage_backend_buffer *b = i < num_inputs ? inputs[i] : outputs[i - num_inputs];
      api.check(
          api.zeKernelSetArgumentValue(executable->built.kernel, static_cast<uint32_t>(i), sizeof(void *), &b->memory),
          "zeKernelSetArgumentValue");
    }
    std::lock_guard<std::mutex> lock(*d.lock);  // arguments are captured when the launch is appended
    yirage::level_zero::append_kernel(api, d, executable->built.kernel, count);
  });
}

yirage_status synchronize(yirage_backend_instance *instance, int32_t device, void *stream,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    Device &d = device_of(instance, device);
    default_stream_only(stream);
    std::lock_guard<std::mutex> lock(*d.lock);
    yirage::level_zero::finish(*instance->api, d);
  });
}

yirage_status timer_create(yirage_backend_instance *instance, int32_t device, yirage_backend_timer **out,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_timer");
    const Device &d = device_of(instance, device);
    auto timer = std::make_unique<yirage_backend_timer_s>();
    timer->instance = instance;
    timer->device = device;
    timer->timestamp = yirage::level_zero::create_timestamp(*instance->api, d);
    *out = timer.release();
  });
}

void timer_release(yirage_backend_timer *timer) {
  if (timer == nullptr) return;
  const Device &d = timer->instance->devices[static_cast<size_t>(timer->device)];
  yirage::level_zero::release_timestamp(*timer->instance->api, d, timer->timestamp);
  delete timer;
}

yirage_status timer_record(yirage_backend_timer *timer, void *stream, yirage_backend_error *error) {
  return protect(error, [&] {
    require(timer, "timer");
    default_stream_only(stream);
    Device &d = device_of(timer->instance, timer->device);
    std::lock_guard<std::mutex> lock(*d.lock);
    yirage::level_zero::record_timestamp(*timer->instance->api, d, timer->timestamp);
  });
}

yirage_status timer_elapsed(yirage_backend_timer *start, yirage_backend_timer *stop, double *out_seconds,
                            yirage_backend_error *error) {
  return protect(error, [&] {
    require(start, "start");
    require(stop, "stop");
    require(out_seconds, "out_seconds");
    if (!start->timestamp.recorded || !stop->timestamp.recorded) invalid("timer_elapsed: a timer was never recorded");
    if (start->instance != stop->instance || start->device != stop->device) {
      invalid("timer_elapsed: the timers belong to different devices");
    }
    const Device &d = device_of(start->instance, start->device);
    const Api &api = *start->instance->api;
    const uint64_t begin = yirage::level_zero::read_timestamp(api, d, start->timestamp);
    const uint64_t end = yirage::level_zero::read_timestamp(api, d, stop->timestamp);
    const uint64_t mask = d.timestamp_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << d.timestamp_bits) - 1;
    // The counter may wrap between the two: the difference modulo its width.
    *out_seconds = static_cast<double>((end - begin) & mask) / d.timer_hz;
  });
}

const yirage_backend_api kApi = {
    sizeof(yirage_backend_api),
    YIRAGE_BACKEND_ABI_MAJOR,
    YIRAGE_BACKEND_ABI_MINOR,
    "level_zero",
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
