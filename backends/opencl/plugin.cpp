// The OpenCL backend (libyirage-backend-opencl.so): every device of every OpenCL platform (GPUs
// through their vendors' drivers, CPUs through PoCL). Kernel programs become OpenCL C 1.2
// (codegen/opencl_source.hpp), built by the driver and cached as program binaries
// (programs.hpp). The ICD loader is opened with dlopen (cl_api.hpp), so the plugin loads
// anywhere; without a platform it reports zero devices and why (docs/backends/opencl.md).
//
// Buffers are cl_mem objects of the device's context (DLPack kDLOpenCL: the data field holds the
// cl_mem); a stream is a cl_command_queue of that context (NULL: the device's own in-order
// queue); timers are markers whose profiling end times are compared.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cl_api.hpp"
#include "devices.hpp"
#include "opencl/codegen/opencl_source.hpp"
#include "programs.hpp"
#include "serialize/kernel_program.hpp"
#include "util/file_cache.hpp"
#include "yirage_backend.h"

using yirage::Error;
using yirage::ErrorCode;
using yirage::opencl::Api;
using yirage::opencl::Device;

struct yirage_backend_instance_s {
  const Api *api = nullptr;
  std::string reason;  // why there are no devices
  std::vector<Device> devices;
  std::string cache_dir;
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
  cl_mem memory;  // nullptr for zero bytes
  size_t bytes;
  bool owned;
};

struct yirage_backend_executable_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  yirage::opencl::BuiltKernel built;
  yirage::codegen::OpenclKernel launch;
  std::vector<size_t> input_bytes, output_bytes;
  std::mutex arguments;  // a kernel's arguments are state: set and enqueue under this lock
};

struct yirage_backend_timer_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  cl_event event = nullptr;
};

namespace {

template <class Body>
yirage_status protect(yirage_backend_error *error, Body &&body) noexcept {
  return yirage::backend::protect("opencl", error, std::forward<Body>(body));
}

[[noreturn]] void invalid(const std::string &message) {
  yirage::backend::invalid("opencl", message);
}

void require(const void *pointer, const char *name) {
  yirage::backend::require("opencl", pointer, name);
}

Device &device_of(yirage_backend_instance *instance, int32_t device) {
  require(instance, "instance");
  return yirage::backend::device_at("opencl", instance->devices, device, instance->reason);
}

cl_command_queue queue_of(const Device &d, void *stream) {
  return stream != nullptr ? static_cast<cl_command_queue>(stream) : d.queue;
}

yirage::serialize::KernelProgram parse(const void *program, size_t size) {
  require(program, "program");
  return yirage::serialize::kernel_program_from_bytes(program, size);
}

// ---- the table's entries ----

yirage_status create(const yirage_backend_host *host, yirage_backend_instance **out, yirage_backend_error *error) {
  return protect(error, [&] {
    yirage::backend::check_host("opencl", host, out);
    auto instance = std::make_unique<yirage_backend_instance_s>();
    instance->cache_dir = host->cache_dir && *host->cache_dir ? std::string(host->cache_dir) + "/opencl"
                                                              : yirage::util::default_cache_dir("opencl");
    instance->log = host->log;
    instance->log_user_data = host->log_user_data;
    instance->api = Api::load(instance->reason);
    if (instance->api != nullptr) {
      std::vector<std::string> skipped;
      instance->devices = yirage::opencl::open_devices(*instance->api, instance->reason, skipped);
      for (const std::string &s : skipped) instance->warn("opencl: device left out: " + s);
    }
    *out = instance.release();
  });
}

void destroy(yirage_backend_instance *instance) {
  if (instance == nullptr) return;
  for (Device &d : instance->devices) yirage::opencl::close_device(*instance->api, d);
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
    yirage::backend::copy_device_info("opencl", d.info, out);
  });
}

