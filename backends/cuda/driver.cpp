#include "driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <vector>

namespace yirage::cuda {

namespace {

// The CUDA graph entries, all or none (Driver::graphs).
void resolve_graphs(void *handle, Driver &driver) {
  Driver found;
  bool all = true;
  auto resolve = [&](auto &entry, const char *symbol) {
    entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(dlsym(handle, symbol));
    all = all && entry != nullptr;
  };
  resolve(found.cuStreamCreate, "cuStreamCreate");
  resolve(found.cuStreamDestroy, "cuStreamDestroy_v2");
  resolve(found.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  resolve(found.cuStreamEndCapture, "cuStreamEndCapture");
  resolve(found.cuGraphInstantiate, "cuGraphInstantiateWithFlags");
  resolve(found.cuGraphDestroy, "cuGraphDestroy");
  resolve(found.cuGraphLaunch, "cuGraphLaunch");
  resolve(found.cuGraphExecDestroy, "cuGraphExecDestroy");
  if (!all) return;
  driver.cuStreamCreate = found.cuStreamCreate;
  driver.cuStreamDestroy = found.cuStreamDestroy;
  driver.cuStreamBeginCapture = found.cuStreamBeginCapture;
  driver.cuStreamEndCapture = found.cuStreamEndCapture;
  driver.cuGraphInstantiate = found.cuGraphInstantiate;
  driver.cuGraphDestroy = found.cuGraphDestroy;
  driver.cuGraphLaunch = found.cuGraphLaunch;
  driver.cuGraphExecDestroy = found.cuGraphExecDestroy;
}

}  // namespace

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
    resolve_graphs(handle, driver);
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

namespace {

// Opens the first of: $<variable>, lib<name>.so[.13/.12] from the library path, then
// $CUDA_HOME/lib64 and /usr/local/cuda/lib64. Returns the handle and sets `opened`, or returns
// nullptr with `failure` listing what was tried.
void *open_toolkit_library(const char *variable, const std::string &name, std::string &opened, std::string &failure) {
  std::vector<std::string> candidates;
  if (const char *explicit_path = std::getenv(variable)) candidates.push_back(explicit_path);
  const std::string file = "lib" + name + ".so";
  for (const char *suffix : {"", ".13", ".12"}) candidates.push_back(file + suffix);
  if (const char *home = std::getenv("CUDA_HOME")) candidates.push_back(std::string(home) + "/lib64/" + file);
  candidates.push_back("/usr/local/cuda/lib64/" + file);
  std::string tried;
  for (const std::string &c : candidates) {
    if (void *handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      opened = c;
      return handle;
    }
    tried += "\n  " + c;
  }
  failure = "cuda: " + name + " not found; tried:" + tried + "\n(set " + variable + " to " + file + ")";
  return nullptr;
}

}  // namespace

const Nvrtc &Nvrtc::load() {
  static Nvrtc nvrtc;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    void *handle = open_toolkit_library("YIRAGE_NVRTC", "nvrtc", nvrtc.library, failure);
    if (handle == nullptr) return;
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

const CublasLt *CublasLt::load(std::string &why) {
  static CublasLt lt;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *use = std::getenv("YIRAGE_CUDA_CUBLAS");
    if (use != nullptr && std::string(use) == "0") {
      failure = "cuda: cuBLASLt is turned off (YIRAGE_CUDA_CUBLAS=0)";
      return;
    }
    void *handle = open_toolkit_library("YIRAGE_CUBLASLT", "cublasLt", lt.library, failure);
    if (handle == nullptr) return;
#define YIRAGE_RESOLVE(name)                                           \
  lt.name = reinterpret_cast<decltype(lt.name)>(dlsym(handle, #name)); \
  if (lt.name == nullptr && failure.empty()) failure = "cuda: " + lt.library + " lacks " #name;
    YIRAGE_CUBLASLT_FUNCTIONS(YIRAGE_RESOLVE)
#undef YIRAGE_RESOLVE
  });
  why = failure;
  return failure.empty() ? &lt : nullptr;
}

void CublasLt::check(cublasStatus_t status, const std::string &what) const {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const char *text = cublasLtGetStatusString ? cublasLtGetStatusString(status) : nullptr;
  throw NativeError(status == CUBLAS_STATUS_ALLOC_FAILED ? ErrorCode::kOutOfMemory : ErrorCode::kBackend,
                    "cuda: " + what + ": " + (text ? text : "cublasStatus_t " + std::to_string(status)),
                    static_cast<int64_t>(status));
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
