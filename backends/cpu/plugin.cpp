// The CPU backend (libyirage-backend-cpu.so): the host as one device. Kernel programs become C++
// (backends/cpu/codegen/cpu_source.hpp), compiled by the system compiler and cached (compiler.hpp).
// Buffers are aligned host memory; a launch runs to completion before it returns, so streams
// are not used (NULL is the only stream) and timers are the host's monotonic clock. Kernels run
// on the instance's thread pool (thread_pool.hpp: how many threads, and why not OpenMP's).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "compiler.hpp"
#include "cpu/codegen/cpu_source.hpp"
#include "entry_guard.hpp"
#include "gemm.hpp"
#include "parallel_region.hpp"
#include "serialize/kernel_program.hpp"
#include "target/target_abi.hpp"
#include "thread_pool.hpp"
#include "util/error.hpp"
#include "yirage_backend.h"

struct yirage_backend_instance_s {
  yirage_backend_instance_s(std::string cache_dir, yirage::cpu::CompilerLog log)
      : compiler(std::move(cache_dir), log), log(log) {}
  yirage::cpu::Compiler compiler;
  yirage::cpu::CompilerLog log;
  std::once_flag info_once;
  yirage_backend_device_info info{};
  std::shared_ptr<yirage::cpu::ThreadPool> pool;  // made with the device's info; executables share it
  // Recordings being made (their recording streams are their addresses).
  std::mutex recording_mutex;
  std::set<const void *> recording;
};

struct yirage_backend_buffer_s {
  void *data;
  size_t bytes;
  bool owned;
};

struct yirage_backend_executable_s {
  yirage_backend_instance_s *instance;
  std::unique_ptr<yirage::cpu::LoadedKernel> kernel;
  std::vector<size_t> input_bytes, output_bytes;
  std::shared_ptr<yirage::cpu::ThreadPool> pool;
  yirage::cpu::KernelRuntime runtime;
  // A program of several operators: the bytes of the tensors only it reads
  // (codegen::program_own_tensors), and their memory, a set per launch running at once, kept
  // for the next launches (allocating it anew each time would fault its pages in each time).
  std::vector<size_t> own_bytes;
  std::mutex own_mutex;
  std::vector<std::vector<std::unique_ptr<void, decltype(&std::free)>>> own_free;
};

// Launches recorded (plugin ABI 1.3) and run in order at each replay: each kernel with its
// operands' addresses (the host's buffer wrappers do not outlive the run that recorded them).
struct yirage_backend_recording_s {
  struct Launch {
    yirage_backend_executable *executable;
    std::vector<void *> in, out;
  };
  std::vector<Launch> launches;
};

struct yirage_backend_timer_s {
  std::chrono::steady_clock::time_point when;
  bool recorded = false;
};

