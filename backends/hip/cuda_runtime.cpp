// The Runtime of the test mode on NVIDIA GPUs (YIRAGE_HIP_PLATFORM=cuda): the CUDA backend's
// driver API and NVRTC (backends/cuda/driver.hpp). Each GPU is presented as an AMD GPU of 32-lane
// wavefronts and at most 64 KiB of LDS per block, so that it gets the HIP source a gfx1030 would,
// which the HIP prelude's CUDA mapping lets NVRTC compile (docs/backends/hip.md).
#include "runtime.hpp"

#if defined(YIRAGE_HIP_WITH_CUDA)

#include <dlpack/dlpack.h>

#include <algorithm>

#include "driver.hpp"
#include "util/error.hpp"

namespace yirage::hip {
namespace {

constexpr int64_t kAmdLdsBytes = 64 * 1024;
constexpr int64_t kCudaDefaultSharedBytes = 48 * 1024;  // more needs the function's attribute

class CudaRuntime final : public Runtime {
 public:
  explicit CudaRuntime(const cuda::Driver &driver) : driver_(driver) {}
  ~CudaRuntime() override {
    for (size_t i = 0; i < contexts_.size(); ++i) driver_.cuDevicePrimaryCtxRelease(handles_[i]);
  }

  const char *platform() const override { return "cuda"; }
  int dlpack_device_type() const override { return kDLCUDA; }

