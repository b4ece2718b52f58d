// The CUDA backend (libyirage-backend-cuda.so): NVIDIA GPUs through the driver API, kernels
// generated as CUDA C++ (backends/cuda/codegen/cuda_source.hpp), compiled by NVRTC for the device's compute
// capability and cached as cubins. libcuda.so.1 and NVRTC are opened with dlopen, so the plugin
// loads anywhere; without a driver it reports zero devices and why (docs/backends/cuda.md).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cublas_matmul.hpp"
#include "cuda/codegen/cuda_source.hpp"
#include "dependent_launch.hpp"
#include "device_figures.hpp"
#include "driver.hpp"
#include "generated_kernels.hpp"
#include "kernel_estimate.hpp"
#include "serialize/kernel_program.hpp"
#include "stream_workspaces.hpp"
#include "target/target_abi.hpp"
#include "util/file_cache.hpp"
#include "watch_records.hpp"
#include "yirage_backend.h"

namespace {

using yirage::Error;
using yirage::ErrorCode;
using yirage::cuda::Driver;

struct Device {
  CUdevice handle = 0;
  CUcontext context = nullptr;  // the primary context, retained while the instance lives
  int cc_major = 0, cc_minor = 0;
  int64_t max_shared_optin = 0;
  yirage_backend_device_info info{};
};

}  // namespace

struct yirage_backend_instance_s {
  const Driver *driver = nullptr;
  std::string reason;  // why there are no devices
  std::vector<Device> devices;
  std::string cache_dir;
  yirage::cuda::GeneratedKernels generated;
  void (*log)(void *, yirage_backend_log_level, const char *) = nullptr;  // the host's; may be NULL
  void *log_user_data = nullptr;
  uint32_t host_minor = 0;                                 // the host's YIRAGE_BACKEND_ABI_MINOR
  mutable std::atomic<bool> cache_unwritable_said{false};  // the warning is given once
  // Recordings being made: their recording streams, each with the stream the recording will
  // replay on, whose workspaces its launches take.
  std::mutex recording_mutex;
  std::map<CUstream, CUstream> replays_on;
  std::atomic<int> recording{0};  // replays_on.size(), read without the lock on every launch
  // Each kernel-level matmul's choice (choose_matmul: a cuBLASLt algorithm, or -1 for the
  // generated kernel) by device and program (without its name), made at its first compile: a
  // program compiled again (the same product in another graph, a graph compiled twice) runs what
  // the first compile chose, rather than what another timing's noise would.
  // The watch records of the persistent kernels compiled (watch_records.hpp).
  yirage::cuda::WatchRecords watches;
  std::mutex matmul_choices_mutex;
  std::map<std::pair<int32_t, std::vector<uint8_t>>, int> matmul_choices;

  // The stream whose workspaces a launch on `stream` takes.
  CUstream memory_of(CUstream stream) {
    if (recording.load(std::memory_order_acquire) == 0) return stream;
    const std::lock_guard<std::mutex> lock(recording_mutex);
    const auto found = replays_on.find(stream);
    return found == replays_on.end() ? stream : found->second;
  }
};

struct yirage_backend_buffer_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  CUdeviceptr pointer;
  size_t bytes;
  bool owned;
};

struct yirage_backend_executable_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  yirage::codegen::CudaKernel launch;
  std::shared_ptr<const yirage::cuda::GeneratedKernel> generated;
  // A matmul that cuBLASLt runs faster than the generated kernel (on 16-byte aligned operands;
  // others take the generated kernel).
  std::unique_ptr<yirage::cuda::CublasMatmul> cublas;
  // The generated kernel's workspace per stream (launch.workspace_bytes > 0).
  yirage::cuda::StreamWorkspaces workspaces{"a generated kernel's workspace", true};
  // A persistent kernel's watch record (launch.persistent_tasks > 0).
  yirage::cuda::WatchRecords::Record watch;
};

// Launches recorded into a CUDA graph, replayed on the stream they were recorded for.
struct yirage_backend_recording_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  CUstream stream;
  CUgraphExec exec;
};

struct yirage_backend_timer_s {
  yirage_backend_instance_s *instance;
  int32_t device;
  CUevent event = nullptr;
  bool recorded = false;
};

