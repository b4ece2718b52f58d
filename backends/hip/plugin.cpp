// The HIP backend (libyirage-backend-hip.so): AMD GPUs through the HIP runtime, kernels printed by
// the CUDA generator in its HIP dialect (hip_target.hpp), compiled by hiprtc for the device's
// gcnArchName and cached as code objects. libamdhip64.so is opened with dlopen, so the plugin loads
// anywhere; without a GPU it reports zero devices and why. YIRAGE_HIP_PLATFORM=cuda runs the same
// plugin on NVIDIA GPUs through the CUDA driver API and NVRTC, a test mode (runtime.hpp,
// docs/backends/hip.md).
#include <dlpack/dlpack.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/codegen/cuda_source.hpp"
#include "entry_guard.hpp"
#include "generated_kernels.hpp"
#include "hip_target.hpp"
#include "kernel_estimate.hpp"
#include "mfma_probe.hpp"
#include "runtime.hpp"
#include "serialize/kernel_program.hpp"
#include "util/file_cache.hpp"
#include "yirage_backend.h"

namespace {

using yirage::Error;
using yirage::ErrorCode;
using yirage::hip::Runtime;

struct Device {
  yirage::hip::RuntimeDevice properties;
  yirage_backend_device_info info{};
  // Its matrix cores' self-test (mfma_probe.hpp): 0 not run yet, 1 passed, -1 failed (MFMA off).
  int mfma_probe = 0;
};

}  // namespace

struct yirage_backend_instance_s {
  std::unique_ptr<Runtime> runtime;
  std::string reason;  // why there are no devices
  std::vector<Device> devices;
  std::string cache_dir;
  yirage::cuda::GeneratedKernels generated;
  void (*log)(void *, yirage_backend_log_level, const char *) = nullptr;  // the host's; may be NULL
  void *log_user_data = nullptr;
  uint32_t host_minor = 0;                                 // the host's YIRAGE_BACKEND_ABI_MINOR
  mutable std::atomic<bool> cache_unwritable_said{false};  // the warning is given once
  std::mutex mfma_probe_mutex;                             // one self-test at a time (Device::mfma_probe)
};

struct yirage_backend_buffer_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  uint64_t pointer;
  size_t bytes;
  bool owned;
};

struct yirage_backend_executable_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  void *module = nullptr;
  void *function = nullptr;
  std::shared_ptr<const yirage::cuda::GeneratedKernel> generated;
};

struct yirage_backend_timer_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  void *event = nullptr;
  bool recorded = false;
};