namespace {

using yirage::Error;
using yirage::ErrorCode;

template <class Body>
yirage_status protect(yirage_backend_error *error, Body &&body) noexcept {
  return yirage::backend::protect("cpu", error, std::forward<Body>(body));
}

[[noreturn]] void invalid(const std::string &message) {
  yirage::backend::invalid("cpu", message);
}

void require(const void *pointer, const char *name) {
  yirage::backend::require("cpu", pointer, name);
}

void check_device(int32_t device) {
  if (device != 0) invalid("no device " + std::to_string(device) + " (the host is device 0)");
}

const yirage_backend_device_info &device_info_of(yirage_backend_instance *instance) {
  std::call_once(instance->info_once, [instance] {
    std::string source, warning;
    const int threads = yirage::cpu::thread_count(&source, &warning);
    if (!warning.empty() && instance->log) instance->log(YIRAGE_BACKEND_LOG_WARNING, warning);
    instance->pool = std::make_shared<yirage::cpu::ThreadPool>(threads);
    // The device is the cores its threads have: the search's cost model sees as many.
    yirage::targets::TargetProperties host =
        yirage::targets::cpu_target_on_threads(yirage::targets::host_cpu_target(), threads);
    host.description += ", " + std::to_string(threads) + (threads == 1 ? " thread (" : " threads (") + source + ")";
    yirage_backend_device_info &info = instance->info;
    info.struct_size = sizeof info;
    std::snprintf(info.name, sizeof info.name, "%s", host.description.c_str());
    info.target.struct_size = sizeof info.target;
    yirage::targets::target_to_c(host, info.target);
    info.dtypes = (1u << YIRAGE_FLOAT16) | (1u << YIRAGE_BFLOAT16) | (1u << YIRAGE_FLOAT32);
    info.dlpack_device_type = kDLCPU;
    info.dlpack_device_id = 0;
    // Programs of several operators run as one parallel region (parallel_region.hpp).
    info.flags = YIRAGE_BACKEND_DEVICE_OPERATOR_GROUPS;
  });
  return instance->info;
}

yirage::serialize::KernelProgram parse(const void *program, size_t size) {
  require(program, "program");
  return yirage::serialize::kernel_program_from_bytes(program, size, yirage::serialize::ProgramOperators::kSeveral);
}

// ---- the table's entries ----

yirage_status create(const yirage_backend_host *host, yirage_backend_instance **out, yirage_backend_error *error) {
  return protect(error, [&] {
    yirage::backend::check_host("cpu", host, out);
    std::string cache =
        host->cache_dir && *host->cache_dir ? std::string(host->cache_dir) + "/cpu" : yirage::cpu::default_cache_dir();
    yirage::cpu::CompilerLog log;
    if (host->log != nullptr) {
      log = [print = host->log, user_data = host->log_user_data](yirage_backend_log_level level,
                                                                 const std::string &message) {
        print(user_data, level, message.c_str());
      };
    }
    *out = new yirage_backend_instance_s(std::move(cache), std::move(log));
  });
}

void destroy(yirage_backend_instance *instance) {
  delete instance;
}

yirage_status device_count(yirage_backend_instance *instance, int32_t *out, yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    require(out, "out_count");
    *out = 1;
  });
}

const char *unavailable_reason(yirage_backend_instance *) {
  return "";
}

yirage_status device_info(yirage_backend_instance *instance, int32_t device, yirage_backend_device_info *out,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    require(out, "out_info");
    check_device(device);
    if (out->struct_size < sizeof(yirage_backend_device_info)) invalid("out_info->struct_size too small");
    if (out->target.struct_size < sizeof(yirage_target_properties)) {
      invalid("out_info->target.struct_size too small");
    }
    // Everything this ABI knows, keeping the host's struct sizes; bytes beyond stay untouched.
    yirage_backend_device_info info = device_info_of(instance);
    info.struct_size = out->struct_size;
    info.target.struct_size = out->target.struct_size;
    std::memcpy(out, &info, sizeof info);
  });
}

yirage_status buffer_alloc(yirage_backend_instance *instance, int32_t device, size_t bytes, yirage_backend_buffer **out,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    require(out, "out_buffer");
    check_device(device);
    // More than the host's memory is refused up front rather than left to overcommit.
    const int64_t memory = device_info_of(instance).target.memory_bytes;
    if (bytes > static_cast<size_t>(memory)) {
      throw Error(ErrorCode::kOutOfMemory,
                  "cpu: cannot allocate " + std::to_string(bytes) + " bytes: the host has " + std::to_string(memory));
    }
    const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
    void *data = std::aligned_alloc(64, rounded);
    if (data == nullptr) {
      throw Error(ErrorCode::kOutOfMemory, "cpu: cannot allocate " + std::to_string(bytes) + " bytes");
    }
    *out = new yirage_backend_buffer_s{data, bytes, true};
  });
}

yirage_status buffer_wrap(yirage_backend_instance *instance, int32_t device, void *native, size_t bytes,
                          yirage_backend_buffer **out, yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    require(out, "out_buffer");
    check_device(device);
    if (native == nullptr && bytes > 0) invalid("buffer_wrap: native is NULL");
    *out = new yirage_backend_buffer_s{native, bytes, false};
  });
}

void buffer_release(yirage_backend_buffer *buffer) {
  if (buffer == nullptr) return;
  if (buffer->owned) std::free(buffer->data);
  delete buffer;
}

void check_range(const yirage_backend_buffer *buffer, size_t offset, size_t bytes, const char *op) {
  yirage::backend::check_range("cpu", buffer->bytes, offset, bytes, op);
}

yirage_status buffer_write(yirage_backend_buffer *buffer, size_t offset, const void *source, size_t bytes,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(source, "source");
    check_range(buffer, offset, bytes, "buffer_write");
    if (bytes > 0) std::memcpy(static_cast<char *>(buffer->data) + offset, source, bytes);
  });
}