namespace {

template <class Body>
yirage_status protect(yirage_backend_error *error, Body &&body) noexcept {
  return yirage::backend::protect("cuda", error, std::forward<Body>(body));
}

[[noreturn]] void invalid(const std::string &message) {
  yirage::backend::invalid("cuda", message);
}

void require(const void *pointer, const char *name) {
  yirage::backend::require("cuda", pointer, name);
}

Device &device_of(yirage_backend_instance *instance, int32_t device) {
  require(instance, "instance");
  return yirage::backend::device_at("cuda", instance->devices, device, instance->reason);
}

// Makes the device's primary context current on this thread.
const Driver &enter(yirage_backend_instance *instance, int32_t device) {
  Device &d = device_of(instance, device);
  instance->driver->check(instance->driver->cuCtxSetCurrent(d.context), "cuCtxSetCurrent");
  return *instance->driver;
}

int attribute(const Driver &driver, CUdevice device, CUdevice_attribute which) {
  int value = 0;
  driver.check(driver.cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
  return value;
}

void describe(const Driver &driver, Device &d) {
  char name[128] = {0};
  driver.check(driver.cuDeviceGetName(name, sizeof name - 1, d.handle), "cuDeviceGetName");
  size_t memory = 0;
  driver.check(driver.cuDeviceTotalMem(&memory, d.handle), "cuDeviceTotalMem");
  d.cc_major = attribute(driver, d.handle, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  d.cc_minor = attribute(driver, d.handle, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  const int sms = attribute(driver, d.handle, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d.max_shared_optin = attribute(driver, d.handle, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);

  yirage_backend_device_info &info = d.info;
  info.struct_size = sizeof info;
  // At most 100 characters of the driver's name, so that the architecture and SM count always fit.
  std::snprintf(info.name, sizeof info.name, "%.100s (sm_%d%d, %d SMs)", name, d.cc_major, d.cc_minor, sms);
  yirage_target_properties &t = info.target;
  t.struct_size = sizeof t;
  std::snprintf(t.name, sizeof t.name, "cuda-sm_%d%d", d.cc_major, d.cc_minor);
  t.kind = YIRAGE_TARGET_GPU;
  t.compute_units = sms;
  t.max_threads_per_block = attribute(driver, d.handle, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  t.max_blocks_per_compute_unit = attribute(driver, d.handle, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  t.threads_per_compute_unit = attribute(driver, d.handle, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  t.shared_memory_per_block = d.max_shared_optin;
  t.shared_memory_per_compute_unit =
      attribute(driver, d.handle, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  t.warp_width = attribute(driver, d.handle, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  t.memory_bytes = static_cast<int64_t>(memory);
  t.l2_bytes = attribute(driver, d.handle, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  const yirage::cuda::DeviceFigures figures =
      yirage::cuda::device_figures(d.cc_major * 10 + d.cc_minor, sms, t.memory_bytes);
  t.memory_bandwidth = figures.memory_bandwidth;
  t.l2_bandwidth = figures.l2_bandwidth;
  t.peak_flops_float16 = figures.flops_float16;
  t.peak_flops_bfloat16 = d.cc_major >= 8 ? figures.flops_bfloat16 : 0;
  t.peak_flops_float32 = figures.flops_float32;
  t.vector_flops_float32 = figures.vector_flops_float32;
  t.matrix_unit[0] = 16;
  t.matrix_unit[1] = 8;
  t.matrix_unit[2] = 16;
  t.launch_overhead_seconds = figures.launch_overhead_seconds;
  t.loop_iteration_seconds = yirage::codegen::kCudaLoopIterationSeconds;
  info.dtypes = (1u << YIRAGE_FLOAT16) | (1u << YIRAGE_FLOAT32) | (d.cc_major >= 8 ? (1u << YIRAGE_BFLOAT16) : 0u);
  info.dlpack_device_type = kDLCUDA;
  info.flags = YIRAGE_BACKEND_DEVICE_OPERATOR_GROUPS;  // a loop split and its sum in one launch
}

// Programs of several operators are taken: the generator runs a loop split and its sum in one
// launch and refuses the rest (cuda_split_pair.hpp).
yirage::serialize::KernelProgram parse(const void *program, size_t size) {
  require(program, "program");
  return yirage::serialize::kernel_program_from_bytes(program, size, yirage::serialize::ProgramOperators::kSeveral);
}

std::string arch_of(const Device &d) {
  return yirage::codegen::cuda_arch(d.cc_major * 10 + d.cc_minor);
}
yirage::codegen::CudaTarget target_of(const Device &d) {
  yirage::codegen::CudaTarget target{d.cc_major * 10 + d.cc_minor, d.max_shared_optin, d.info.target.compute_units,
                                     d.info.target.shared_memory_per_compute_unit};
  target.attention_offset_slack =
      yirage::codegen::attention_offset_slack_from(std::getenv("YIRAGE_CUDA_ATTENTION_SLACK"));
  const char *k_split = std::getenv("YIRAGE_CUDA_K_SPLIT");
  target.k_split = k_split == nullptr || std::string(k_split) != "0";
  target.wait_timeout_ms = yirage::codegen::wait_timeout_ms_from(std::getenv("YIRAGE_CUDA_WAIT_TIMEOUT_MS"));
  const char *hang = std::getenv("YIRAGE_CUDA_TEST_HANG");
  target.hang_for_tests = hang != nullptr && std::string(hang) == "1";
  return target;
}

void log(const yirage_backend_instance *instance, yirage_backend_log_level level, const std::string &message);

// The cubin for `source`, from the cache or from NVRTC. The source is kept beside it as
// `<key>.cu` (docs/backends/cuda.md: inspecting what was generated and launched). A bad entry is
// rebuilt and replaced; a cache that cannot be written serves its hits, and a cubin it cannot
// keep is used all the same (one warning).
std::string cubin_for(const yirage_backend_instance *instance, const std::string &source, const std::string &arch) {
  const yirage::cuda::Nvrtc &nvrtc = yirage::cuda::Nvrtc::load();
  const std::string key = yirage::util::hash_hex(source + '\0' + arch + '\0' + std::to_string(nvrtc.major) + "." +
                                                 std::to_string(nvrtc.minor));
  const std::string path = instance->cache_dir + "/" + key + ".cubin";
  std::string why;
  if (auto cached = yirage::util::read_cached(path, &why)) return *cached;
  if (!why.empty()) log(instance, YIRAGE_BACKEND_LOG_WARNING, "cuda: rebuilding " + path + ": " + why);
  std::string cubin = nvrtc.compile(source, arch);
  try {
    yirage::util::store_cached(instance->cache_dir + "/" + key + ".cu", source);
    yirage::util::store_cached(path, cubin);
  } catch (const yirage::Error &e) {
    if (!instance->cache_unwritable_said.exchange(true)) {
      log(instance, YIRAGE_BACKEND_LOG_WARNING,
          "cuda: the kernel cache " + instance->cache_dir + " cannot be written (" + e.what() +
              "): kernels are built and used without being kept");
    }
  }
  return cubin;
}

// ---- the table's entries ----

yirage_status create(const yirage_backend_host *host, yirage_backend_instance **out, yirage_backend_error *error) {
  return protect(error, [&] {
    yirage::backend::check_host("cuda", host, out);
    auto instance = std::make_unique<yirage_backend_instance_s>();
    instance->cache_dir = host->cache_dir && *host->cache_dir ? std::string(host->cache_dir) + "/cuda"
                                                              : yirage::util::default_cache_dir("cuda");
    instance->host_minor = host->abi_minor;
    instance->log = host->log;
    instance->log_user_data = host->log_user_data;
    instance->driver = Driver::load(instance->reason);
    if (instance->driver != nullptr) {
      const Driver &driver = *instance->driver;
      int count = 0;
      const CUresult init = driver.cuInit(0);
      if (init != CUDA_SUCCESS || driver.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
        const char *name = nullptr;
        driver.cuGetErrorName(init, &name);
        instance->reason = init != CUDA_SUCCESS ? std::string("cuda: cuInit failed: ") + (name ? name : "unknown error")
                                                : "cuda: the driver reports no devices";
      }
      for (int i = 0; i < count && init == CUDA_SUCCESS; ++i) {
        Device d;
        driver.check(driver.cuDeviceGet(&d.handle, i), "cuDeviceGet");
        driver.check(driver.cuDevicePrimaryCtxRetain(&d.context, d.handle), "cuDevicePrimaryCtxRetain");
        instance->devices.push_back(d);
        describe(driver, instance->devices.back());
      }
    }
    *out = instance.release();
  });
}

void log(const yirage_backend_instance *instance, yirage_backend_log_level level, const std::string &message) {
  if (instance->log != nullptr) instance->log(instance->log_user_data, level, message.c_str());
}

void destroy(yirage_backend_instance *instance) {
  if (instance == nullptr) return;
  for (const Device &d : instance->devices) instance->driver->cuDevicePrimaryCtxRelease(d.handle);
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
    yirage_backend_device_info info = d.info;
    info.dlpack_device_id = device;
    yirage::backend::copy_device_info("cuda", info, out);
  });
}

yirage_status buffer_alloc(yirage_backend_instance *instance, int32_t device, size_t bytes, yirage_backend_buffer **out,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_buffer");
    const Driver &driver = enter(instance, device);
    const Device &d = device_of(instance, device);
    if (bytes > static_cast<size_t>(d.info.target.memory_bytes)) {
      throw Error(ErrorCode::kOutOfMemory, "cuda: cannot allocate " + std::to_string(bytes) +
                                               " bytes: the device has " + std::to_string(d.info.target.memory_bytes));
    }
    CUdeviceptr pointer = 0;
    if (bytes > 0)
      driver.check(driver.cuMemAlloc(&pointer, bytes), "cuMemAlloc of " + std::to_string(bytes) + " bytes");
    *out = new yirage_backend_buffer_s{instance, device, pointer, bytes, true};
  });
}

yirage_status buffer_wrap(yirage_backend_instance *instance, int32_t device, void *native, size_t bytes,
                          yirage_backend_buffer **out, yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_buffer");
    device_of(instance, device);
    if (native == nullptr && bytes > 0) invalid("buffer_wrap: native is NULL");
    *out = new yirage_backend_buffer_s{instance, device, reinterpret_cast<CUdeviceptr>(native), bytes, false};
  });
}

void buffer_release(yirage_backend_buffer *buffer) {
  if (buffer == nullptr) return;
  if (buffer->owned && buffer->pointer != 0) {
    const Driver &driver = *buffer->instance->driver;
    driver.cuCtxSetCurrent(buffer->instance->devices[static_cast<size_t>(buffer->device)].context);
    driver.cuMemFree(buffer->pointer);
  }
  delete buffer;
}

yirage_status buffer_write(yirage_backend_buffer *buffer, size_t offset, const void *source, size_t bytes,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(source, "source");
    yirage::backend::check_range("cuda", buffer->bytes, offset, bytes, "buffer_write");
    if (bytes == 0) return;
    const Driver &driver = enter(buffer->instance, buffer->device);
    driver.check(driver.cuMemcpyHtoD(buffer->pointer + offset, source, bytes), "cuMemcpyHtoD");
  });
}

yirage_status buffer_read(yirage_backend_buffer *buffer, size_t offset, void *destination, size_t bytes,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    if (bytes > 0) require(destination, "destination");
    yirage::backend::check_range("cuda", buffer->bytes, offset, bytes, "buffer_read");
    if (bytes == 0) return;
    const Driver &driver = enter(buffer->instance, buffer->device);
    driver.check(driver.cuMemcpyDtoH(destination, buffer->pointer + offset, bytes), "cuMemcpyDtoH");
    buffer->instance->watches.check(nullptr, true);  // the copy waited for every stream
  });
}

yirage_status buffer_native(yirage_backend_buffer *buffer, void **out_native, yirage_backend_error *error) {
  return protect(error, [&] {
    require(buffer, "buffer");
    require(out_native, "out_native");
    *out_native = reinterpret_cast<void *>(buffer->pointer);
  });
}

// bfloat16 needs sm_80 (cvt); the generator's own refusals come from cuda_source.
void refuse_unsupported_dtypes(const Device &d, const yirage::serialize::KernelProgram &program) {
  for (int32_t id : program.graph.inputs()) {
    if (program.graph.tensor(id).dtype == yirage::DType::kBFloat16 && d.cc_major < 8) {
      throw Error(ErrorCode::kUnsupported, "cuda: bfloat16 needs sm_80 or newer");
    }
  }
}

// The program's kernel for device `device`, generated once for supports(), estimate() and
// compile() alike (GeneratedKernels).
std::shared_ptr<const yirage::cuda::GeneratedKernel> generated(yirage_backend_instance *instance, int32_t device,
                                                               const void *program, size_t size) {
  const Device &d = device_of(instance, device);
  require(program, "program");
  return instance->generated.get(device, program, size, [&] {
    const yirage::serialize::KernelProgram parsed = parse(program, size);
    refuse_unsupported_dtypes(d, parsed);
    return yirage::cuda::GeneratedKernel{yirage::codegen::cuda_source(parsed, target_of(d)), parsed.input_bytes(),
                                         parsed.output_bytes(), parsed.name};
  });
}

yirage_status supports(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                       yirage_backend_error *error) {
  return protect(error, [&] { (void)generated(instance, device, program, size); });
}

// What the code generator chose for the program (supports() with its answer).
yirage_status estimate(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                       yirage_backend_kernel_estimate *out, yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_estimate");
    const yirage::codegen::CudaKernel &kernel = generated(instance, device, program, size)->kernel;
    const double launch = instance->devices.at(static_cast<size_t>(device)).info.target.launch_overhead_seconds;
    yirage::backend::write_kernel_estimate("cuda", *out, kernel.estimate(launch, instance->host_minor));
  });
}

