// The HIP plugin's host code, never on an AMD GPU: this machine's HIP runtime (no GPU: zero devices
// with hipErrorNoDevice), no runtime at all, and a fake runtime (testing/fake_hip.c, through
// YIRAGE_HIP_LIBRARY) for device enumeration and properties, buffers, compiling a kernel program
// (hiprtc, the kernel cache, hipModuleLoadData), launches and timers, a compile failure with
// hiprtc's log, failed allocations, an architecture hiprtc cannot compile for and no device.
// Each case runs in a child process: the runtime is opened once per process.
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/testing/plugin_test_support.hpp"
#include "ir/block_graph.hpp"
#include "util/file_cache.hpp"
#include "yirage_backend.h"

namespace yirage::hip {
namespace {

using testing::contains;
using testing::env;
using testing::exp_program;

// The plugin and the fake runtime, from meson.
const std::string &plugin_path() {
  static const std::string path = env("YIRAGE_HIP_PLUGIN");
  return path;
}
const std::string &fake_runtime() {
  static const std::string path = env("FAKE_HIP_RUNTIME");
  return path;
}

// What fake_hip.c counts.
struct FakeStats {
  int compiles, modules_loaded, modules_unloaded, launches, allocations, frees;
  unsigned grid[3], block, shared_bytes;
  void *last_stream;
  int current_device;
  int mfma_probes;
};
const FakeStats &fake_stats() {
  void *handle = dlopen(fake_runtime().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) throw std::runtime_error("the fake runtime is not loaded");
  return *reinterpret_cast<FakeStats *(*)()>(dlsym(handle, "fake_hip_stats"))();
}

// One plugin instance in the child, its cache in `cache` (a fresh folder unless given).
struct Session : testing::PluginSession {
  explicit Session(const std::string &cache_dir = "") : PluginSession(plugin_path(), "hip", cache_dir) {}
};

// Runs `body` in a child with the environment `variables` set (the fake's others cleared); "" is
// success.
void in_child(const std::vector<std::pair<const char *, std::string>> &variables,
              const std::function<std::string()> &body) {
  ASSERT_FALSE(plugin_path().empty()) << "set YIRAGE_HIP_PLUGIN";
  testing::expect_in_child({"YIRAGE_HIP_LIBRARY", "YIRAGE_HIP_PLATFORM", "YIRAGE_HIP_MFMA", "FAKE_HIP_DEVICES",
                            "FAKE_HIP_ARCH", "FAKE_HIP_WAVEFRONT", "FAKE_HIP_MEMORY_LIMIT", "FAKE_HIP_COMPILE_ERROR"},
                           variables, body);
}

TEST(HipPlugin, OnThisMachinesRuntimeReportsZeroDevicesAndWhy) {
  in_child({}, []() -> std::string {
    Session s;
    const int32_t count = s.count();
    const std::string reason = s.api->unavailable_reason(s.instance);
    if (count > 0) {
      std::printf("this machine has %d AMD GPU(s): no zero-device reason to check\n", count);
      return "";
    }
    std::printf("unavailable_reason: %s\n", reason.c_str());
    std::string failures;
    if (void *runtime = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL)) {
      dlclose(runtime);
      failures += contains(reason, "hip: no device: hipErrorNoDevice (100)", "reason");
    } else {
      failures += contains(reason, "hip: no HIP runtime", "reason");
    }
    yirage_backend_buffer *buffer = nullptr;
    if (s.api->buffer_alloc(s.instance, 0, 16, &buffer, &s.error) != YIRAGE_ERROR_NOT_FOUND) {
      failures += "buffer_alloc on no device did not give NOT_FOUND\n";
    }
    return failures + contains(s.message(), reason, "buffer_alloc's message");
  });
}

// The code object manager's clang and PoCL's cannot both initialize in one process (LLVM aborts:
// "Option ... registered more than once"): the plugin opens the manager only to compile, so that
// creating it beside the OpenCL plugin on PoCL works.
TEST(HipPlugin, SharesAProcessWithPoclsClang) {
  const std::string opencl = env("YIRAGE_OPENCL_PLUGIN");
  if (opencl.empty()) GTEST_SKIP() << "the OpenCL plugin was not built";
  in_child({}, [&opencl]() -> std::string {
    void *handle = dlopen(opencl.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return std::string("dlopen: ") + dlerror();
    auto entry = reinterpret_cast<yirage_backend_entry_fn>(dlsym(handle, YIRAGE_BACKEND_ENTRY_SYMBOL));
    const yirage_backend_api *api = entry(YIRAGE_BACKEND_ABI_MAJOR, YIRAGE_BACKEND_ABI_MINOR);
    yirage_backend_host host{sizeof host, YIRAGE_BACKEND_ABI_MAJOR, YIRAGE_BACKEND_ABI_MINOR, "", nullptr, nullptr};
    yirage_backend_instance *instance = nullptr;
    yirage_backend_error error{};
    error.struct_size = sizeof error;
    if (api->create(&host, &instance, &error) != YIRAGE_OK) return std::string("opencl: ") + error.message;
    int32_t devices = 0;
    api->device_count(instance, &devices, &error);
    Session s;  // the HIP plugin on this machine's runtime, after PoCL
    s.count();
    api->destroy(instance);
    return "";
  });
}

TEST(HipPlugin, WithoutARuntimeReportsZeroDevicesAndWhy) {
  in_child({{"YIRAGE_HIP_LIBRARY", "/nonexistent/libamdhip64.so"}}, []() -> std::string {
    Session s;
    if (s.count() != 0) return "devices without a runtime";
    return contains(s.api->unavailable_reason(s.instance), "hip: no HIP runtime: /nonexistent/libamdhip64.so",
                    "reason");
  });
  in_child({{"YIRAGE_HIP_PLATFORM", "metal"}}, []() -> std::string {
    Session s;
    if (s.count() != 0) return "devices on an unknown platform";
    return contains(s.api->unavailable_reason(s.instance), "YIRAGE_HIP_PLATFORM is 'metal': expected hip or cuda",
                    "reason");
  });
}

// The test mode on NVIDIA GPUs: here (no libcuda.so.1) zero devices and why; on a GPU machine each
// GPU as an AMD GPU of 32-lane wavefronts and 64 KiB of LDS, its memory CUDA's.
// A plugin built without the CUDA headers (-Dbackends without cuda) has no test mode and says so.
TEST(HipPlugin, OnCudaEachNvidiaGpuIsAWave32Device) {
  in_child({{"YIRAGE_HIP_PLATFORM", "cuda"}}, []() -> std::string {
    Session s;
    const int32_t count = s.count();
    if (count == 0) {
      std::printf("unavailable_reason: %s\n", s.api->unavailable_reason(s.instance));
#ifdef YIRAGE_HIP_WITH_CUDA
      return contains(s.api->unavailable_reason(s.instance), "hip (on cuda): ", "reason");
#else
      return contains(s.api->unavailable_reason(s.instance),
                      "hip: YIRAGE_HIP_PLATFORM=cuda: this plugin was built without the CUDA headers", "reason");
#endif
    }
    yirage_backend_device_info info{};
    info.struct_size = sizeof info;
    info.target.struct_size = sizeof info.target;
    if (s.api->device_info(s.instance, 0, &info, &s.error) != YIRAGE_OK) return s.message();
    std::printf("device 0: %s, target %s\n", info.name, info.target.name);
    std::string failures = contains(info.target.name, "hip-on-cuda-sm_", "target name");
    failures += contains(info.name, "HIP source through NVRTC", "name");
    if (info.target.warp_width != 32 || info.target.shared_memory_per_block > 65536) failures += "not wave32, 64 KiB\n";
    if (info.dlpack_device_type != kDLCUDA) failures += "DLPack device\n";
    return failures;
  });
}

TEST(HipPlugin, NoDeviceIsZeroDevicesWithHipErrorNoDevice) {
  in_child({{"YIRAGE_HIP_LIBRARY", fake_runtime()}, {"FAKE_HIP_DEVICES", "0"}}, []() -> std::string {
    Session s;
    if (s.count() != 0) return "devices where the runtime has none";
    return contains(s.api->unavailable_reason(s.instance),
                    "hip: no device: hipErrorNoDevice (100): no ROCm-capable device is detected", "reason");
  });
}

TEST(HipPlugin, DevicesAndTheirProperties) {
  in_child({{"YIRAGE_HIP_LIBRARY", fake_runtime()}}, []() -> std::string {
    Session s;
    if (s.count() != 2) return "the fake's 2 devices were " + std::to_string(s.count());
    yirage_backend_device_info info{};
    info.struct_size = sizeof info;
    info.target.struct_size = sizeof info.target;
    if (s.api->device_info(s.instance, 1, &info, &s.error) != YIRAGE_OK) return s.message();
    const yirage_target_properties &t = info.target;
    std::string failures = contains(info.name, "Fake Instinct MI210 (gfx90a, 104 CUs, HIP)", "name");
    failures += contains(t.name, "hip-gfx90a", "target name");
    if (std::string(t.name) != "hip-gfx90a") failures += std::string("target name ") + t.name + "\n";
    if (t.warp_width != 64) failures += "wavefront " + std::to_string(t.warp_width) + "\n";
    if (t.compute_units != 104 || t.shared_memory_per_block != 65536 || t.max_threads_per_block != 1024)
      failures += "CUs, LDS or threads per block\n";
    if (t.memory_bytes != (int64_t{64} << 30) || t.l2_bytes != 8 << 20) failures += "memory or L2\n";
    if (t.memory_bandwidth != 2 * 1.6e9 * 512)
      failures += "memory bandwidth " + std::to_string(t.memory_bandwidth) + "\n";
    if (t.vector_flops_float32 != 104 * 128 * 1.7e9) failures += "float32 FLOP/s\n";
    if (info.dlpack_device_type != kDLROCM || info.dlpack_device_id != 1) failures += "DLPack device\n";
    if ((info.dtypes & (1u << YIRAGE_BFLOAT16)) == 0) failures += "bfloat16\n";
    return failures;
  });
}

TEST(HipPlugin, BuffersAndAllocationFailures) {
  in_child({{"YIRAGE_HIP_LIBRARY", fake_runtime()}, {"FAKE_HIP_MEMORY_LIMIT", "1048576"}}, []() -> std::string {
    Session s;
    std::string failures;
    yirage_backend_buffer *buffer = nullptr;
    if (s.api->buffer_alloc(s.instance, 1, 64, &buffer, &s.error) != YIRAGE_OK) return s.message();
    const std::vector<float> in = {1, 2, 3, 4};
    std::vector<float> out(4);
    if (s.api->buffer_write(buffer, 16, in.data(), 16, &s.error) != YIRAGE_OK ||
        s.api->buffer_read(buffer, 16, out.data(), 16, &s.error) != YIRAGE_OK || out != in)
      failures += "round trip: " + s.message() + "\n";
    void *native = nullptr;
    if (s.api->buffer_native(buffer, &native, &s.error) != YIRAGE_OK || native == nullptr) failures += "native\n";
    yirage_backend_buffer *wrapped = nullptr;
    if (s.api->buffer_wrap(s.instance, 1, native, 64, &wrapped, &s.error) != YIRAGE_OK) failures += "wrap\n";
    s.api->buffer_release(wrapped);
    s.api->buffer_release(buffer);
    if (fake_stats().allocations != 1 || fake_stats().frees != 1) failures += "a wrapped buffer was freed\n";
    // The runtime's own failure: its code and name.
    yirage_backend_buffer *big = nullptr;
    if (s.api->buffer_alloc(s.instance, 0, 2 << 20, &big, &s.error) != YIRAGE_ERROR_OUT_OF_MEMORY)
      failures += "an allocation the runtime refused did not give OUT_OF_MEMORY\n";
    if (s.error.native_code != 2) failures += "native code " + std::to_string(s.error.native_code) + "\n";
    failures +=
        contains(s.message(), "hip: hipMalloc of 2097152 bytes: hipErrorOutOfMemory (2): out of memory", "message");
    // More than the device has: refused before the runtime is asked.
    if (s.api->buffer_alloc(s.instance, 0, size_t{65} << 30, &big, &s.error) != YIRAGE_ERROR_OUT_OF_MEMORY)
      failures += "more than the device has did not give OUT_OF_MEMORY\n";
    failures += contains(s.message(), "the device has 68719476736", "message");
    if (big != nullptr) failures += "out_buffer was written on failure\n";
    return failures;
  });
}

TEST(HipPlugin, CompilesLaunchesAndTimesThroughTheCache) {
  const std::string cache = std::filesystem::temp_directory_path() / ("yirage-hip-cache-" + util::unique_suffix());
  in_child({{"YIRAGE_HIP_LIBRARY", fake_runtime()}}, [&]() -> std::string {
    const std::vector<uint8_t> program = exp_program();
    std::string failures;
    for (int round = 0; round < 2; ++round) {  // the second from the cache
      Session s(cache);
      yirage_backend_executable *executable = nullptr;
      if (s.api->compile(s.instance, 1, program.data(), program.size(), nullptr, &executable, &s.error) != YIRAGE_OK)
        return "compile: " + s.message();
      if (fake_stats().compiles != 1) failures += "hiprtc ran " + std::to_string(fake_stats().compiles) + " times\n";
      yirage_backend_buffer *in = nullptr, *out = nullptr;
      s.api->buffer_alloc(s.instance, 1, 4096 * 4, &in, &s.error);
      s.api->buffer_alloc(s.instance, 1, 4096 * 4, &out, &s.error);
      yirage_backend_timer *start = nullptr, *stop = nullptr;
      s.api->timer_create(s.instance, 1, &start, &s.error);
      s.api->timer_create(s.instance, 1, &stop, &s.error);
      void *stream = reinterpret_cast<void *>(0x5eed);
      s.api->timer_record(start, stream, &s.error);
      if (s.api->launch(executable, stream, &in, 1, &out, 1, &s.error) != YIRAGE_OK)
        failures += "launch: " + s.message() + "\n";
      s.api->timer_record(stop, stream, &s.error);
      double seconds = 0;
      if (s.api->timer_elapsed(start, stop, &seconds, &s.error) != YIRAGE_OK || seconds != 0.0005)
        failures += "elapsed " + std::to_string(seconds) + "\n";
      if (s.api->synchronize(s.instance, 1, stream, &s.error) != YIRAGE_OK) failures += "synchronize\n";
      const FakeStats &f = fake_stats();
      if (f.launches != round + 1 || f.block != 256 || f.grid[0] < 1 || f.last_stream != stream ||
          f.current_device != 1)
        failures += "the launch the fake saw\n";
      // Too few outputs: refused before anything runs.
      if (s.api->launch(executable, stream, &in, 1, &out, 0, &s.error) != YIRAGE_ERROR_INVALID_ARGUMENT)
        failures += "a launch without its output\n";
      s.api->timer_release(start);
      s.api->timer_release(stop);
      s.api->buffer_release(in);
      s.api->buffer_release(out);
      s.api->executable_release(executable);
    }
    size_t objects = 0, sources = 0;
    for (const auto &entry : std::filesystem::directory_iterator(cache + "/hip")) {
      objects += entry.path().extension() == ".co";
      sources += entry.path().extension() == ".hip";
    }
    if (objects != 1 || sources != 1) failures += "the cache holds " + std::to_string(objects) + " code objects\n";
    if (fake_stats().modules_loaded != 2 || fake_stats().modules_unloaded != 2) failures += "modules\n";
    return failures;
  });
  std::filesystem::remove_all(cache);
}

TEST(HipPlugin, ACompileFailureGivesHiprtcsLog) {
  in_child({{"YIRAGE_HIP_LIBRARY", fake_runtime()}, {"FAKE_HIP_COMPILE_ERROR", "1"}}, []() -> std::string {
    Session s;
    const std::vector<uint8_t> program = exp_program();
    yirage_backend_executable *executable = nullptr;
    if (s.api->compile(s.instance, 0, program.data(), program.size(), nullptr, &executable, &s.error) !=
        YIRAGE_ERROR_BACKEND)
      return "a failed compile did not give BACKEND";
    std::string failures;
    if (s.error.native_code != 6) failures += "native code " + std::to_string(s.error.native_code) + "\n";
    failures += contains(s.message(), "hip: hiprtc could not compile the kernel for gfx90a:sramecc+:xnack-", "message");
    failures += contains(s.message(), "HIPRTC_ERROR_COMPILATION (6)", "message");
    failures += contains(s.message(), "error: FAKE_HIP_COMPILE_ERROR is set", "message");
    if (executable != nullptr) failures += "out_executable was written on failure\n";
    return failures;
  });
}

TEST(HipPlugin, AnArchitectureHiprtcCannotCompileForIsUnsupported) {
  in_child({{"YIRAGE_HIP_LIBRARY", fake_runtime()}, {"FAKE_HIP_ARCH", "gfx942:sramecc+:xnack-"}}, []() -> std::string {
    Session s;
    const std::vector<uint8_t> program = exp_program();
    yirage_backend_executable *executable = nullptr;
    if (s.api->compile(s.instance, 0, program.data(), program.size(), nullptr, &executable, &s.error) !=
        YIRAGE_ERROR_UNSUPPORTED)
      return "gfx942 did not give UNSUPPORTED: " + s.message();
    std::string failures = contains(s.message(), "cannot compile for gfx942", "message");
    failures += contains(s.message(), "it knows gfx908 gfx90a gfx1030", "message");
    if (fake_stats().compiles != 0) failures += "hiprtc was called\n";
    return failures;
  });
}

TEST(HipPlugin, AWave32DeviceGetsSourceForIt) {
  in_child(
      {{"YIRAGE_HIP_LIBRARY", fake_runtime()}, {"FAKE_HIP_ARCH", "gfx1030"}, {"FAKE_HIP_WAVEFRONT", "32"}},
      []() -> std::string {
        Session s;
        const std::vector<uint8_t> program = exp_program();
        yirage_backend_executable *executable = nullptr;
        if (s.api->compile(s.instance, 0, program.data(), program.size(), nullptr, &executable, &s.error) != YIRAGE_OK)
          return s.message();
        s.api->executable_release(executable);
        for (const auto &entry : std::filesystem::directory_iterator(s.cache + "/hip")) {
          if (entry.path().extension() != ".hip") continue;
          const std::optional<std::string> source = util::read_cached(entry.path().string());
          return source && source->find("#define YR_WAVEFRONT 32\n") != std::string::npos
                     ? ""
                     : "the cached source is not for 32 lanes";
        }
        return "no source in the cache";
      });
}

// The source the plugin compiled for `graph`'s operator `op` (from its cache), or why there is none.
std::optional<std::string> compiled_source(Session &s, const KernelGraph &graph, size_t op, std::string &why) {
  const std::vector<uint8_t> program = serialize::kernel_program_to_bytes(serialize::make_kernel_program(graph, op));
  yirage_backend_executable *executable = nullptr;
  if (s.api->compile(s.instance, 0, program.data(), program.size(), nullptr, &executable, &s.error) != YIRAGE_OK) {
    why = s.message();
    return std::nullopt;
  }
  s.api->executable_release(executable);
  for (const auto &entry : std::filesystem::directory_iterator(s.cache + "/hip")) {
    if (entry.path().extension() != ".hip") continue;
    std::optional<std::string> source = util::read_cached(entry.path().string());
    // Not the matrix cores' self-test (cached too); the next call finds its own.
    if (!source || source->find("yirage_cuda_kernel(") == std::string::npos) continue;
    std::filesystem::remove(entry.path());
    return source;
  }
  why = "no source in the cache";
  return std::nullopt;
}

// A µGraph of bfloat16 data with a tile matmul: X·W summed over a loop of two, W's columns split
// over two blocks (`columns` of them).
KernelGraph tile_matmul_ugraph(int64_t columns = 64) {
  KernelGraph g;
  const TensorId x = g.new_input({16, 64}, DType::kBFloat16), w = g.new_input({64, columns}, DType::kBFloat16);
  BlockGraphConfig config;
  config.grid = {2, 1, 1};
  config.block_threads = 128;
  config.forloop_range = 2;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId xt = bg->new_input({16, 64}, DType::kBFloat16, {-1, -1, -1}, 1);
  const TensorId wt = bg->new_input({64, columns}, DType::kBFloat16, {1, -1, -1}, 0);
  bg->new_output(bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, wt)), {1, -1, -1}, -1);
  g.mark_output(g.customized({x, w}, bg)[0]);
  return g;
}

