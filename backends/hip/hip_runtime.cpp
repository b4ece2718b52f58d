// The Runtime of AMD GPUs: the HIP runtime and hiprtc (hip_api.hpp).
#include <dlpack/dlpack.h>

#include "hip_api.hpp"
#include "runtime.hpp"

namespace yirage::hip {
namespace {

class HipRuntime final : public Runtime {
 public:
  explicit HipRuntime(const Api &api) : api_(api) {}

  const char *platform() const override { return "hip"; }
  int dlpack_device_type() const override { return kDLROCM; }

  std::vector<RuntimeDevice> devices(std::string &why) override {
    std::vector<RuntimeDevice> out;
    int count = 0;
    // hipGetDeviceCount initializes the runtime (hipInit's own code says less: hipErrorInvalidDevice
    // where there is no GPU).
    const hipError_t result = api_.hipGetDeviceCount(&count);
    if (result != hipSuccess || count == 0) {
      why = result != hipSuccess ? "hip: no device: " + api_.error_text(result) + "; runtime " + api_.library
                                 : "hip: the HIP runtime " + api_.library + " reports no devices";
      return out;
    }
    for (int i = 0; i < count; ++i) {
      hipDeviceProp_t p{};
      api_.check(api_.hipGetDeviceProperties(&p, i), "hipGetDeviceProperties");
      RuntimeDevice d;
      d.name = p.name;
      d.arch = p.gcnArchName;
      d.compute_units = p.multiProcessorCount;
      d.max_threads_per_block = p.maxThreadsPerBlock;
      d.threads_per_compute_unit = p.maxThreadsPerMultiProcessor;
      d.lds_per_block = static_cast<int64_t>(p.sharedMemPerBlock);
      d.lds_per_compute_unit = static_cast<int64_t>(p.maxSharedMemoryPerMultiProcessor);
      d.wavefront = p.warpSize;
      d.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
      d.l2_bytes = p.l2CacheSize;
      d.clock_khz = p.clockRate;
      d.memory_clock_khz = p.memoryClockRate;
      d.memory_bus_bits = p.memoryBusWidth;
      out.push_back(d);
    }
    return out;
  }

  void enter(int device) override { api_.check(api_.hipSetDevice(device), "hipSetDevice"); }

  uint64_t allocate(size_t bytes) override {
    void *pointer = nullptr;
    api_.check(api_.hipMalloc(&pointer, bytes), "hipMalloc of " + std::to_string(bytes) + " bytes");
    return reinterpret_cast<uint64_t>(pointer);
  }
  void release(uint64_t pointer) noexcept override {
    static_cast<void>(api_.hipFree(reinterpret_cast<void *>(pointer)));
  }
  void copy_to_device(uint64_t destination, const void *source, size_t bytes) override {
    api_.check(api_.hipMemcpyHtoD(reinterpret_cast<hipDeviceptr_t>(destination), const_cast<void *>(source), bytes),
               "hipMemcpyHtoD");
  }
  void copy_to_host(void *destination, uint64_t source, size_t bytes) override {
    api_.check(api_.hipMemcpyDtoH(destination, reinterpret_cast<hipDeviceptr_t>(source), bytes), "hipMemcpyDtoH");
  }

  std::string compiler_identity() const override {
    return "hiprtc " + std::to_string(api_.hiprtc_major) + "." + std::to_string(api_.hiprtc_minor) + " " +
           api_.hiprtc_library;
  }
  std::string compile(const std::string &source, const std::string &arch) const override {
    return api_.compile(source, arch);
  }
  void *load_module(const std::string &code) override {
    hipModule_t module = nullptr;
    api_.check(api_.hipModuleLoadData(&module, code.data()), "hipModuleLoadData");
    return module;
  }
  void unload_module(void *module) noexcept override {
    static_cast<void>(api_.hipModuleUnload(static_cast<hipModule_t>(module)));
  }
  void *function(void *module, const char *name, int64_t) override {
    hipFunction_t function = nullptr;
    api_.check(api_.hipModuleGetFunction(&function, static_cast<hipModule_t>(module), name), "hipModuleGetFunction");
    return function;
  }
  void launch(void *function, const std::array<int64_t, 3> &grid, int64_t threads, int64_t shared_bytes, void *stream,
              void **args) override {
    api_.check(api_.hipModuleLaunchKernel(static_cast<hipFunction_t>(function), static_cast<unsigned>(grid[0]),
                                          static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
                                          static_cast<unsigned>(threads), 1, 1, static_cast<unsigned>(shared_bytes),
                                          static_cast<hipStream_t>(stream), args, nullptr),
               "hipModuleLaunchKernel");
  }
  void synchronize(void *stream) override {
    if (stream == nullptr) {
      api_.check(api_.hipDeviceSynchronize(), "hipDeviceSynchronize");
    } else {
      api_.check(api_.hipStreamSynchronize(static_cast<hipStream_t>(stream)), "hipStreamSynchronize");
    }
  }
  void *event_create() override {
    hipEvent_t event = nullptr;
    api_.check(api_.hipEventCreate(&event), "hipEventCreate");
    return event;
  }
  void event_destroy(void *event) noexcept override {
    static_cast<void>(api_.hipEventDestroy(static_cast<hipEvent_t>(event)));
  }
  void event_record(void *event, void *stream) override {
    api_.check(api_.hipEventRecord(static_cast<hipEvent_t>(event), static_cast<hipStream_t>(stream)), "hipEventRecord");
  }
  double event_seconds(void *start, void *stop) override {
    api_.check(api_.hipEventSynchronize(static_cast<hipEvent_t>(stop)), "hipEventSynchronize");
    float ms = 0;
    api_.check(api_.hipEventElapsedTime(&ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(stop)),
               "hipEventElapsedTime");
    return ms * 1e-3;
  }

 private:
  const Api &api_;
};

}  // namespace

std::unique_ptr<Runtime> hip_runtime(std::string &why) {
  const Api *api = Api::load(why);
  if (api == nullptr) return nullptr;
  return std::make_unique<HipRuntime>(*api);
}

}  // namespace yirage::hip
