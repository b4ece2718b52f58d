#include "driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace yirage::cuda {

const Driver *Driver::load(std::string &why) {
  static Driver driver;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char *e = dlerror();
      failure = std::string("cuda: no driver: ") + (e ? e : "libcuda.so.1 cannot be opened");
      return;
    }
#define YIRAGE_RESOLVE(name, symbol)                                            \
  driver.name = reinterpret_cast<decltype(driver.name)>(dlsym(handle, symbol)); \
  if (driver.name == nullptr && failure.empty()) failure = "cuda: the driver lacks " symbol;
    YIRAGE_CUDA_DRIVER_FUNCTIONS(YIRAGE_RESOLVE)
#undef YIRAGE_RESOLVE
    void *elapsed = dlsym(handle, "cuEventElapsedTime_v2");
    if (elapsed == nullptr) elapsed = dlsym(handle, "cuEventElapsedTime");
    driver.cuEventElapsedTime = reinterpret_cast<decltype(driver.cuEventElapsedTime)>(elapsed);
    if (elapsed == nullptr && failure.empty()) failure = "cuda: the driver lacks cuEventElapsedTime";
    driver.cuLaunchKernelEx = reinterpret_cast<decltype(driver.cuLaunchKernelEx)>(dlsym(handle, "cuLaunchKernelEx"));
  });
  why = failure;
  return failure.empty() ? &driver : nullptr;
}

void Driver::check(CUresult result, const std::string &what) const {
  if (result == CUDA_SUCCESS) return;
  const char *name = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  const ErrorCode code = result == CUDA_ERROR_OUT_OF_MEMORY ? ErrorCode::kOutOfMemory : ErrorCode::kBackend;
  throw NativeError(code, "cuda: " + what + ": " + (name ? name : "CUresult " + std::to_string(result)),
                    static_cast<int64_t>(result));
}

const Nvrtc &Nvrtc::load() {
  static Nvrtc nvrtc;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char *explicit_path = std::getenv("YIRAGE_NVRTC")) candidates.push_back(explicit_path);
    for (const char *name : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}) candidates.push_back(name);
    if (const char *home = std::getenv("CUDA_HOME")) candidates.push_back(std::string(home) + "/lib64/libnvrtc.so");
    candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so");
    void *handle = nullptr;
    std::string tried;
    for (const std::string &c : candidates) {
      handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) {
        nvrtc.library = c;
        break;
      }
      tried += "\n  " + c;
    }
    if (handle == nullptr) {
      failure = "cuda: NVRTC not found; tried:" + tried + "\n(set YIRAGE_NVRTC to libnvrtc.so)";
      return;
    }
#define YIRAGE_RESOLVE(name)                                                 \
  nvrtc.name = reinterpret_cast<decltype(nvrtc.name)>(dlsym(handle, #name)); \
  if (nvrtc.name == nullptr && failure.empty()) failure = "cuda: " + nvrtc.library + " lacks " #name;
    YIRAGE_NVRTC_FUNCTIONS(YIRAGE_RESOLVE)
#undef YIRAGE_RESOLVE
    if (failure.empty()) nvrtc.nvrtcVersion(&nvrtc.major, &nvrtc.minor);
  });
  if (!failure.empty()) throw Error(ErrorCode::kNotFound, failure);
  return nvrtc;
}

std::string Nvrtc::compile(const std::string &source, const std::string &arch) const {
  nvrtcProgram program = nullptr;
  nvrtcResult r = nvrtcCreateProgram(&program, source.c_str(), "yirage_kernel.cu", 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) {
    throw NativeError(ErrorCode::kBackend, std::string("cuda: nvrtcCreateProgram: ") + nvrtcGetErrorString(r), r);
  }
  const std::string arch_flag = "--gpu-architecture=" + arch;
  const char *options[] = {arch_flag.c_str(), "--std=c++17", "--fmad=true", "-default-device"};
  r = nvrtcCompileProgram(program, 4, options);
  size_t log_size = 0;
  std::string log;
  if (nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    log.resize(log_size);
    nvrtcGetProgramLog(program, log.data());
    log.resize(log_size - 1);
  }
  std::string cubin;
  if (r == NVRTC_SUCCESS) {
    size_t size = 0;
    r = nvrtcGetCUBINSize(program, &size);
    if (r == NVRTC_SUCCESS) {
      cubin.resize(size);
      r = nvrtcGetCUBIN(program, cubin.data());
    }
  }
  nvrtcDestroyProgram(&program);
  if (r != NVRTC_SUCCESS) {
    throw NativeError(ErrorCode::kBackend,
                      "cuda: NVRTC " + std::to_string(major) + "." + std::to_string(minor) +
                          " could not compile the kernel for " + arch + ": " + nvrtcGetErrorString(r) + "\n" + log,
                      r);
  }
  return cubin;
}

}  // namespace yirage::cuda