// A kernel launched as a programmatic dependent asks for enough dynamic shared memory that its
// blocks spread over the device instead of crowding the multiprocessors the kernel before it
// leaves free (dependent_launch.hpp). Its source is unchanged: it uses what it used.
void spread_dependent_blocks(const Driver &driver, const Device &d, yirage_backend_executable_s &executable) {
  yirage::codegen::CudaKernel &launch = executable.launch;
  const CUfunction function = executable.function;
  int static_bytes = 0;
  driver.check(driver.cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
               "cuFuncGetAttribute");
  const int64_t most = d.max_shared_optin - static_bytes;
  if (most <= launch.shared_bytes) return;
  const auto set_most = [&](int64_t bytes) {
    driver.check(
        driver.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes)),
        "cuFuncSetAttribute");
  };
  set_most(most);  // so that the occupancy below may count any amount
  const int64_t bytes = yirage::cuda::dependent_shared_bytes(
      launch.grid[0] * launch.grid[1] * launch.grid[2], d.info.target.compute_units, launch.shared_bytes, most,
      [&](int64_t candidate) {
        int blocks = 0;
        driver.check(driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                         &blocks, function, static_cast<int>(launch.block_threads), static_cast<size_t>(candidate)),
                     "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        return static_cast<int64_t>(blocks);
      });
  set_most(bytes);  // what its launches ask for
  launch.shared_bytes = bytes;
}