namespace {

template <class Body>
yirage_status protect(yirage_backend_error *error, Body &&body) noexcept {
  return yirage::backend::protect("hip", error, std::forward<Body>(body));
}

[[noreturn]] void invalid(const std::string &message) {
  yirage::backend::invalid("hip", message);
}

void require(const void *pointer, const char *name) {
  yirage::backend::require("hip", pointer, name);
}

Device &device_of(yirage_backend_instance *instance, int32_t device) {
  require(instance, "instance");
  return yirage::backend::device_at("hip", instance->devices, device, instance->reason);
}

// Makes the device current on this thread.
Runtime &enter(yirage_backend_instance *instance, int32_t device) {
  device_of(instance, device);
  instance->runtime->enter(device);
  return *instance->runtime;
}

void log(const yirage_backend_instance *instance, yirage_backend_log_level level, const std::string &message) {
  if (instance->log != nullptr) instance->log(instance->log_user_data, level, message.c_str());
}

// Which matmuls may take gfx90a's matrix cores (MFMA; docs/backends/hip.md, "Matrix cores (MFMA)"),
// once the device passed their self-test (mfma_verified). Neither kind has run on an AMD GPU. A
// µGraph's tile matmuls do by default: the self-test checks the instructions on the device, the
// host emulator the code's use of them, and a search also checks every candidate it times against
// the reference executor on the device; YIRAGE_HIP_MFMA=0 turns them off. Pre-defined matmuls only
// with YIRAGE_HIP_MFMA=1: nothing measures whether their MFMA kernel (operands straight from
// memory) beats the float one, and a graph run as it is reaches them unchecked.
struct MfmaUse {
  bool predefined = false, tiles = false;
};
MfmaUse mfma_use(const yirage::hip::RuntimeDevice &p) {
  if (yirage::hip::processor_of(p.arch) != "gfx90a" || p.wavefront != 64) return {};
  const char *asked = std::getenv("YIRAGE_HIP_MFMA");
  const std::string value = asked != nullptr ? asked : "";
  if (value == "0") return {};
  return {value == "1", true};
}

// The device's description. HIP reports no bandwidths or FLOP/s: they are estimated from its clocks
// (docs/backends/hip.md, "Devices and properties").
void describe(const Runtime &runtime, Device &d) {
  const yirage::hip::RuntimeDevice &p = d.properties;
  const bool on_cuda = std::string(runtime.platform()) == "cuda";
  yirage_backend_device_info &info = d.info;
  info.struct_size = sizeof info;
  // At most 100 characters of the driver's name, so that the architecture and CU count always fit.
  const std::string name = p.name.substr(0, 100) + " (" + yirage::hip::processor_of(p.arch) + ", " +
                           std::to_string(p.compute_units) + " CUs, " + (on_cuda ? "HIP source through NVRTC" : "HIP") +
                           ")";
  std::snprintf(info.name, sizeof info.name, "%s", name.c_str());
  yirage_target_properties &t = info.target;
  t.struct_size = sizeof t;
  const std::string target = (on_cuda ? "hip-on-cuda-" : "hip-") + yirage::hip::processor_of(p.arch);
  std::snprintf(t.name, sizeof t.name, "%s", target.c_str());
  t.kind = YIRAGE_TARGET_GPU;
  t.compute_units = p.compute_units;
  t.max_threads_per_block = p.max_threads_per_block;
  t.max_blocks_per_compute_unit = p.wavefront > 0 ? p.threads_per_compute_unit / p.wavefront : 0;
  t.threads_per_compute_unit = p.threads_per_compute_unit;
  t.shared_memory_per_block = p.lds_per_block;
  t.shared_memory_per_compute_unit = p.lds_per_compute_unit;
  t.warp_width = p.wavefront;
  t.memory_bytes = p.memory_bytes;
  t.l2_bytes = p.l2_bytes;
  // HBM moves two words per memory clock over the bus; a CU issues 64 FP32 FMAs per clock (four
  // SIMDs of 16 lanes on CDNA, two of 32 on RDNA). 16-bit data is computed in float32, except
  // where µGraph tiles take gfx90a's MFMA: 1024 16-bit FLOPs per CU and clock (v_mfma_f32_16x16x16:
  // 8192 FLOPs in 32 cycles on each of 4 SIMDs), the 16 × 16 × 16 matrix unit.
  t.memory_bandwidth = 2.0 * static_cast<double>(p.memory_clock_khz) * 1e3 * static_cast<double>(p.memory_bus_bits) / 8;
  t.l2_bandwidth = 3 * t.memory_bandwidth;
  t.vector_flops_float32 = static_cast<double>(p.compute_units) * 128 * static_cast<double>(p.clock_khz) * 1e3;
  t.peak_flops_float32 = t.vector_flops_float32;
  const bool mfma = mfma_use(p).tiles;
  t.peak_flops_float16 = mfma ? 8 * t.vector_flops_float32 : t.vector_flops_float32;
  t.peak_flops_bfloat16 = t.peak_flops_float16;
  if (mfma) t.matrix_unit[0] = t.matrix_unit[1] = t.matrix_unit[2] = 16;
  t.launch_overhead_seconds = 5e-6;
  t.loop_iteration_seconds = yirage::codegen::kCudaLoopIterationSeconds;
  info.dtypes = (1u << YIRAGE_FLOAT16) | (1u << YIRAGE_BFLOAT16) | (1u << YIRAGE_FLOAT32);
  info.dlpack_device_type = runtime.dlpack_device_type();
}

// The generator's target for device `d`; mfma_allowed false: no MFMA whatever mfma_use says.
yirage::codegen::CudaTarget target_of(const Device &d, bool mfma_allowed) {
  const yirage::hip::RuntimeDevice &p = d.properties;
  const MfmaUse mfma = mfma_allowed ? mfma_use(p) : MfmaUse{};
  return yirage::hip::hip_target(p.lds_per_block, p.compute_units, p.lds_per_compute_unit, p.wavefront, mfma.predefined,
                                 mfma.tiles);
}

// The code object for `source`, from the cache or from the compiler. The source is kept beside it
// as `<key>.hip`. A bad entry is rebuilt and replaced; a cache that cannot be written serves its
// hits, and a code object it cannot keep is used all the same (one warning).
std::string code_object_for(const yirage_backend_instance *instance, const std::string &source,
                            const std::string &arch) {
  const Runtime &runtime = *instance->runtime;
  const std::string key =
      yirage::util::hash_hex(source + '\0' + arch + '\0' + runtime.platform() + '\0' + runtime.compiler_identity());
  const std::string path = instance->cache_dir + "/" + key + ".co";
  std::string why;
  if (auto cached = yirage::util::read_cached(path, &why)) return *cached;
  if (!why.empty()) log(instance, YIRAGE_BACKEND_LOG_WARNING, "hip: rebuilding " + path + ": " + why);
  std::string code = runtime.compile(source, arch);
  try {
    yirage::util::store_cached(instance->cache_dir + "/" + key + ".hip", source);
    yirage::util::store_cached(path, code);
  } catch (const Error &e) {
    if (!instance->cache_unwritable_said.exchange(true)) {
      log(instance, YIRAGE_BACKEND_LOG_WARNING,
          "hip: the kernel cache " + instance->cache_dir + " cannot be written (" + e.what() +
              "): kernels are built and used without being kept");
    }
  }
  return code;
}

// Whether device `device`'s matrix cores failed their self-test (false: passed, or not run yet).
bool mfma_failed(yirage_backend_instance *instance, int32_t device) {
  const std::lock_guard<std::mutex> lock(instance->mfma_probe_mutex);
  return instance->devices[static_cast<size_t>(device)].mfma_probe < 0;
}

// Whether device `device`'s matrix cores passed their self-test (mfma_probe.hpp), run here the first
// time a kernel would use them; a failure turns MFMA off on the device for this instance, with a
// warning.
bool mfma_verified(yirage_backend_instance *instance, int32_t device) {
  const std::lock_guard<std::mutex> lock(instance->mfma_probe_mutex);
  Device &d = instance->devices[static_cast<size_t>(device)];
  if (d.mfma_probe != 0) return d.mfma_probe > 0;
  std::string why;
  try {
    const yirage::hip::MfmaProbe probe = yirage::hip::mfma_probe();
    const std::string code = code_object_for(instance, probe.source, d.properties.arch);
    why = yirage::hip::run_mfma_probe(enter(instance, device), code, probe);
  } catch (const std::exception &e) {
    why = e.what();
  }
  d.mfma_probe = why.empty() ? 1 : -1;
  if (!why.empty()) {
    log(instance, YIRAGE_BACKEND_LOG_WARNING,
        "hip: device " + std::to_string(device) +
            "'s matrix cores failed their self-test, so no kernel uses MFMA: " + why);
  }
  return d.mfma_probe > 0;
}

// The runtime YIRAGE_HIP_PLATFORM asks for: HIP (unset, "hip") or the CUDA test mode ("cuda").
std::unique_ptr<Runtime> open_runtime(std::string &why) {
  const char *platform = std::getenv("YIRAGE_HIP_PLATFORM");
  const std::string name = platform != nullptr ? platform : "";
  if (name.empty() || name == "hip") return yirage::hip::hip_runtime(why);
  if (name == "cuda") return yirage::hip::cuda_runtime(why);
  why = "hip: YIRAGE_HIP_PLATFORM is '" + name + "': expected hip or cuda";
  return nullptr;
}

// ---- the table's entries ----

yirage_status create(const yirage_backend_host *host, yirage_backend_instance **out, yirage_backend_error *error) {
  return protect(error, [&] {
    yirage::backend::check_host("hip", host, out);
    auto instance = std::make_unique<yirage_backend_instance_s>();
    instance->cache_dir = host->cache_dir && *host->cache_dir ? std::string(host->cache_dir) + "/hip"
                                                              : yirage::util::default_cache_dir("hip");
    instance->host_minor = host->abi_minor;
    instance->log = host->log;
    instance->log_user_data = host->log_user_data;
    instance->runtime = open_runtime(instance->reason);
    if (instance->runtime != nullptr) {
      for (const yirage::hip::RuntimeDevice &p : instance->runtime->devices(instance->reason)) {
        instance->devices.push_back({p, {}});
        describe(*instance->runtime, instance->devices.back());
      }
    }
    *out = instance.release();
  });
}

void destroy(yirage_backend_instance *instance) {
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
    yirage_backend_device_info info = device_of(instance, device).info;
    info.dlpack_device_id = device;
    yirage::backend::copy_device_info("hip", info, out);
  });
}