yirage_status buffer_alloc(yirage_backend_instance *instance, int32_t device, size_t bytes, yirage_backend_buffer **out,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_buffer");
    const Device &d = device_of(instance, device);
    if (bytes > static_cast<size_t>(d.max_alloc_bytes)) {
      throw Error(ErrorCode::kOutOfMemory, "opencl: cannot allocate " + std::to_string(bytes) +
                                               " bytes: the device's largest allocation is " +
                                               std::to_string(d.max_alloc_bytes) + " (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    }
    cl_mem memory = nullptr;
    if (bytes > 0) {
      cl_int status = CL_SUCCESS;
      memory = instance->api->clCreateBuffer(d.context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
      instance->api->check(status, "clCreateBuffer of " + std::to_string(bytes) + " bytes");
    }
    *out = new yirage_backend_buffer_s{instance, device, memory, bytes, true};
  });
}

// A cl_mem of the device's context holding at least `bytes` (clGetMemObjectInfo).
yirage_status buffer_wrap(yirage_backend_instance *instance, int32_t device, void *native, size_t bytes,
                          yirage_backend_buffer **out, yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_buffer");
    const Device &d = device_of(instance, device);
    if (native == nullptr && bytes > 0) invalid("buffer_wrap: native is NULL");
    cl_mem memory = static_cast<cl_mem>(native);
    if (memory != nullptr) {
      const Api &api = *instance->api;
      size_t size = 0;
      cl_context context = nullptr;
      api.check(api.clGetMemObjectInfo(memory, CL_MEM_SIZE, sizeof size, &size, nullptr),
                "buffer_wrap: clGetMemObjectInfo (native must be a cl_mem)");
      api.check(api.clGetMemObjectInfo(memory, CL_MEM_CONTEXT, sizeof context, &context, nullptr),
                "buffer_wrap: clGetMemObjectInfo");
      if (context != d.context) {
        invalid("buffer_wrap: the cl_mem belongs to another OpenCL context than device " + std::to_string(device) +
                "'s (use buffers this plugin allocated, or host memory)");
      }
      if (size < bytes) {
        invalid("buffer_wrap: the cl_mem holds " + std::to_string(size) + " bytes, " + std::to_string(bytes) +
                " were asked for");
      }
    }
    *out = new yirage_backend_buffer_s{instance, device, memory, bytes, false};
  });
}

void buffer_release(yirage_backend_buffer *buffer) {
  if (buffer == nullptr) return;
  if (buffer->owned && buffer->memory != nullptr) buffer->instance->api->clReleaseMemObject(buffer->memory);
  delete buffer;
}

yirage_status buffer_write(yirage_backend_buffer *buffer, size_t offset, const void *source, size_t bytes,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(source, "source");
    yirage::backend::check_range("opencl", buffer->bytes, offset, bytes, "buffer_write");
    if (bytes == 0) return;
    const Device &d = device_of(buffer->instance, buffer->device);
    const Api &api = *buffer->instance->api;
    api.check(api.clEnqueueWriteBuffer(d.queue, buffer->memory, CL_TRUE, offset, bytes, source, 0, nullptr, nullptr),
              "clEnqueueWriteBuffer");
  });
}

yirage_status buffer_read(yirage_backend_buffer *buffer, size_t offset, void *destination, size_t bytes,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(destination, "destination");
    yirage::backend::check_range("opencl", buffer->bytes, offset, bytes, "buffer_read");
    if (bytes == 0) return;
    const Device &d = device_of(buffer->instance, buffer->device);
    const Api &api = *buffer->instance->api;
    api.check(
        api.clEnqueueReadBuffer(d.queue, buffer->memory, CL_TRUE, offset, bytes, destination, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  });
}

yirage_status buffer_native(yirage_backend_buffer *buffer, void **out_native, yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    require(out_native, "out_native");
    *out_native = static_cast<void *>(buffer->memory);
  });
}

yirage_status supports(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                       yirage_backend_error *error) {
  return protect(error, [&] {
    const Device &d = device_of(instance, device);
    (void)yirage::codegen::opencl_source(parse(program, size), d.target);
  });
}

// The largest power of two at most n.
int64_t power_of_two_below(size_t n) {
  int64_t p = 1;
  while (static_cast<size_t>(p) * 2 <= n) p *= 2;
  return p;
}

yirage_status compile(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                      const yirage_backend_compile_options *options, yirage_backend_executable **out,
                      yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_executable");
    const Device &d = device_of(instance, device);
    (void)yirage::backend::optimization_level("opencl", options);  // checked; drivers take no level
    const yirage::serialize::KernelProgram parsed = parse(program, size);
    const Api &api = *instance->api;
    auto executable = std::make_unique<yirage_backend_executable_s>();
    executable->instance = instance;
    executable->device = device;
    executable->input_bytes = parsed.input_bytes();
    executable->output_bytes = parsed.output_bytes();
    const auto warn = [instance](yirage::opencl::BuildWarning kind, const std::string &message) {
      const bool once = kind == yirage::opencl::BuildWarning::kCacheUnwritable;
      if (!once || !instance->cache_warning_given.exchange(true)) instance->warn(message);
    };
    yirage::codegen::OpenclTarget target = d.target;
    executable->launch = yirage::codegen::opencl_source(parsed, target);
    executable->built = yirage::opencl::build_kernel(api, d, executable->launch.source,
                                                     yirage::codegen::kOpenclKernelSymbol, instance->cache_dir, warn);
    // A kernel whose registers do not allow the work-group the source fixed is generated again
    // for the size the driver allows (every generated kernel works with any size).
    const size_t allowed = executable->built.work_group_size;
    if (allowed < static_cast<size_t>(executable->launch.local_size)) {
      yirage::opencl::release_kernel(api, executable->built);
      target.max_work_group = power_of_two_below(allowed);
      executable->launch = yirage::codegen::opencl_source(parsed, target);
      executable->built = yirage::opencl::build_kernel(api, d, executable->launch.source,
                                                       yirage::codegen::kOpenclKernelSymbol, instance->cache_dir, warn);
      if (executable->built.work_group_size < static_cast<size_t>(executable->launch.local_size)) {
        const size_t again = executable->built.work_group_size;
        yirage::opencl::release_kernel(api, executable->built);
        throw Error(ErrorCode::kUnsupported,
                    "opencl: the device refuses a work-group of " + std::to_string(executable->launch.local_size) +
                        " work-items for this kernel (CL_KERNEL_WORK_GROUP_SIZE " + std::to_string(again) + ")");
      }
    }
    *out = executable.release();
  });
}