// A persistent kernel (cuda_persistent.hpp) runs on as many blocks a multiprocessor as its widest
// operator needs to have one block per task on the device (as that operator's own kernel would
// spread), at most as many as are resident at once, and at most one per task. More blocks would
// share multiprocessors with the tasks they wait for. Launched as a dependent, its blocks are
// spread over the device as any other kernel's (spread_dependent_blocks). Its waits cannot deadlock however many
// are resident, but a kernel of which no block fits on a multiprocessor is refused here, before
// any launch. Its watch record is made here too.
void plan_persistent(const Driver &driver, const Device &d, yirage_backend_executable_s &executable) {
  yirage::codegen::CudaKernel &launch = executable.launch;
  int resident = 0;
  driver.check(driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(&resident, executable.function,
                                                                  static_cast<int>(launch.block_threads),
                                                                  static_cast<size_t>(launch.shared_bytes)),
               "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (resident <= 0) {
    int registers = 0;
    driver.cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, executable.function);
    throw Error(ErrorCode::kUnsupported, "cuda: kernel program \"" + executable.generated->name +
                                             "\": no block of its persistent kernel fits on a multiprocessor (" +
                                             std::to_string(launch.block_threads) + " threads of " +
                                             std::to_string(registers) + " registers, " +
                                             std::to_string(launch.shared_bytes) + " bytes of shared memory)");
  }
  const int64_t sms = d.info.target.compute_units;
  const int64_t per_sm = std::min<int64_t>(resident, (launch.persistent_widest + sms - 1) / sms);
  launch.grid = {std::min<int64_t>(launch.persistent_tasks, per_sm * sms), 1, 1};
  executable.watch = executable.instance->watches.add(driver, executable.generated->name, launch.wait_timeout_ms);
}

