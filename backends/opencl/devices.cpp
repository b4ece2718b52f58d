#include "devices.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "target/target.hpp"
#include "target/target_abi.hpp"
#include "target_name.hpp"

namespace yirage::opencl {
namespace {

// Opening and closing devices is serialized in the process: PoCL 3.1 crashed in
// clGetDeviceInfo(CL_DRIVER_VERSION) while another thread's instance created or released its
// context (five Rust tests creating contexts at once, nearly every run).
std::mutex &devices_lock() {
  static std::mutex lock;
  return lock;
}

// cl_nv_device_attribute_query (not in the Khronos headers Debian ships).
constexpr cl_device_info kComputeCapabilityMajorNv = 0x4000;
constexpr cl_device_info kComputeCapabilityMinorNv = 0x4001;
constexpr cl_device_info kWarpSizeNv = 0x4003;

std::string device_string(const Api &api, cl_device_id device, cl_device_info which) {
  size_t size = 0;
  api.check(api.clGetDeviceInfo(device, which, 0, nullptr, &size), "clGetDeviceInfo");
  std::string text(size, '\0');
  api.check(api.clGetDeviceInfo(device, which, size, text.data(), nullptr), "clGetDeviceInfo");
  return text.c_str();  // without the NUL
}

template <class T>
T device_value(const Api &api, cl_device_id device, cl_device_info which) {
  T value{};
  api.check(api.clGetDeviceInfo(device, which, sizeof value, &value, nullptr), "clGetDeviceInfo");
  return value;
}

bool has_extension(const std::string &extensions, const std::string &name) {
  size_t at = 0;
  while ((at = extensions.find(name, at)) != std::string::npos) {
    const size_t end = at + name.size();
    if ((at == 0 || extensions[at - 1] == ' ') && (end == extensions.size() || extensions[end] == ' ')) return true;
    at = end;
  }
  return false;
}

// The figures OpenCL does not report: a CPU device is this host (its measured description); an
// NVIDIA GPU is its compute capability's built-in description without the tensor cores (OpenCL C
// reaches only the FMA units); other GPUs are estimated from their compute units and clock.
void fill_figures(const Api &api, Device &d, bool cpu, yirage_target_properties &t) {
  const double units = static_cast<double>(t.compute_units);
  if (cpu) {
    const targets::TargetProperties &host = targets::host_cpu_target();
    t.memory_bandwidth = host.memory_bandwidth;
    t.l2_bytes = host.l2_bytes;
    t.l2_bandwidth = host.l2_bandwidth;
    t.peak_flops_float32 = t.vector_flops_float32 = host.vector_flops_float32;
    t.warp_width = host.warp_width;    // PoCL runs a work-group's items in SIMD lanes
    t.launch_overhead_seconds = 2e-5;  // an enqueue through the ICD and PoCL's scheduler
    return;
  }
  t.warp_width = 32;
  t.launch_overhead_seconds = 5e-6;
  t.loop_iteration_seconds = 1e-6;
  cl_uint major = 0, minor = 0;
  if (has_extension(d.extensions, "cl_nv_device_attribute_query") &&
      api.clGetDeviceInfo(d.id, kComputeCapabilityMajorNv, sizeof major, &major, nullptr) == CL_SUCCESS &&
      api.clGetDeviceInfo(d.id, kComputeCapabilityMinorNv, sizeof minor, &minor, nullptr) == CL_SUCCESS) {
    cl_uint warp = 32;
    if (api.clGetDeviceInfo(d.id, kWarpSizeNv, sizeof warp, &warp, nullptr) == CL_SUCCESS) t.warp_width = warp;
    if (auto chip = targets::builtin_cuda_target(static_cast<int>(major * 10 + minor), t.memory_bytes)) {
      const double scale = units / static_cast<double>(chip->compute_units);
      t.memory_bandwidth = chip->memory_bandwidth;
      t.l2_bandwidth = chip->l2_bandwidth;
      t.peak_flops_float32 = t.vector_flops_float32 = chip->vector_flops_float32 * scale;
      t.threads_per_compute_unit = chip->threads_per_compute_unit;
      t.max_blocks_per_compute_unit = chip->max_blocks_per_compute_unit;
      return;
    }
  }
  // 64 lanes per compute unit, an FMA (2 FLOP) per lane and cycle; 10 GB/s per compute unit.
  const double clock = std::max<double>(1, device_value<cl_uint>(api, d.id, CL_DEVICE_MAX_CLOCK_FREQUENCY)) * 1e6;
  t.peak_flops_float32 = t.vector_flops_float32 = std::max(1e9, 128.0 * clock * units);
  t.memory_bandwidth = std::clamp(1e10 * units, 1e9, 1e13);
  t.l2_bandwidth = 3 * t.memory_bandwidth;
}

void describe(const Api &api, Device &d, int32_t index) {
  d.device_name = device_string(api, d.id, CL_DEVICE_NAME);
  d.driver_version = device_string(api, d.id, CL_DRIVER_VERSION);
  d.extensions = device_string(api, d.id, CL_DEVICE_EXTENSIONS);
  d.fp16 = has_extension(d.extensions, "cl_khr_fp16");
  d.subgroups = has_extension(d.extensions, "cl_khr_subgroups") || has_extension(d.extensions, "cl_intel_subgroups");
  d.intel_subgroup_matrix = has_extension(d.extensions, "cl_intel_subgroup_matrix_multiply_accumulate");
  const bool cpu = (device_value<cl_device_type>(api, d.id, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
  d.max_alloc_bytes = static_cast<int64_t>(device_value<cl_ulong>(api, d.id, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
  size_t item_sizes[3] = {0, 0, 0};
  api.check(api.clGetDeviceInfo(d.id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof item_sizes, item_sizes, nullptr),
            "clGetDeviceInfo");
  const int64_t max_group = static_cast<int64_t>(
      std::min(device_value<size_t>(api, d.id, CL_DEVICE_MAX_WORK_GROUP_SIZE), std::max<size_t>(1, item_sizes[0])));
  const int64_t local = static_cast<int64_t>(device_value<cl_ulong>(api, d.id, CL_DEVICE_LOCAL_MEM_SIZE));

  yirage_backend_device_info &info = d.info;
  info.struct_size = sizeof info;
  const std::string name = d.device_name.substr(0, 80) + " (" + d.platform_name.substr(0, 30) + ", OpenCL)";
  std::snprintf(info.name, sizeof info.name, "%s", name.c_str());
  yirage_target_properties &t = info.target;
  t.struct_size = sizeof t;
  std::snprintf(t.name, sizeof t.name, "%s", backend::target_name("opencl-", d.device_name).c_str());
  t.kind = cpu ? YIRAGE_TARGET_CPU : YIRAGE_TARGET_GPU;
  t.compute_units = std::max<cl_uint>(1, device_value<cl_uint>(api, d.id, CL_DEVICE_MAX_COMPUTE_UNITS));
  t.max_threads_per_block = max_group;
  t.max_blocks_per_compute_unit = cpu ? 1 : 16;
  t.threads_per_compute_unit = max_group;
  t.shared_memory_per_block = local;
  t.shared_memory_per_compute_unit = local;
  t.memory_bytes = static_cast<int64_t>(device_value<cl_ulong>(api, d.id, CL_DEVICE_GLOBAL_MEM_SIZE));
  t.l2_bytes = static_cast<int64_t>(device_value<cl_ulong>(api, d.id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE));
  fill_figures(api, d, cpu, t);
  // Every dtype is stored as itself and computed in float32 (FMA units, no matrix units).
  t.peak_flops_float16 = t.peak_flops_bfloat16 = t.peak_flops_float32;
  info.dtypes = (1u << YIRAGE_FLOAT16) | (1u << YIRAGE_BFLOAT16) | (1u << YIRAGE_FLOAT32);
  info.dlpack_device_type = kDLOpenCL;
  info.dlpack_device_id = index;

  d.target.max_local_bytes = local;
  d.target.max_work_group = max_group;
  d.target.compute_units = t.compute_units;
  d.target.cpu = cpu;
}

// Releases the device's queue and context (the caller holds devices_lock).
void release(const Api &api, Device &d) {
  if (d.queue != nullptr) api.clReleaseCommandQueue(d.queue);
  if (d.context != nullptr) api.clReleaseContext(d.context);
  d.queue = nullptr;
  d.context = nullptr;
}

}  // namespace

std::vector<Device> open_devices(const Api &api, std::string &reason, std::vector<std::string> &skipped) {
  const std::lock_guard<std::mutex> lock(devices_lock());
  std::vector<Device> devices;
  cl_uint platforms = 0;
  const cl_int listed = api.clGetPlatformIDs(0, nullptr, &platforms);
  if (listed != CL_SUCCESS || platforms == 0) {
    reason = "opencl: no platform (clGetPlatformIDs: " + (listed != CL_SUCCESS ? error_name(listed) : "none") +
             "; is an ICD such as pocl-opencl-icd installed?)";
    return devices;
  }
  std::vector<cl_platform_id> ids(platforms);
  api.check(api.clGetPlatformIDs(platforms, ids.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id platform : ids) {
    char name[256] = {0};
    if (api.clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr) != CL_SUCCESS) continue;
    cl_uint count = 0;
    if (api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
    std::vector<cl_device_id> found(count);
    if (api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, found.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id id : found) {
      if (devices.size() >= kMaxDevices) break;
      Device d;
      d.id = id;
      d.platform_name = name;
      try {
        describe(api, d, static_cast<int32_t>(devices.size()));
        const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                                    reinterpret_cast<cl_context_properties>(platform), 0};
        cl_int status = CL_SUCCESS;
        d.context = api.clCreateContext(properties, 1, &id, nullptr, nullptr, &status);
        api.check(status, "clCreateContext");
        d.queue = api.clCreateCommandQueue(d.context, id, CL_QUEUE_PROFILING_ENABLE, &status);
        api.check(status, "clCreateCommandQueue");
        devices.push_back(std::move(d));
      } catch (const Error &e) {
        release(api, d);
        skipped.push_back(std::string(name) + " / " + d.device_name + ": " + e.what());
      }
    }
  }
  if (devices.empty()) {
    reason = "opencl: no usable device on " + std::to_string(platforms) + " platform(s)";
    for (const std::string &s : skipped) reason += "; " + s;
  }
  return devices;
}

void close_device(const Api &api, Device &d) {
  const std::lock_guard<std::mutex> lock(devices_lock());
  release(api, d);
}

}  // namespace yirage::opencl