// gfx90a's matrix cores (docs/backends/hip.md, "Matrix cores (MFMA)"): a µGraph's tile matmuls by
// default (a search checks each candidate on the device) and unless YIRAGE_HIP_MFMA=0; pre-defined
// matmuls only with YIRAGE_HIP_MFMA=1 (a graph run as it is is not checked); either only after the
// device passed the self-test, once (the fake computes it as working matrix cores would). Neither
// has run on an AMD GPU.
TEST(HipPlugin, MfmaWhereTheDefaultOrYirageHipMfmaSays) {
  for (const char *asked : {"", "0", "1"}) {
    std::vector<std::pair<const char *, std::string>> variables = {{"YIRAGE_HIP_LIBRARY", fake_runtime()}};
    if (*asked != '\0') variables.emplace_back("YIRAGE_HIP_MFMA", asked);
    in_child(variables, [asked]() -> std::string {
      const std::string setting = *asked ? std::string("YIRAGE_HIP_MFMA=") + asked : "by default";
      const bool tiles = std::string(asked) != "0", predefined = std::string(asked) == "1";
      Session s;
      std::string failures, why;
      KernelGraph matmul;
      matmul.mark_output(
          matmul.matmul(matmul.new_input({77, 104}, DType::kFloat16), matmul.new_input({104, 88}, DType::kFloat16)));
      const std::optional<std::string> predefined_source = compiled_source(s, matmul, 2, why);
      if (!predefined_source) return why;
      if ((predefined_source->find("__builtin_amdgcn_mfma_f32_16x16x16f16(") != std::string::npos) != predefined)
        failures += setting + ": a pre-defined matmul's MFMA " + (predefined ? "not used\n" : "used\n");
      for (int64_t columns : {64, 96}) {
        const std::optional<std::string> tile_source = compiled_source(s, tile_matmul_ugraph(columns), 2, why);
        if (!tile_source) return why;
        if ((tile_source->find("__builtin_amdgcn_mfma_f32_16x16x16bf16_1k(") != std::string::npos) != tiles)
          failures += setting + ": a µGraph's tile MFMA " + (tiles ? "not used\n" : "used\n");
      }
      if (fake_stats().mfma_probes != (tiles ? 1 : 0))
        failures += setting + ": " + std::to_string(fake_stats().mfma_probes) + " self-tests\n";
      if (!s.warnings.empty()) failures += setting + ": warnings: " + s.warnings;
      // The device's 16-bit figures follow the tiles: MFMA's 1024 FLOPs per CU and clock.
      yirage_backend_device_info info{};
      info.struct_size = sizeof info;
      info.target.struct_size = sizeof info.target;
      if (s.api->device_info(s.instance, 0, &info, &s.error) != YIRAGE_OK) return s.message();
      const double expected = (tiles ? 1024 : 128) * 104 * 1.7e9;
      if (info.target.peak_flops_float16 != expected || info.target.peak_flops_bfloat16 != expected)
        failures += setting + ": 16-bit FLOP/s " + std::to_string(info.target.peak_flops_float16) + "\n";
      if ((info.target.matrix_unit[0] == 16) != tiles) failures += setting + ": matrix unit\n";
      return failures;
    });
  }
}