// The generated kernel on `stream` (its operands' pointers in order).
void launch_generated(const Driver &driver, yirage_backend_executable_s &executable, std::vector<CUdeviceptr> &pointers,
                      CUstream stream, CUstream memory) {
  const auto &l = executable.launch;
  std::vector<void *> args;
  args.reserve(pointers.size() + 1);
  for (CUdeviceptr &p : pointers) args.push_back(&p);
  CUdeviceptr workspace = 0;  // the last parameter, where the kernel has one
  if (l.workspace_bytes > 0) {
    workspace = executable.workspaces.get(driver, memory, static_cast<size_t>(l.workspace_bytes));
    args.push_back(&workspace);
  }
  CUdeviceptr watch = executable.watch.device;
  if (l.persistent_tasks > 0) {
    args.push_back(&watch);
    executable.instance->watches.launched(executable.watch, memory);
  }
  if (l.waits_for_previous && driver.cuLaunchKernelEx != nullptr) {
    // Programmatic dependent launch: the kernel may start while the previous kernel in the
    // stream runs; it reads and writes no memory before griddepcontrol.wait returns (it may
    // prefetch into L2, which is coherent).
    CUlaunchAttribute overlap{};
    overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    overlap.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = static_cast<unsigned>(l.grid[0]);
    config.gridDimY = static_cast<unsigned>(l.grid[1]);
    config.gridDimZ = static_cast<unsigned>(l.grid[2]);
    config.blockDimX = static_cast<unsigned>(l.block_threads);
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = static_cast<unsigned>(l.shared_bytes);
    config.hStream = stream;
    config.attrs = &overlap;
    config.numAttrs = 1;
    driver.check(driver.cuLaunchKernelEx(&config, executable.function, args.data(), nullptr), "cuLaunchKernelEx");
    return;
  }
  driver.check(
      driver.cuLaunchKernel(executable.function, static_cast<unsigned>(l.grid[0]), static_cast<unsigned>(l.grid[1]),
                            static_cast<unsigned>(l.grid[2]), static_cast<unsigned>(l.block_threads), 1, 1,
                            static_cast<unsigned>(l.shared_bytes), stream, args.data(), nullptr),
      "cuLaunchKernel");
}

// Enqueues the executable on `stream`: cuBLASLt's matmul where it was chosen and the operands
// are aligned for it, else the generated kernel. Workspaces are `memory`'s (the stream itself,
// or where a recording made on it will replay).
void launch_on(const Driver &driver, yirage_backend_executable_s &executable, std::vector<CUdeviceptr> &pointers,
               CUstream stream, CUstream memory) {
  yirage::cuda::CublasMatmul *cublas = executable.cublas.get();
  if (cublas != nullptr && std::all_of(pointers.begin(), pointers.end(), yirage::cuda::CublasMatmul::aligned)) {
    cublas->launch(driver, pointers, stream, memory);
    return;
  }
  launch_generated(driver, executable, pointers, stream, memory);
}