void executable_release(yirage_backend_executable *executable) {
  if (executable == nullptr) return;
  yirage::opencl::release_kernel(*executable->instance->api, executable->built);
  delete executable;
}

yirage_status launch(yirage_backend_executable *executable, void *stream, yirage_backend_buffer *const *inputs,
                     size_t num_inputs, yirage_backend_buffer *const *outputs, size_t num_outputs,
                     yirage_backend_error *error) {
  return protect(error, [&] {
    require(executable, "executable");
    yirage::backend::check_launch_buffers("opencl", "input", inputs, num_inputs, executable->input_bytes);
    yirage::backend::check_launch_buffers("opencl", "output", outputs, num_outputs, executable->output_bytes);
    const Device &d = device_of(executable->instance, executable->device);
    const Api &api = *executable->instance->api;
    const auto &launch = executable->launch;
    const size_t local[3] = {static_cast<size_t>(launch.local_size), 1, 1};
    const size_t global[3] = {static_cast<size_t>(launch.groups[0] * launch.local_size),
                              static_cast<size_t>(launch.groups[1]), static_cast<size_t>(launch.groups[2])};
    std::lock_guard<std::mutex> lock(executable->arguments);
    cl_uint index = 0;
    for (size_t i = 0; i < num_inputs + num_outputs; ++i) {
      const yirage_backend_buffer *b = i < num_inputs ? inputs[i] : outputs[i - num_inputs];
      api.check(api.clSetKernelArg(executable->built.kernel, index++, sizeof(cl_mem), &b->memory), "clSetKernelArg");
    }
    api.check(api.clEnqueueNDRangeKernel(queue_of(d, stream), executable->built.kernel, 3, nullptr, global, local, 0,
                                         nullptr, nullptr),
              "clEnqueueNDRangeKernel (" + std::to_string(launch.groups[0]) + "×" + std::to_string(launch.groups[1]) +
                  "×" + std::to_string(launch.groups[2]) + " work-groups of " + std::to_string(launch.local_size) +
                  ")");
  });
}

yirage_status synchronize(yirage_backend_instance *instance, int32_t device, void *stream,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    const Device &d = device_of(instance, device);
    instance->api->check(instance->api->clFinish(queue_of(d, stream)), "clFinish");
  });
}

yirage_status timer_create(yirage_backend_instance *instance, int32_t device, yirage_backend_timer **out,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_timer");
    device_of(instance, device);
    *out = new yirage_backend_timer_s{instance, device};
  });
}

void timer_release(yirage_backend_timer *timer) {
  if (timer == nullptr) return;
  if (timer->event != nullptr) timer->instance->api->clReleaseEvent(timer->event);
  delete timer;
}

yirage_status timer_record(yirage_backend_timer *timer, void *stream, yirage_backend_error *error) {
  return protect(error, [&] {
    require(timer, "timer");
    const Device &d = device_of(timer->instance, timer->device);
    const Api &api = *timer->instance->api;
    cl_event event = nullptr;
    api.check(api.clEnqueueMarkerWithWaitList(queue_of(d, stream), 0, nullptr, &event), "clEnqueueMarkerWithWaitList");
    if (timer->event != nullptr) api.clReleaseEvent(timer->event);
    timer->event = event;
  });
}

// The device time at which the timer's marker completed, in nanoseconds.
cl_ulong marker_end(const yirage_backend_timer *timer) {
  const Api &api = *timer->instance->api;
  api.check(api.clWaitForEvents(1, &timer->event), "clWaitForEvents");
  cl_ulong end = 0;
  api.check(api.clGetEventProfilingInfo(timer->event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
            "clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)");
  return end;
}

yirage_status timer_elapsed(yirage_backend_timer *start, yirage_backend_timer *stop, double *out_seconds,
                            yirage_backend_error *error) {
  return protect(error, [&] {
    require(start, "start");
    require(stop, "stop");
    require(out_seconds, "out_seconds");
    if (start->event == nullptr || stop->event == nullptr) invalid("timer_elapsed: a timer was never recorded");
    const cl_ulong begin = marker_end(start), end = marker_end(stop);
    *out_seconds = end >= begin ? static_cast<double>(end - begin) * 1e-9 : -static_cast<double>(begin - end) * 1e-9;
  });
}

const yirage_backend_api kApi = {
    sizeof(yirage_backend_api),
    YIRAGE_BACKEND_ABI_MAJOR,
    YIRAGE_BACKEND_ABI_MINOR,
    "opencl",
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