yirage_status buffer_alloc(yirage_backend_instance *instance, int32_t device, size_t bytes, yirage_backend_buffer **out,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_buffer");
    Runtime &runtime = enter(instance, device);
    const Device &d = device_of(instance, device);
    if (bytes > static_cast<size_t>(d.info.target.memory_bytes)) {
      throw Error(ErrorCode::kOutOfMemory, "hip: cannot allocate " + std::to_string(bytes) + " bytes: the device has " +
                                               std::to_string(d.info.target.memory_bytes));
    }
    const uint64_t pointer = bytes > 0 ? runtime.allocate(bytes) : 0;
    *out = new yirage_backend_buffer_s{instance, device, pointer, bytes, true};
  });
}

yirage_status buffer_wrap(yirage_backend_instance *instance, int32_t device, void *native, size_t bytes,
                          yirage_backend_buffer **out, yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_buffer");
    device_of(instance, device);
    if (native == nullptr && bytes > 0) invalid("buffer_wrap: native is NULL");
    *out = new yirage_backend_buffer_s{instance, device, reinterpret_cast<uint64_t>(native), bytes, false};
  });
}

void buffer_release(yirage_backend_buffer *buffer) {
  if (buffer == nullptr) return;
  if (buffer->owned && buffer->pointer != 0) {
    try {
      buffer->instance->runtime->enter(buffer->device);
    } catch (const Error &) {
      // Freed from whichever device is current: the runtime finds the allocation's own.
    }
    buffer->instance->runtime->release(buffer->pointer);
  }
  delete buffer;
}

