#include "hip_api.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

namespace yirage::hip {
namespace {

// The code object manager's ISA list (amd_comgr.h; declared here, its header is not needed).
using IsaCount = int (*)(size_t *);
using IsaName = int (*)(size_t, const char **);

void list_architectures(std::vector<std::string> &out, std::string &why, void *runtime) {
  auto count = reinterpret_cast<IsaCount>(dlsym(runtime, "amd_comgr_get_isa_count"));
  auto name = reinterpret_cast<IsaName>(dlsym(runtime, "amd_comgr_get_isa_name"));
  if (count == nullptr || name == nullptr) {
    void *comgr = nullptr;
    for (const char *file : {"libamd_comgr.so.2", "libamd_comgr.so"}) {
      if ((comgr = dlopen(file, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    }
    if (comgr == nullptr) {
      why = "the code object manager libamd_comgr.so.2 cannot be opened (Debian: libamd-comgr2)";
      return;
    }
    count = reinterpret_cast<IsaCount>(dlsym(comgr, "amd_comgr_get_isa_count"));
    name = reinterpret_cast<IsaName>(dlsym(comgr, "amd_comgr_get_isa_name"));
    if (count == nullptr || name == nullptr) {
      why = "libamd_comgr.so.2 lacks amd_comgr_get_isa_name";
      return;
    }
  }
  size_t n = 0;
  if (count(&n) != 0) {
    why = "amd_comgr_get_isa_count failed";
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const char *isa = nullptr;
    if (name(i, &isa) != 0 || isa == nullptr) continue;
    const std::string text = isa;  // "amdgcn-amd-amdhsa--gfx90a"
    const size_t dash = text.rfind('-');
    out.push_back(dash == std::string::npos ? text : text.substr(dash + 1));
  }
}

// hiprtc: in the runtime itself (ROCm 5), else libhiprtc.so (ROCm 6); "" when found, else why.
std::string resolve_hiprtc(Api &api, void *runtime) {
  void *handle = runtime;
  api.hiprtc_library = api.library;
  if (dlsym(runtime, "hiprtcCompileProgram") == nullptr) {
    const char *override_path = std::getenv("YIRAGE_HIPRTC_LIBRARY");
    api.hiprtc_library = override_path != nullptr && *override_path != '\0' ? override_path : "libhiprtc.so";
    handle = dlopen(api.hiprtc_library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr)
      return "hip: hiprtc is not in " + api.library + " and " + api.hiprtc_library +
             " cannot be opened (ROCm 6: hiprtc; Debian's ROCm 5: libamdhip64-5)";
  }
#define YIRAGE_RESOLVE(name)                                             \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name)); \
  if (api.name == nullptr) return "hip: " + api.hiprtc_library + " lacks " #name;
  YIRAGE_HIPRTC_FUNCTIONS(YIRAGE_RESOLVE)
#undef YIRAGE_RESOLVE
  api.hiprtcVersion(&api.hiprtc_major, &api.hiprtc_minor);
  return "";
}

}  // namespace

const Api *Api::load(std::string &why) {
  static Api api;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *override_path = std::getenv("YIRAGE_HIP_LIBRARY");
    const bool overridden = override_path != nullptr && *override_path != '\0';
    void *handle = nullptr;
    std::string errors;
    for (const std::string &file :
         overridden ? std::vector<std::string>{override_path}
                    : std::vector<std::string>{"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}) {
      api.library = file;
      if ((handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
      const char *e = dlerror();
      errors += std::string(errors.empty() ? "" : "; ") + (e != nullptr ? e : file + " cannot be opened");
    }
    if (handle == nullptr) {
      failure = "hip: no HIP runtime: " + errors + " (Debian: libamdhip64-5; or set YIRAGE_HIP_LIBRARY)";
      return;
    }
#define YIRAGE_RESOLVE(name)                                             \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name)); \
  if (api.name == nullptr && failure.empty()) failure = "hip: " + api.library + " lacks " #name;
    YIRAGE_HIP_FUNCTIONS(YIRAGE_RESOLVE)
    YIRAGE_RESOLVE(hipMalloc)
#undef YIRAGE_RESOLVE
    if (failure.empty()) failure = resolve_hiprtc(api, handle);
    api.handle = handle;
  });
  why = failure;
  return failure.empty() ? &api : nullptr;
}

const std::vector<std::string> &Api::architectures(std::string *why) const {
  std::call_once(architectures_once, [this] { list_architectures(architectures_found, architectures_why, handle); });
  if (why != nullptr) *why = architectures_why;
  return architectures_found;
}

std::string Api::error_text(hipError_t error) const {
  const char *name = hipGetErrorName(error);
  const char *message = hipGetErrorString(error);
  return std::string(name != nullptr ? name : "hipError_t") + " (" + std::to_string(static_cast<int>(error)) + ")" +
         (message != nullptr && *message != '\0' && (name == nullptr || std::string(name) != message)
              ? std::string(": ") + message
              : "");
}

void Api::check(hipError_t error, const std::string &what) const {
  if (error == hipSuccess) return;
  throw backend::NativeError(error == hipErrorOutOfMemory ? ErrorCode::kOutOfMemory : ErrorCode::kBackend,
                             "hip: " + what + ": " + error_text(error), static_cast<int64_t>(error));
}

std::string Api::compile(const std::string &source, const std::string &arch) const {
  const std::string processor = processor_of(arch);
  std::string why;
  const std::vector<std::string> &known_list = architectures(&why);
  if (std::find(known_list.begin(), known_list.end(), processor) == known_list.end()) {
    std::string known;
    for (const std::string &a : known_list) known += (known.empty() ? "" : " ") + a;
    throw Error(ErrorCode::kUnsupported, "hip: hiprtc " + std::to_string(hiprtc_major) + "." +
                                             std::to_string(hiprtc_minor) + " cannot compile for " + processor +
                                             (known_list.empty() ? " (" + why + ")" : " (it knows " + known + ")") +
                                             "; gfx940-gfx942 (MI300) and gfx11xx need ROCm 6");
  }
  hiprtcProgram program = nullptr;
  const auto fail = [&](hiprtcResult result, const std::string &what, const std::string &log) {
    const char *text = hiprtcGetErrorString(result);
    throw backend::NativeError(ErrorCode::kBackend,
                               "hip: " + what + " for " + arch + ": " + (text != nullptr ? text : "hiprtc error") +
                                   " (" + std::to_string(static_cast<int>(result)) + ")" +
                                   (log.empty() ? "" : "\n" + log),
                               static_cast<int64_t>(result));
  };
  hiprtcResult result = hiprtcCreateProgram(&program, source.c_str(), "yirage_kernel.hip", 0, nullptr, nullptr);
  if (result != HIPRTC_SUCCESS) fail(result, "hiprtcCreateProgram", "");
  const std::string offload = "--offload-arch=" + arch;
  const char *options[] = {offload.c_str(), "-O3", "-std=c++17"};
  result = hiprtcCompileProgram(program, 3, options);
  std::string log;
  size_t log_size = 0;
  if (hiprtcGetProgramLogSize(program, &log_size) == HIPRTC_SUCCESS && log_size > 1) {
    log.resize(log_size);
    if (hiprtcGetProgramLog(program, log.data()) != HIPRTC_SUCCESS) log.clear();
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  }
  std::string code;
  size_t code_size = 0;
  if (result == HIPRTC_SUCCESS) result = hiprtcGetCodeSize(program, &code_size);
  if (result == HIPRTC_SUCCESS) {
    code.resize(code_size);
    result = hiprtcGetCode(program, code.data());
  }
  hiprtcDestroyProgram(&program);
  if (result != HIPRTC_SUCCESS) fail(result, "hiprtc could not compile the kernel", log.substr(0, 3000));
  return code;
}

}  // namespace yirage::hip