// Matrix cores that get the self-test wrong are not used, by any kernel, and the host is told why.
TEST(HipPlugin, MfmaIsOffWhereTheSelfTestFails) {
  in_child({{"YIRAGE_HIP_LIBRARY", fake_runtime()}, {"YIRAGE_HIP_MFMA", "1"}, {"FAKE_HIP_MFMA_WRONG", "1"}},
           []() -> std::string {
             Session s;
             std::string failures, why;
             for (int64_t columns : {64, 96}) {
               const std::optional<std::string> source = compiled_source(s, tile_matmul_ugraph(columns), 2, why);
               if (!source) return why;
               if (source->find("mfma") != std::string::npos) failures += "MFMA used after a failed self-test\n";
             }
             KernelGraph matmul;
             matmul.mark_output(matmul.matmul(matmul.new_input({77, 104}, DType::kFloat16),
                                              matmul.new_input({104, 88}, DType::kFloat16)));
             const std::optional<std::string> source = compiled_source(s, matmul, 2, why);
             if (!source) return why;
             if (source->find("mfma") != std::string::npos) failures += "a pre-defined matmul used MFMA\n";
             if (fake_stats().mfma_probes != 1)
               failures += std::to_string(fake_stats().mfma_probes) + " self-tests, not one\n";
             failures += contains(s.warnings,
                                  "hip: device 0's matrix cores failed their self-test, so no kernel uses MFMA: the "
                                  "float16 product's element (0, 0) is",
                                  "warning");
             return failures;
           });
}

}  // namespace
}  // namespace yirage::hip