yirage_status buffer_write(yirage_backend_buffer *buffer, size_t offset, const void *source, size_t bytes,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(source, "source");
    yirage::backend::check_range("hip", buffer->bytes, offset, bytes, "buffer_write");
    if (bytes == 0) return;
    enter(buffer->instance, buffer->device).copy_to_device(buffer->pointer + offset, source, bytes);
  });
}

yirage_status buffer_read(yirage_backend_buffer *buffer, size_t offset, void *destination, size_t bytes,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(destination, "destination");
    yirage::backend::check_range("hip", buffer->bytes, offset, bytes, "buffer_read");
    if (bytes == 0) return;
    enter(buffer->instance, buffer->device).copy_to_host(destination, buffer->pointer + offset, bytes);
  });
}

yirage_status buffer_native(yirage_backend_buffer *buffer, void **out_native, yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    require(out_native, "out_native");
    *out_native = reinterpret_cast<void *>(buffer->pointer);
  });
}

// The program's kernel for device `device`, generated once for supports(), estimate() and
// compile() alike (the CUDA plugin's GeneratedKernels).
std::shared_ptr<const yirage::cuda::GeneratedKernel> generated(yirage_backend_instance *instance, int32_t device,
                                                               const void *program, size_t size) {
  const Device &d = device_of(instance, device);
  require(program, "program");
  return instance->generated.get(device, program, size, [&] {
    const yirage::serialize::KernelProgram parsed = yirage::serialize::kernel_program_from_bytes(program, size);
    yirage::codegen::CudaKernel kernel =
        yirage::codegen::cuda_source(parsed, target_of(d, !mfma_failed(instance, device)));
    // A kernel on the matrix cores waits for their self-test, and is generated without them if it fails.
    if (kernel.source.find("__builtin_amdgcn_mfma_") != std::string::npos && !mfma_verified(instance, device)) {
      kernel = yirage::codegen::cuda_source(parsed, target_of(d, false));
    }
    // HIP targets never split a weight product's k over blocks (CudaTarget::k_split_blocks).
    if (kernel.workspace_bytes != 0) throw Error(ErrorCode::kInternal, "hip: a generated kernel asks for a workspace");
    return yirage::cuda::GeneratedKernel{kernel, parsed.input_bytes(), parsed.output_bytes(), parsed.name};
  });
}

yirage_status supports(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                       yirage_backend_error *error) {
  return protect(error, [&] { (void)generated(instance, device, program, size); });
}

yirage_status estimate(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                       yirage_backend_kernel_estimate *out, yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_estimate");
    const yirage::codegen::CudaKernel &kernel = generated(instance, device, program, size)->kernel;
    // Only the waits, which follow from the code's structure: the shared-memory rate and the
    // register limit were measured on NVIDIA GPUs (no AMD GPU has run this code), and HIP has no
    // programmatic dependent launch.
    yirage_backend_kernel_estimate answer = kernel.estimate(0, instance->host_minor);
    answer.shared_memory_seconds = answer.dependent_launch_seconds = -1;
    answer.max_resident_blocks = -1;
    yirage::backend::write_kernel_estimate("hip", *out, answer);
  });
}