yirage_status buffer_read(yirage_backend_buffer *buffer, size_t offset, void *destination, size_t bytes,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(destination, "destination");
    check_range(buffer, offset, bytes, "buffer_read");
    if (bytes > 0) std::memcpy(destination, static_cast<const char *>(buffer->data) + offset, bytes);
  });
}

yirage_status buffer_native(yirage_backend_buffer *buffer, void **out_native, yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    require(out_native, "out_native");
    *out_native = buffer->data;
  });
}

yirage_status supports(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                       yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    check_device(device);
    (void)yirage::codegen::cpu_source(parse(program, size));
  });
}

yirage_status compile(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                      const yirage_backend_compile_options *options, yirage_backend_executable **out,
                      yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    require(out, "out_executable");
    check_device(device);
    const int level = yirage::backend::optimization_level("cpu", options);
    const yirage::serialize::KernelProgram parsed = parse(program, size);
    const std::string source = yirage::codegen::cpu_source(parsed);
    device_info_of(instance);  // makes the thread pool
    auto executable = std::make_unique<yirage_backend_executable_s>();
    executable->instance = instance;
    executable->kernel = instance->compiler.compile(source, yirage::codegen::kCpuKernelSymbol, level).kernel;
    executable->input_bytes = parsed.input_bytes();
    executable->output_bytes = parsed.output_bytes();
    if (parsed.operator_count() > 1) {
      for (yirage::TensorId t : yirage::codegen::program_own_tensors(parsed.graph)) {
        const yirage::Tensor &tensor = parsed.graph.tensor(t);
        executable->own_bytes.push_back(static_cast<size_t>(yirage::num_elements(tensor.dims)) *
                                        yirage::dtype_size(tensor.dtype));
      }
    }
    executable->pool = instance->pool;
    executable->runtime = {yirage::cpu::ThreadPool::parallel_for_entry,
                           executable->pool.get(),
                           yirage::cpu::gemm_function(),
                           yirage::cpu::thread_scratch,
                           yirage::cpu::run_region,
                           0};
    *out = executable.release();
  });
}

void executable_release(yirage_backend_executable *executable) {
  delete executable;
}

std::vector<void *> data_of(yirage_backend_buffer *const *buffers, size_t n) {
  std::vector<void *> pointers;
  for (size_t i = 0; i < n; ++i) pointers.push_back(buffers[i]->data);
  return pointers;
}

using OwnMemory = std::vector<std::unique_ptr<void, decltype(&std::free)>>;

// Memory for a launch's own tensors: a set a launch before left, or new (64-byte aligned).
OwnMemory take_own_memory(yirage_backend_executable_s &executable) {
  {
    const std::lock_guard<std::mutex> lock(executable.own_mutex);
    if (!executable.own_free.empty()) {
      OwnMemory own = std::move(executable.own_free.back());
      executable.own_free.pop_back();
      return own;
    }
  }
  OwnMemory own;
  own.reserve(executable.own_bytes.size());
  for (size_t bytes : executable.own_bytes) {
    own.emplace_back(std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64)), &std::free);
    if (own.back() == nullptr) {
      throw Error(ErrorCode::kOutOfMemory,
                  "cpu: no memory for a program's own tensor of " + std::to_string(bytes) + " bytes");
    }
  }
  return own;
}

void run_kernel(yirage_backend_executable_s &executable, const std::vector<void *> &in,
                const std::vector<void *> &out) {
  int failed = 0;
  if (executable.own_bytes.empty()) {
    failed = executable.kernel->function()(in.data(), out.data(), &executable.runtime);
  } else {  // the program's own tensors follow the outputs
    OwnMemory own = take_own_memory(executable);
    std::vector<void *> out_and_own = out;
    for (const auto &memory : own) out_and_own.push_back(memory.get());
    failed = executable.kernel->function()(in.data(), out_and_own.data(), &executable.runtime);
    const std::lock_guard<std::mutex> lock(executable.own_mutex);
    executable.own_free.push_back(std::move(own));
  }
  if (failed != 0) throw Error(ErrorCode::kOutOfMemory, "cpu: a kernel thread could not allocate its tiles");
}