// Device seconds of a launch of `run` on the default stream, as a layer's weights are read: the
// median of five launches, each after `flush` has filled L2 with other lines, after one warm-up.
double seconds_per_launch(const Driver &driver, const std::function<void()> &run, const std::function<void()> &flush) {
  CUevent start = nullptr, stop = nullptr;
  driver.check(driver.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  const CUresult created = driver.cuEventCreate(&stop, CU_EVENT_DEFAULT);
  if (created != CUDA_SUCCESS) driver.cuEventDestroy(start);
  driver.check(created, "cuEventCreate");
  std::vector<float> ms(5);
  try {
    run();
    for (float &t : ms) {
      flush();
      driver.check(driver.cuEventRecord(start, nullptr), "cuEventRecord");
      run();
      driver.check(driver.cuEventRecord(stop, nullptr), "cuEventRecord");
      driver.check(driver.cuEventSynchronize(stop), "cuEventSynchronize");
      driver.check(driver.cuEventElapsedTime(&t, start, stop), "cuEventElapsedTime");
    }
  } catch (...) {
    driver.cuEventDestroy(start);
    driver.cuEventDestroy(stop);
    throw;
  }
  driver.cuEventDestroy(start);
  driver.cuEventDestroy(stop);
  std::nth_element(ms.begin(), ms.begin() + 2, ms.end());
  return ms[2] * 1e-3;
}

// Device memory freed on scope exit (the context current then as when allocated).
struct Scratch {
  const Driver &driver;
  std::vector<CUdeviceptr> pointers;
  ~Scratch() {
    for (CUdeviceptr p : pointers) driver.cuMemFree(p);
  }
  CUdeviceptr allocate(size_t bytes) {
    CUdeviceptr p = 0;
    driver.check(driver.cuMemAlloc(&p, std::max<size_t>(bytes, 16)), "cuMemAlloc");
    pointers.push_back(p);
    return p;
  }
};

// For a kernel-level matmul, or a µGraph the generator made one product of its whole inputs
// (CudaKernel::whole_product; cuBLASLt takes it with at most a residual added): times cuBLASLt's
// algorithms (where cuBLASLt is there) against the generated kernel on scratch operands and keeps
// cuBLASLt's fastest in executable.cublas where it beats the generated kernel. The choice is
// logged, and kept for the program's later compiles on the instance (matmul_choices).
void choose_matmul(const Driver &driver, yirage_backend_executable_s &executable, const void *program, size_t size) {
  const yirage::serialize::KernelProgram parsed = parse(program, size);
  if (parsed.operator_count() != 1 ||
      (parsed.op().kind != yirage::OpKind::kMatmul && !executable.generated->kernel.whole_product)) {
    return;
  }
  std::string why;
  const yirage::cuda::CublasLt *lt = yirage::cuda::CublasLt::load(why);
  if (lt == nullptr) {
    log(executable.instance, YIRAGE_BACKEND_LOG_DEBUG, why + "; matmuls run the generated kernel");
    return;
  }
  std::unique_ptr<yirage::cuda::CublasMatmul> plan = yirage::cuda::CublasMatmul::plan(*lt, parsed, 4);
  if (!plan) return;
  yirage::serialize::KernelProgram unnamed = parsed;
  unnamed.name.clear();
  yirage_backend_instance_s &instance = *executable.instance;
  const auto key = std::make_pair(executable.device, yirage::serialize::kernel_program_to_bytes(unnamed));
  {
    const std::lock_guard<std::mutex> lock(instance.matmul_choices_mutex);
    const auto made = instance.matmul_choices.find(key);
    if (made != instance.matmul_choices.end()) {
      if (made->second >= 0 && made->second < plan->algorithms()) {
        plan->choose(made->second);
        executable.cublas = std::move(plan);
      }
      return;
    }
  }
  Scratch scratch{driver, {}};
  std::vector<CUdeviceptr> operands;
  for (size_t bytes : executable.generated->input_bytes) operands.push_back(scratch.allocate(bytes));
  operands.push_back(scratch.allocate(executable.generated->output_bytes[0]));
  size_t workspace_bytes = 0;
  for (int a = 0; a < plan->algorithms(); ++a) workspace_bytes = std::max(workspace_bytes, plan->workspace_bytes(a));
  const CUdeviceptr workspace = workspace_bytes > 0 ? scratch.allocate(workspace_bytes) : 0;
  // L2's size of other lines written before each timed launch: the operands come from memory.
  const Device &device = device_of(executable.instance, executable.device);
  const auto l2 = static_cast<size_t>(std::max<int64_t>(device.info.target.l2_bytes, 1 << 20));
  const CUdeviceptr lines = scratch.allocate(l2);
  const auto flush = [&] { driver.check(driver.cuMemsetD32Async(lines, 0, l2 / 4, nullptr), "cuMemsetD32Async"); };
  double best = seconds_per_launch(
      driver, [&] { launch_generated(driver, executable, operands, nullptr, nullptr); }, flush);
  std::string report = plan->shape() + ": generated " + std::to_string(best * 1e6) + " us";
  int chosen = -1;
  for (int a = 0; a < plan->algorithms(); ++a) {
    const double t = seconds_per_launch(
        driver, [&] { plan->run(a, operands, workspace, nullptr); }, flush);
    report += ", cuBLASLt algorithm " + std::to_string(a) + " " + std::to_string(t * 1e6) + " us";
    if (t < best) best = t, chosen = a;
  }
  log(executable.instance, YIRAGE_BACKEND_LOG_DEBUG,
      "cuda: matmul " + report + ": " + (chosen < 0 ? "generated" : "cuBLASLt " + std::to_string(chosen)));
  {
    const std::lock_guard<std::mutex> lock(instance.matmul_choices_mutex);
    chosen = instance.matmul_choices.emplace(key, chosen).first->second;  // a concurrent compile's, if first
  }
  if (chosen < 0 || chosen >= plan->algorithms()) return;
  plan->choose(chosen);
  executable.cublas = std::move(plan);
}

yirage_status compile(yirage_backend_instance *instance, int32_t device, const void *program, size_t size,
                      const yirage_backend_compile_options *options, yirage_backend_executable **out,
                      yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_executable");
    const Device &d = device_of(instance, device);
    (void)yirage::backend::optimization_level("cuda", options);  // NVRTC always optimizes
    auto executable = std::make_unique<yirage_backend_executable_s>();
    executable->instance = instance;
    executable->device = device;
    executable->generated = generated(instance, device, program, size);
    executable->launch = executable->generated->kernel;
    const std::string cubin = cubin_for(instance, executable->launch.source, arch_of(d));
    const Driver &driver = enter(instance, device);
    driver.check(driver.cuModuleLoadData(&executable->module, cubin.data()), "cuModuleLoadData");
    const CUresult found =
        driver.cuModuleGetFunction(&executable->function, executable->module, yirage::codegen::kCudaKernelSymbol);
    if (found == CUDA_SUCCESS && executable->launch.shared_bytes > yirage::codegen::kCudaDefaultSharedBytes) {
      driver.check(driver.cuFuncSetAttribute(executable->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             static_cast<int>(executable->launch.shared_bytes)),
                   "cuFuncSetAttribute");
    }
    if (found != CUDA_SUCCESS) {
      driver.cuModuleUnload(executable->module);
      driver.check(found, "cuModuleGetFunction");
    }
    // The registers the compiled kernel uses bound its block size.
    int max_threads = 0;
    const CUresult queried =
        driver.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, executable->function);
    if (queried == CUDA_SUCCESS && executable->launch.block_threads > max_threads) {
      if (!executable->launch.any_block_threads || max_threads < 32) {
        driver.cuModuleUnload(executable->module);
        throw Error(ErrorCode::kUnsupported,
                    "cuda: the kernel needs " + std::to_string(executable->launch.block_threads) +
                        " threads per block, its registers allow " + std::to_string(max_threads));
      }
      executable->launch.block_threads = max_threads / 32 * 32;
    }
    try {
      if (executable->launch.persistent_tasks > 0) plan_persistent(driver, d, *executable);
      if (executable->launch.waits_for_previous && driver.cuLaunchKernelEx != nullptr) {
        spread_dependent_blocks(driver, d, *executable);
      }
      choose_matmul(driver, *executable, program, size);
    } catch (...) {
      if (executable->cublas) executable->cublas->free_workspaces(driver);
      executable->workspaces.free_all(driver);
      instance->watches.remove(driver, executable->watch);
      driver.cuModuleUnload(executable->module);
      throw;
    }
    *out = executable.release();
  });
}