  std::vector<RuntimeDevice> devices(std::string &why) override {
    std::vector<RuntimeDevice> out;
    int count = 0;
    CUresult result = driver_.cuInit(0);
    if (result == CUDA_SUCCESS) result = driver_.cuDeviceGetCount(&count);
    if (result != CUDA_SUCCESS || count == 0) {
      const char *name = nullptr;
      driver_.cuGetErrorName(result, &name);
      why = result != CUDA_SUCCESS ? std::string("hip (on cuda): no device: ") + (name ? name : "CUresult")
                                   : "hip (on cuda): the CUDA driver reports no devices";
      return out;
    }
    for (int i = 0; i < count; ++i) {
      CUdevice handle = 0;
      driver_.check(driver_.cuDeviceGet(&handle, i), "cuDeviceGet");
      CUcontext context = nullptr;
      driver_.check(driver_.cuDevicePrimaryCtxRetain(&context, handle), "cuDevicePrimaryCtxRetain");
      handles_.push_back(handle);
      contexts_.push_back(context);
      char name[128] = {0};
      driver_.check(driver_.cuDeviceGetName(name, sizeof name - 1, handle), "cuDeviceGetName");
      size_t memory = 0;
      driver_.check(driver_.cuDeviceTotalMem(&memory, handle), "cuDeviceTotalMem");
      RuntimeDevice d;
      d.name = name;
      d.arch = "sm_" + std::to_string(attribute(handle, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)) +
               std::to_string(attribute(handle, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
      d.compute_units = attribute(handle, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
      d.max_threads_per_block = attribute(handle, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
      d.threads_per_compute_unit = attribute(handle, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
      d.lds_per_block =
          std::min<int64_t>(kAmdLdsBytes, attribute(handle, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
      d.lds_per_compute_unit = attribute(handle, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
      d.wavefront = 32;
      d.memory_bytes = static_cast<int64_t>(memory);
      d.l2_bytes = attribute(handle, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
      d.clock_khz = attribute(handle, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
      d.memory_clock_khz = attribute(handle, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
      d.memory_bus_bits = attribute(handle, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
      out.push_back(d);
    }
    return out;
  }

  void enter(int device) override {
    driver_.check(driver_.cuCtxSetCurrent(contexts_.at(static_cast<size_t>(device))), "cuCtxSetCurrent");
  }
  uint64_t allocate(size_t bytes) override {
    CUdeviceptr pointer = 0;
    driver_.check(driver_.cuMemAlloc(&pointer, bytes), "cuMemAlloc of " + std::to_string(bytes) + " bytes");
    return pointer;
  }
  void release(uint64_t pointer) noexcept override { driver_.cuMemFree(pointer); }
  void copy_to_device(uint64_t destination, const void *source, size_t bytes) override {
    driver_.check(driver_.cuMemcpyHtoD(destination, source, bytes), "cuMemcpyHtoD");
  }
  void copy_to_host(void *destination, uint64_t source, size_t bytes) override {
    driver_.check(driver_.cuMemcpyDtoH(destination, source, bytes), "cuMemcpyDtoH");
  }
  std::string compiler_identity() const override {
    const cuda::Nvrtc &nvrtc = cuda::Nvrtc::load();
    return "nvrtc " + std::to_string(nvrtc.major) + "." + std::to_string(nvrtc.minor);
  }
  std::string compile(const std::string &source, const std::string &arch) const override {
    return cuda::Nvrtc::load().compile(source, arch);
  }
  void *load_module(const std::string &code) override {
    CUmodule module = nullptr;
    driver_.check(driver_.cuModuleLoadData(&module, code.data()), "cuModuleLoadData");
    return module;
  }
  void unload_module(void *module) noexcept override { driver_.cuModuleUnload(static_cast<CUmodule>(module)); }
  void *function(void *module, const char *name, int64_t shared_bytes) override {
    CUfunction function = nullptr;
    driver_.check(driver_.cuModuleGetFunction(&function, static_cast<CUmodule>(module), name), "cuModuleGetFunction");
    if (shared_bytes > kCudaDefaultSharedBytes) {
      driver_.check(driver_.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                               static_cast<int>(shared_bytes)),
                    "cuFuncSetAttribute");
    }
    return function;
  }
  void launch(void *function, const std::array<int64_t, 3> &grid, int64_t threads, int64_t shared_bytes, void *stream,
              void **args) override {
    driver_.check(driver_.cuLaunchKernel(static_cast<CUfunction>(function), static_cast<unsigned>(grid[0]),
                                         static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
                                         static_cast<unsigned>(threads), 1, 1, static_cast<unsigned>(shared_bytes),
                                         static_cast<CUstream>(stream), args, nullptr),
                  "cuLaunchKernel");
  }
  void synchronize(void *stream) override {
    if (stream == nullptr) {
      driver_.check(driver_.cuCtxSynchronize(), "cuCtxSynchronize");
    } else {
      driver_.check(driver_.cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
    }
  }
  void *event_create() override {
    CUevent event = nullptr;
    driver_.check(driver_.cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
    return event;
  }
  void event_destroy(void *event) noexcept override { driver_.cuEventDestroy(static_cast<CUevent>(event)); }
  void event_record(void *event, void *stream) override {
    driver_.check(driver_.cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream)), "cuEventRecord");
  }
  double event_seconds(void *start, void *stop) override {
    driver_.check(driver_.cuEventSynchronize(static_cast<CUevent>(stop)), "cuEventSynchronize");
    float ms = 0;
    driver_.check(driver_.cuEventElapsedTime(&ms, static_cast<CUevent>(start), static_cast<CUevent>(stop)),
                  "cuEventElapsedTime");
    return ms * 1e-3;
  }

 private:
  int attribute(CUdevice device, CUdevice_attribute which) const {
    int value = 0;
    driver_.check(driver_.cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
    return value;
  }

  const cuda::Driver &driver_;
  std::vector<CUdevice> handles_;
  std::vector<CUcontext> contexts_;
};

}  // namespace

std::unique_ptr<Runtime> cuda_runtime(std::string &why) {
  const cuda::Driver *driver = cuda::Driver::load(why);
  if (driver == nullptr) {
    why = "hip (on cuda): " + why;
    return nullptr;
  }
  return std::make_unique<CudaRuntime>(*driver);
}

}  // namespace yirage::hip

#else

namespace yirage::hip {

std::unique_ptr<Runtime> cuda_runtime(std::string &why) {
  why = "hip: YIRAGE_HIP_PLATFORM=cuda: this plugin was built without the CUDA headers";
  return nullptr;
}

}  // namespace yirage::hip

#endif