yirage_status launch(yirage_backend_executable *executable, void *stream, yirage_backend_buffer *const *inputs,
                     size_t num_inputs, yirage_backend_buffer *const *outputs, size_t num_outputs,
                     yirage_backend_error *error) {
  return protect(error, [&] {
    require(executable, "executable");
    yirage::backend::check_launch_buffers("cpu", "input", inputs, num_inputs, executable->input_bytes);
    yirage::backend::check_launch_buffers("cpu", "output", outputs, num_outputs, executable->output_bytes);
    std::vector<void *> in = data_of(inputs, num_inputs), out = data_of(outputs, num_outputs);
    if (stream != nullptr) {  // a recording's stream: recorded, not run
      yirage_backend_instance_s &instance = *executable->instance;
      const std::lock_guard<std::mutex> lock(instance.recording_mutex);
      if (instance.recording.count(stream) == 0) {
        invalid("launch: the CPU backend has no streams; pass NULL (or a stream recording_begin gave)");
      }
      static_cast<yirage_backend_recording_s *>(stream)->launches.push_back(
          {executable, std::move(in), std::move(out)});
      return;
    }
    run_kernel(*executable, in, out);
  });
}

yirage_status recording_begin(yirage_backend_instance *instance, int32_t device, void *stream,
                              void **out_recording_stream, yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    require(out_recording_stream, "out_recording_stream");
    check_device(device);
    if (stream != nullptr) invalid("recording_begin: the CPU backend has no streams; pass NULL");
    auto recording = std::make_unique<yirage_backend_recording_s>();
    const std::lock_guard<std::mutex> lock(instance->recording_mutex);
    instance->recording.insert(recording.get());
    *out_recording_stream = recording.release();
  });
}

yirage_status recording_end(yirage_backend_instance *instance, int32_t device, void *recording_stream,
                            yirage_backend_recording **out_recording, yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    require(out_recording, "out_recording");
    check_device(device);
    const std::lock_guard<std::mutex> lock(instance->recording_mutex);
    if (instance->recording.erase(recording_stream) == 0) invalid("recording_end: not a stream recording_begin gave");
    *out_recording = static_cast<yirage_backend_recording_s *>(recording_stream);
  });
}

yirage_status recording_replay(yirage_backend_recording *recording, yirage_backend_error *error) {
  return protect(error, [&] {
    require(recording, "recording");
    for (const yirage_backend_recording_s::Launch &l : recording->launches) run_kernel(*l.executable, l.in, l.out);
  });
}

void recording_release(yirage_backend_recording *recording) {
  delete recording;
}

yirage_status synchronize(yirage_backend_instance *instance, int32_t device, void *stream,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    check_device(device);
    if (stream != nullptr) invalid("synchronize: the CPU backend has no streams; pass NULL");
  });
}

yirage_status timer_create(yirage_backend_instance *instance, int32_t device, yirage_backend_timer **out,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(instance, "instance");
    require(out, "out_timer");
    check_device(device);
    *out = new yirage_backend_timer_s();
  });
}

void timer_release(yirage_backend_timer *timer) {
  delete timer;
}

yirage_status timer_record(yirage_backend_timer *timer, void *stream, yirage_backend_error *error) {
  return protect(error, [&] {
    require(timer, "timer");
    if (stream != nullptr) invalid("timer_record: the CPU backend has no streams; pass NULL");
    timer->when = std::chrono::steady_clock::now();
    timer->recorded = true;
  });
}

yirage_status timer_elapsed(yirage_backend_timer *start, yirage_backend_timer *stop, double *out_seconds,
                            yirage_backend_error *error) {
  return protect(error, [&] {
    require(start, "start");
    require(stop, "stop");
    require(out_seconds, "out_seconds");
    if (!start->recorded || !stop->recorded) invalid("timer_elapsed: a timer was never recorded");
    *out_seconds = std::chrono::duration<double>(stop->when - start->when).count();
  });
}

const yirage_backend_api kApi = {
    sizeof(yirage_backend_api),
    YIRAGE_BACKEND_ABI_MAJOR,
    YIRAGE_BACKEND_ABI_MINOR,
    "cpu",
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
    nullptr,  // estimate: a CPU's target has no per-iteration cost to refine
    buffer_native,
    recording_begin,
    recording_end,
    recording_replay,
    recording_release,
};

}  // namespace

extern "C" YIRAGE_BACKEND_EXPORT const yirage_backend_api *yirage_backend_entry(uint32_t, uint32_t) {
  return &kApi;
}