yirage_status compile(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                      const yirage_backend_compile_options *options, yirage_backend_executable **out,
                      yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_executable");
    const Device &d = device_of(instance, device);
    (void)yirage::backend::optimization_level("hip", options);  // hiprtc always gets -O3
    auto executable = std::make_unique<yirage_backend_executable_s>();
    executable->instance = instance;
    executable->device = device;
    executable->generated = generated(instance, device, program, size);
    const yirage::codegen::CudaKernel &kernel = executable->generated->kernel;
    if (kernel.block_threads > d.properties.max_threads_per_block) {
      throw Error(ErrorCode::kUnsupported, "hip: the kernel needs " + std::to_string(kernel.block_threads) +
                                               " threads per block, the device allows " +
                                               std::to_string(d.properties.max_threads_per_block));
    }
    const std::string code = code_object_for(instance, kernel.source, d.properties.arch);
    Runtime &runtime = enter(instance, device);
    executable->module = runtime.load_module(code);
    try {
      executable->function =
          runtime.function(executable->module, yirage::codegen::kCudaKernelSymbol, kernel.shared_bytes);
    } catch (...) {
      runtime.unload_module(executable->module);
      throw;
    }
    *out = executable.release();
  });
}

void executable_release(yirage_backend_executable *executable) {
  if (executable == nullptr) return;
  try {
    executable->instance->runtime->enter(executable->device);
  } catch (const Error &) {
    // Unloaded from whichever device is current.
  }
  executable->instance->runtime->unload_module(executable->module);
  delete executable;
}

// The device pointers of a role's buffers, after the shared checks; all on the kernel's device.
void collect(const char *role, yirage_backend_buffer *const *buffers, size_t n, const std::vector<size_t> &bytes,
             int32_t device, std::vector<uint64_t> &pointers) {
  yirage::backend::check_launch_buffers("hip", role, buffers, n, bytes);
  for (size_t i = 0; i < n; ++i) {
    if (buffers[i]->device != device)
      invalid(std::string("launch: ") + role + " " + std::to_string(i) + " is on another device");
    pointers.push_back(buffers[i]->pointer);
  }
}

yirage_status launch(yirage_backend_executable *executable, void *stream, yirage_backend_buffer *const *inputs,
                     size_t num_inputs, yirage_backend_buffer *const *outputs, size_t num_outputs,
                     yirage_backend_error *error) {
  return protect(error, [&] {
    require(executable, "executable");
    std::vector<uint64_t> pointers;
    collect("input", inputs, num_inputs, executable->generated->input_bytes, executable->device, pointers);
    collect("output", outputs, num_outputs, executable->generated->output_bytes, executable->device, pointers);
    std::vector<void *> args;
    for (uint64_t &p : pointers) args.push_back(&p);
    const yirage::codegen::CudaKernel &k = executable->generated->kernel;
    enter(executable->instance, executable->device)
        .launch(executable->function, k.grid, k.block_threads, k.shared_bytes, stream, args.data());
  });
}

yirage_status synchronize(yirage_backend_instance *instance, int32_t device, void *stream,
                          yirage_backend_error *error) {
  return protect(error, [&] { enter(instance, device).synchronize(stream); });
}

yirage_status timer_create(yirage_backend_instance *instance, int32_t device, yirage_backend_timer **out,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_timer");
    Runtime &runtime = enter(instance, device);
    auto timer = std::make_unique<yirage_backend_timer_s>();
    timer->instance = instance;
    timer->device = device;
    timer->event = runtime.event_create();
    *out = timer.release();
  });
}

void timer_release(yirage_backend_timer *timer) {
  if (timer == nullptr) return;
  timer->instance->runtime->event_destroy(timer->event);
  delete timer;
}

yirage_status timer_record(yirage_backend_timer *timer, void *stream, yirage_backend_error *error) {
  return protect(error, [&] {
    require(timer, "timer");
    enter(timer->instance, timer->device).event_record(timer->event, stream);
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
    *out_seconds = enter(stop->instance, stop->device).event_seconds(start->event, stop->event);
  });
}

const yirage_backend_api kApi = {
    sizeof(yirage_backend_api),
    YIRAGE_BACKEND_ABI_MAJOR,
    YIRAGE_BACKEND_ABI_MINOR,
    "hip",
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
    estimate,
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
