// What the HIP plugin needs of a GPU runtime, in one interface with two implementations: the HIP
// runtime and hiprtc (AMD GPUs; hip_runtime.cpp), and the CUDA backend's driver API and NVRTC
// (cuda_runtime.cpp), a test mode that runs the plugin's HIP source on an NVIDIA GPU so that its
// numerics are checked on real hardware (YIRAGE_HIP_PLATFORM=cuda, docs/backends/hip.md).
// Failures throw backend::NativeError with the runtime's own code.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace yirage::hip {

struct RuntimeDevice {
  std::string name;  // the driver's
  std::string arch;  // what the compiler is given: the gcnArchName ("gfx90a:sramecc+:xnack-"), or "sm_90"
  int64_t compute_units = 0, max_threads_per_block = 0, threads_per_compute_unit = 0;
  int64_t lds_per_block = 0, lds_per_compute_unit = 0;  // bytes
  int wavefront = 0;
  int64_t memory_bytes = 0, l2_bytes = 0;
  int64_t clock_khz = 0, memory_clock_khz = 0, memory_bus_bits = 0;
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  // "hip", or "cuda" for the test mode on NVIDIA.
  virtual const char *platform() const = 0;
  // DLPack's device type of the memory it allocates: kDLROCM, or kDLCUDA.
  virtual int dlpack_device_type() const = 0;
  // Every device, each made usable; empty with `why` set where there is none.
  virtual std::vector<RuntimeDevice> devices(std::string &why) = 0;
  // Makes `device` current on this thread.
  virtual void enter(int device) = 0;
  virtual uint64_t allocate(size_t bytes) = 0;
  virtual void release(uint64_t pointer) noexcept = 0;
  virtual void copy_to_device(uint64_t destination, const void *source, size_t bytes) = 0;
  virtual void copy_to_host(void *destination, uint64_t source, size_t bytes) = 0;
  // What a cache key must hold of the compiler (its name and version).
  virtual std::string compiler_identity() const = 0;
  // The source → a code object for `arch`; NativeError(kBackend) with the compiler's log.
  virtual std::string compile(const std::string &source, const std::string &arch) const = 0;
  virtual void *load_module(const std::string &code) = 0;
  virtual void unload_module(void *module) noexcept = 0;
  // The kernel `name` of `module`, able to take `shared_bytes` of dynamic shared memory.
  virtual void *function(void *module, const char *name, int64_t shared_bytes) = 0;
  virtual void launch(void *function, const std::array<int64_t, 3> &grid, int64_t threads, int64_t shared_bytes,
                      void *stream, void **args) = 0;
  // Waits for `stream` (NULL: the whole device).
  virtual void synchronize(void *stream) = 0;
  virtual void *event_create() = 0;
  virtual void event_destroy(void *event) noexcept = 0;
  virtual void event_record(void *event, void *stream) = 0;
  // Seconds between two recorded events, after waiting for `stop`.
  virtual double event_seconds(void *start, void *stop) = 0;
};

// The processor name of a gcnArchName: "gfx90a" of "gfx90a:sramecc+:xnack-".
inline std::string processor_of(const std::string &arch) {
  return arch.substr(0, arch.find(':'));
}

// The HIP runtime (hip_api.hpp); nullptr with `why` where it cannot be opened.
std::unique_ptr<Runtime> hip_runtime(std::string &why);
// The CUDA driver API and NVRTC (the CUDA backend's driver.cpp), presenting each NVIDIA GPU as an
// AMD GPU of 32-lane wavefronts and 64 KiB of LDS; nullptr with `why` where it cannot be opened
// or the plugin was built without the CUDA headers.
std::unique_ptr<Runtime> cuda_runtime(std::string &why);

}  // namespace yirage::hip