void executable_release(yirage_backend_executable *executable) {
  if (executable == nullptr) return;
  const Driver &driver = *executable->instance->driver;
  driver.cuCtxSetCurrent(executable->instance->devices[static_cast<size_t>(executable->device)].context);
  if (executable->cublas) executable->cublas->free_workspaces(driver);
  executable->workspaces.free_all(driver);
  executable->instance->watches.remove(driver, executable->watch);
  driver.cuModuleUnload(executable->module);
  delete executable;
}

// The device pointers of a role's buffers, after the shared checks; all on the kernel's device.
void collect(const char *role, yirage_backend_buffer *const *buffers, size_t n, const std::vector<size_t> &bytes,
             int32_t device, std::vector<CUdeviceptr> &pointers) {
  yirage::backend::check_launch_buffers("cuda", role, buffers, n, bytes);
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
    std::vector<CUdeviceptr> pointers;
    pointers.reserve(num_inputs + num_outputs);
    collect("input", inputs, num_inputs, executable->generated->input_bytes, executable->device, pointers);
    collect("output", outputs, num_outputs, executable->generated->output_bytes, executable->device, pointers);
    const Driver &driver = enter(executable->instance, executable->device);
    const auto on = static_cast<CUstream>(stream);
    launch_on(driver, *executable, pointers, on, executable->instance->memory_of(on));
  });
}

