#include "programs.hpp"

#include <cstdlib>
#include <vector>

#include "util/file_cache.hpp"

namespace yirage::opencl {
namespace {

// OpenCL C 1.2 as written; no fast-math flags (results are checked against float64). Users may
// add options of their own (YIRAGE_OPENCL_BUILD_OPTIONS, e.g. "-cl-opt-disable" for quick builds).
std::string build_options() {
  const char *extra = std::getenv("YIRAGE_OPENCL_BUILD_OPTIONS");
  return std::string("-cl-std=CL1.2") + (extra != nullptr && *extra != '\0' ? std::string(" ") + extra : "");
}

// Longest build log kept in an error (the error channel holds 4 KiB).
constexpr size_t kMaxLogBytes = 3000;

std::string build_log(const Api &api, cl_program program, cl_device_id device) {
  size_t size = 0;
  if (api.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return "";
  std::string text(size, '\0');
  if (api.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, text.data(), nullptr) != CL_SUCCESS) {
    return "";
  }
  text = text.c_str();
  if (text.size() > kMaxLogBytes) text = text.substr(0, kMaxLogBytes) + "\n[build log truncated]";
  return text;
}

// Builds `program` for the device; on failure releases it and throws with the build log.
void build(const Api &api, cl_program program, const Device &device) {
  const cl_int built = api.clBuildProgram(program, 1, &device.id, build_options().c_str(), nullptr, nullptr);
  if (built == CL_SUCCESS) return;
  const std::string log = build_log(api, program, device.id);
  api.clReleaseProgram(program);
  throw backend::NativeError(ErrorCode::kBackend,
                             "opencl: clBuildProgram: " + error_name(built) + (log.empty() ? "" : ":\n" + log), built);
}

cl_program from_binary(const Api &api, const Device &device, const std::string &binary) {
  const unsigned char *bytes = reinterpret_cast<const unsigned char *>(binary.data());
  const size_t size = binary.size();
  cl_int binary_status = CL_SUCCESS, status = CL_SUCCESS;
  cl_program program =
      api.clCreateProgramWithBinary(device.context, 1, &device.id, &size, &bytes, &binary_status, &status);
  if (status != CL_SUCCESS || binary_status != CL_SUCCESS) {
    if (program != nullptr) api.clReleaseProgram(program);
    return nullptr;
  }
  if (api.clBuildProgram(program, 1, &device.id, build_options().c_str(), nullptr, nullptr) != CL_SUCCESS) {
    api.clReleaseProgram(program);
    return nullptr;
  }
  return program;
}

std::string binary_of(const Api &api, cl_program program) {
  size_t size = 0;
  api.check(api.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
            "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
  std::string binary(size, '\0');
  unsigned char *at = reinterpret_cast<unsigned char *>(binary.data());
  api.check(api.clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof at, &at, nullptr),
            "clGetProgramInfo(CL_PROGRAM_BINARIES)");
  return binary;
}

// PoCL keeps the machine code it makes in a disk cache of its own (POCL_CACHE_DIR), keyed by the
// source, unless POCL_KERNEL_CACHE=0; asking it for a program binary makes it compile a generic
// work-group function of every kernel besides the one it makes per launch size (for a fused kernel
// 1.7 s of the 3.5 s a first build costs on a CPU). Where its cache keeps builds, ours keeps the
// source alone.
bool driver_keeps_builds(const Device &device) {
  if (device.platform_name.find("Portable Computing Language") == std::string::npos) return false;
  const char *cache = std::getenv("POCL_KERNEL_CACHE");
  return cache == nullptr || std::string(cache) != "0";
}

}  // namespace

BuiltKernel build_kernel(const Api &api, const Device &device, const std::string &source, const char *symbol,
                         const std::string &cache_dir, const BuildLog &log) {
  const std::string key = util::hash_hex(source + '\0' + build_options() + '\0' + device.platform_name + '\0' +
                                         device.device_name + '\0' + device.driver_version);
  const std::string path = cache_dir + "/" + key + ".clbin";
  BuiltKernel built;
  std::string why;
  if (auto cached = util::read_cached(path, &why)) {
    built.program = from_binary(api, device, *cached);
    if (built.program == nullptr) why = "the driver refused the cached binary";
  }
  if (!why.empty()) log(BuildWarning::kRebuilt, "opencl: rebuilding " + path + ": " + why);
  if (built.program == nullptr) {
    const char *text = source.c_str();
    const size_t length = source.size();
    cl_int status = CL_SUCCESS;
    built.program = api.clCreateProgramWithSource(device.context, 1, &text, &length, &status);
    api.check(status, "clCreateProgramWithSource");
    build(api, built.program, device);
    try {
      const std::string binary = driver_keeps_builds(device) ? "" : binary_of(api, built.program);
      util::store_cached(cache_dir + "/" + key + ".cl", source);
      if (!binary.empty()) util::store_cached(path, binary);
    } catch (const Error &e) {
      log(BuildWarning::kCacheUnwritable, "opencl: the kernel cache " + cache_dir + " cannot be written (" + e.what() +
                                              "): kernels are built and used without being kept");
    }
  }
  cl_int status = CL_SUCCESS;
  built.kernel = api.clCreateKernel(built.program, symbol, &status);
  if (status != CL_SUCCESS) {
    release_kernel(api, built);
    api.check(status, std::string("clCreateKernel(") + symbol + ")");
  }
  const cl_int queried = api.clGetKernelWorkGroupInfo(built.kernel, device.id, CL_KERNEL_WORK_GROUP_SIZE,
                                                      sizeof built.work_group_size, &built.work_group_size, nullptr);
  if (queried != CL_SUCCESS) {
    release_kernel(api, built);
    api.check(queried, "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
  }
  return built;
}

void release_kernel(const Api &api, BuiltKernel &built) {
  if (built.kernel != nullptr) api.clReleaseKernel(built.kernel);
  if (built.program != nullptr) api.clReleaseProgram(built.program);
  built = BuiltKernel{};
}

}  // namespace yirage::opencl