yirage_status recording_begin(yirage_backend_instance *instance, int32_t device, void *stream,
                              void **out_recording_stream, yirage_backend_error *error) {
  return protect(error, [&] {
    require(out_recording_stream, "out_recording_stream");
    const Driver &driver = enter(instance, device);
    if (!driver.graphs()) {
      throw Error(ErrorCode::kUnsupported,
                  "cuda: recording_begin: the driver has no CUDA graphs (cuStreamBeginCapture_v2, "
                  "cuGraphInstantiateWithFlags…)");
    }
    CUstream recording = nullptr;
    driver.check(driver.cuStreamCreate(&recording, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    // Relaxed: other threads may allocate meanwhile, as the first launch on a stream does.
    const CUresult began = driver.cuStreamBeginCapture(recording, CU_STREAM_CAPTURE_MODE_RELAXED);
    if (began != CUDA_SUCCESS) driver.cuStreamDestroy(recording);
    driver.check(began, "cuStreamBeginCapture");
    const std::lock_guard<std::mutex> lock(instance->recording_mutex);
    instance->replays_on[recording] = static_cast<CUstream>(stream);
    instance->recording.store(static_cast<int>(instance->replays_on.size()), std::memory_order_release);
    *out_recording_stream = recording;
  });
}

yirage_status recording_end(yirage_backend_instance *instance, int32_t device, void *recording_stream,
                            yirage_backend_recording **out_recording, yirage_backend_error *error) {
  return protect(error, [&] {
    require(out_recording, "out_recording");
    const Driver &driver = enter(instance, device);
    const auto recording = static_cast<CUstream>(recording_stream);
    CUstream replay_on = nullptr;
    {
      const std::lock_guard<std::mutex> lock(instance->recording_mutex);
      const auto found = instance->replays_on.find(recording);
      if (found == instance->replays_on.end()) invalid("recording_end: not a stream recording_begin gave");
      replay_on = found->second;
      instance->replays_on.erase(found);
      instance->recording.store(static_cast<int>(instance->replays_on.size()), std::memory_order_release);
    }
    CUgraph graph = nullptr;
    const CUresult ended = driver.cuStreamEndCapture(recording, &graph);
    driver.cuStreamDestroy(recording);
    driver.check(ended, "cuStreamEndCapture (a launch could not be recorded)");
    CUgraphExec exec = nullptr;
    const CUresult made = driver.cuGraphInstantiate(&exec, graph, 0);
    driver.cuGraphDestroy(graph);
    driver.check(made, "cuGraphInstantiate");
    *out_recording = new yirage_backend_recording_s{instance, device, replay_on, exec};
  });
}

yirage_status recording_replay(yirage_backend_recording *recording, yirage_backend_error *error) {
  return protect(error, [&] {
    require(recording, "recording");
    const Driver &driver = enter(recording->instance, recording->device);
    driver.check(driver.cuGraphLaunch(recording->exec, recording->stream), "cuGraphLaunch");
  });
}

void recording_release(yirage_backend_recording *recording) {
  if (recording == nullptr) return;
  const Driver &driver = *recording->instance->driver;
  driver.cuCtxSetCurrent(recording->instance->devices[static_cast<size_t>(recording->device)].context);
  driver.cuGraphExecDestroy(recording->exec);
  delete recording;
}

yirage_status synchronize(yirage_backend_instance *instance, int32_t device, void *stream,
                          yirage_backend_error *error) {
  return protect(error, [&] {
    const Driver &driver = enter(instance, device);
    if (stream == nullptr) {
      driver.check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
    } else {
      driver.check(driver.cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
    }
    instance->watches.check(static_cast<CUstream>(stream), stream == nullptr);
  });
}

yirage_status timer_create(yirage_backend_instance *instance, int32_t device, yirage_backend_timer **out,
                           yirage_backend_error *error) {
  return protect(error, [&] {
    require(out, "out_timer");
    const Driver &driver = enter(instance, device);
    auto timer = std::make_unique<yirage_backend_timer_s>();
    timer->instance = instance;
    timer->device = device;
    driver.check(driver.cuEventCreate(&timer->event, CU_EVENT_DEFAULT), "cuEventCreate");
    *out = timer.release();
  });
}

void timer_release(yirage_backend_timer *timer) {
  if (timer == nullptr) return;
  timer->instance->driver->cuEventDestroy(timer->event);
  delete timer;
}

yirage_status timer_record(yirage_backend_timer *timer, void *stream, yirage_backend_error *error) {
  return protect(error, [&] {
    require(timer, "timer");
    const Driver &driver = enter(timer->instance, timer->device);
    driver.check(driver.cuEventRecord(timer->event, static_cast<CUstream>(stream)), "cuEventRecord");
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
    const Driver &driver = enter(stop->instance, stop->device);
    driver.check(driver.cuEventSynchronize(stop->event), "cuEventSynchronize");
    float ms = 0;
    driver.check(driver.cuEventElapsedTime(&ms, start->event, stop->event), "cuEventElapsedTime");
    *out_seconds = ms * 1e-3;
  });
}

const yirage_backend_api kApi = {
    sizeof(yirage_backend_api),
    YIRAGE_BACKEND_ABI_MAJOR,
    YIRAGE_BACKEND_ABI_MINOR,
    "cuda",
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
    recording_begin,
    recording_end,
    recording_replay,
    recording_release,
};

}  // namespace

extern "C" YIRAGE_BACKEND_EXPORT const yirage_backend_api *yirage_backend_entry(uint32_t, uint32_t) {
  return &kApi;
}
