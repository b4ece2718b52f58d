// The Level Zero plugin's host code, never against a real driver's GPU: this machine's own loader
// (no Intel GPU: zero devices with the reason), no loader at all, and a fake loader
// (testing/fake_ze.c, through YIRAGE_LEVEL_ZERO_LIBRARY) for device enumeration, buffers,
// timers, compiling a kernel program to SPIR-V and building it, a module build that fails with
// its log, allocations that fail, and a failed zeInit after which nothing else is called. Each
// case runs in a child process: the loader is opened and initialized once per process.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <level_zero/ze_api.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "common/testing/plugin_test_support.hpp"
#include "runtime/plugin.hpp"
#include "util/file_cache.hpp"
#include "yirage_backend.h"

namespace yirage::level_zero {
namespace {

using testing::contains;
using testing::env;
using testing::exp_program;

// The plugin and the two fake loaders, from meson.
const std::string &plugin_path() {
  static const std::string path = env("YIRAGE_LEVEL_ZERO_PLUGIN");
  return path;
}
const std::string &fake_loader() {
  static const std::string path = env("FAKE_ZE_LOADER");
  return path;
}
const std::string &fake_loader_with_init_drivers() {
  static const std::string path = env("FAKE_ZE_LOADER_INIT_DRIVERS");
  return path;
}

// One plugin instance in the child, its cache in a fresh folder.
struct Session : testing::PluginSession {
  Session() : PluginSession(plugin_path(), "level-zero") {}
};

// What the fake loader recorded (the same library the plugin opened).
std::string fake_calls(const std::string &library) {
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return "(the fake loader is not loaded)";
  auto calls = reinterpret_cast<const char *(*)()>(dlsym(handle, "fake_ze_calls"));
  return calls();
}
int fake_violations(const std::string &library) {
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  return handle == nullptr ? -1 : reinterpret_cast<int (*)()>(dlsym(handle, "fake_ze_violations"))();
}

// Runs `body` in a child with the environment `variables` set (and the fake loader's unset ones
// cleared); "" is success.
void in_child(const std::vector<std::pair<const char *, std::string>> &variables,
              const std::function<std::string()> &body) {
  ASSERT_FALSE(plugin_path().empty()) << "set YIRAGE_LEVEL_ZERO_PLUGIN";
  testing::expect_in_child({"YIRAGE_LEVEL_ZERO_LIBRARY", "FAKE_ZE_INIT_RESULT", "FAKE_ZE_DEVICES",
                            "FAKE_ZE_DEVICE_MEMORY", "FAKE_ZE_BUILD_LOG"},
                           variables, body);
}

TEST(LevelZeroPlugin, OnThisMachinesLoaderReportsZeroDevicesAndWhy) {
  in_child({}, []() -> std::string {
    Session s;
    const int32_t count = s.count();
    const std::string reason = s.api->unavailable_reason(s.instance);
    if (count > 0) {
      std::printf("this machine has %d Level Zero GPU(s): no zero-device reason to check\n", count);
      return "";
    }
    std::string failures;
    if (void *loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL)) {
      dlclose(loader);
      // Debian's libze1 without a GPU: zeInit fails with ZE_RESULT_ERROR_UNINITIALIZED.
      failures += contains(reason, "zeInit(ZE_INIT_FLAG_GPU_ONLY) returned ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)",
                           "reason");
      failures += contains(reason, "no Level Zero driver found a GPU", "reason");
    } else {
      failures += contains(reason, "no Level Zero loader", "reason");
    }
    yirage_backend_buffer *buffer = nullptr;
    if (s.api->buffer_alloc(s.instance, 0, 16, &buffer, &s.error) != YIRAGE_ERROR_NOT_FOUND) {
      failures += "buffer_alloc on no device did not give NOT_FOUND\n";
    }
    failures += contains(s.message(), reason, "buffer_alloc's message");
    const char *alternative = std::getenv("ZE_ENABLE_ALT_DRIVERS");  // the sanitized builds' (meson.build)
    std::printf("unavailable_reason%s: %s\n",
                alternative != nullptr ? (std::string(" with ZE_ENABLE_ALT_DRIVERS=") + alternative).c_str() : "",
                reason.c_str());
    return failures;
  });
}

TEST(LevelZeroPlugin, WithoutALoaderReportsZeroDevicesAndWhy) {
  in_child({{"YIRAGE_LEVEL_ZERO_LIBRARY", "/nonexistent/libze_loader.so.1"}}, []() -> std::string {
    Session s;
    if (s.count() != 0) return "devices without a loader";
    return contains(s.api->unavailable_reason(s.instance), "level_zero: no Level Zero loader", "reason");
  });
}

TEST(LevelZeroPlugin, AFailedZeInitIsTheLastCall) {
  in_child({{"YIRAGE_LEVEL_ZERO_LIBRARY", fake_loader()}, {"FAKE_ZE_INIT_RESULT", "0x78000001"}}, []() -> std::string {
    Session s;
    std::string failures;
    if (s.count() != 0) failures += "devices after a failed zeInit\n";
    failures += contains(s.api->unavailable_reason(s.instance),
                         "ZE_RESULT_ERROR_UNINITIALIZED (0x78000001): no Level Zero driver found a GPU", "reason");
    // A second instance, and calls on the missing device, call nothing either.
    Session again;
    yirage_backend_timer *timer = nullptr;
    (void)again.api->timer_create(again.instance, 0, &timer, &again.error);
    if (fake_calls(fake_loader()) != "zeInit") failures += "calls: " + fake_calls(fake_loader()) + "\n";
    if (fake_violations(fake_loader()) != 0) failures += "the fake loader saw calls after the failure\n";
    return failures;
  });
}

TEST(LevelZeroPlugin, UsesZeInitDriversWhereTheLoaderHasIt) {
  in_child({{"YIRAGE_LEVEL_ZERO_LIBRARY", fake_loader_with_init_drivers()}, {"FAKE_ZE_INIT_RESULT", "0x78000001"}},
           []() -> std::string {
             Session s;
             std::string failures;
             if (s.count() != 0) failures += "devices after a failed zeInitDrivers\n";
             failures += contains(s.api->unavailable_reason(s.instance), "zeInitDrivers(GPU) returned", "reason");
             const std::string calls = fake_calls(fake_loader_with_init_drivers());
             if (calls != "zeInitDrivers") failures += "calls: " + calls + "\n";
             return failures;
           });
  in_child({{"YIRAGE_LEVEL_ZERO_LIBRARY", fake_loader_with_init_drivers()}}, []() -> std::string {
    Session s;
    std::string failures;
    if (s.count() != 2) failures += "zeInitDrivers' driver gave " + std::to_string(s.count()) + " devices, not 2\n";
    const std::string calls = fake_calls(fake_loader_with_init_drivers());
    if (calls.rfind("zeInitDrivers zeInitDrivers zeDriverGetProperties", 0) != 0 ||
        calls.find("zeInit ") != std::string::npos || calls.find("zeDriverGet ") != std::string::npos) {
      failures += "calls: " + calls + "\n";
    }
    if (fake_violations(fake_loader_with_init_drivers()) != 0) failures += "the fake loader saw bad calls\n";
    return failures;
  });
}

TEST(LevelZeroPlugin, DescribesEveryGpuFromItsProperties) {
  in_child({{"YIRAGE_LEVEL_ZERO_LIBRARY", fake_loader()}, {"FAKE_ZE_DEVICES", "2"}}, []() -> std::string {
    // Through the host's loader, which refuses implausible properties.
    const std::string cache = std::filesystem::temp_directory_path() / ("yirage-lz-" + util::unique_suffix());
    std::unique_ptr<runtime::Plugin> plugin = runtime::Plugin::load(plugin_path(), cache);
    std::filesystem::remove_all(cache);
    std::string failures;
    if (plugin->name() != "level_zero") failures += "name " + plugin->name() + "\n";
    if (plugin->device_count() != 2) return "device count " + std::to_string(plugin->device_count());
    for (int32_t i = 0; i < 2; ++i) {
      const runtime::DeviceInfo &d = plugin->device(i);
      const targets::TargetProperties &t = d.target;
      failures += contains(
          d.name, "Fake Intel(R) Data Center GPU Max 1100 #" + std::to_string(i) + " (Level Zero, driver 1.3.26241)",
          "name");
      failures += contains(t.name, "level-zero-fake-intel-r-data-center-gpu-max-1100", "target name");
      if (t.kind != targets::TargetKind::kGpu) failures += "not a GPU\n";
      if (t.compute_units != 56) failures += "compute units (Xe-cores) " + std::to_string(t.compute_units) + "\n";
      if (t.max_threads_per_block != 1024)
        failures += "max work-group " + std::to_string(t.max_threads_per_block) + "\n";
      if (t.shared_memory_per_block != 128 * 1024) failures += "shared local memory\n";
      if (t.warp_width != 32) failures += "subgroup width " + std::to_string(t.warp_width) + "\n";
      if (t.memory_bytes != int64_t{512} << 20) failures += "memory bytes " + std::to_string(t.memory_bytes) + "\n";
      if (t.l2_bytes != int64_t{108} << 20) failures += "L2 bytes\n";
      // 448 EUs × 16 lanes × 2 FLOP × 1.55 GHz; 3.2 GHz × 4096 bits.
      if (std::abs(t.vector_flops_float32 / (448.0 * 16 * 2 * 1.55e9) - 1) > 1e-9) failures += "FLOP/s\n";
      if (std::abs(t.memory_bandwidth / (3.2e9 * 512) - 1) > 1e-9) failures += "bandwidth\n";
      if (d.raw.dtypes != ((1u << YIRAGE_FLOAT16) | (1u << YIRAGE_BFLOAT16) | (1u << YIRAGE_FLOAT32))) {
        failures += "dtypes\n";
      }
      if (d.raw.dlpack_device_type != 14 || d.raw.dlpack_device_id != i) failures += "DLPack device\n";
    }
    if (fake_violations(fake_loader()) != 0) failures += "the fake loader saw bad calls: " + fake_calls(fake_loader());
    return failures;
  });
}

TEST(LevelZeroPlugin, BuffersGoThroughTheStagingBufferAndWrapOnlyItsOwnMemory) {
  in_child({{"YIRAGE_LEVEL_ZERO_LIBRARY", fake_loader()}}, []() -> std::string {
    Session s;
    std::string failures;
    const size_t bytes = (size_t{9} << 20) + 5;  // more than two staging buffers
    std::vector<unsigned char> data(bytes), back(bytes);
    for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 7 + i / 4096);
    yirage_backend_buffer *buffer = nullptr, *wrapped = nullptr, *foreign = nullptr;
    if (s.api->buffer_alloc(s.instance, 1, bytes, &buffer, &s.error) != YIRAGE_OK) return "alloc: " + s.message();
    if (s.api->buffer_write(buffer, 0, data.data(), bytes, &s.error) != YIRAGE_OK) failures += "write: " + s.message();
    if (s.api->buffer_write(buffer, 3, data.data(), 10, &s.error) != YIRAGE_OK) failures += "write: " + s.message();
    std::memmove(data.data() + 3, data.data(), 10);
    if (s.api->buffer_read(buffer, 0, back.data(), bytes, &s.error) != YIRAGE_OK) failures += "read: " + s.message();
    if (back != data) failures += "the bytes read back differ\n";
    void *native = nullptr;
    if (s.api->buffer_native(buffer, &native, &s.error) != YIRAGE_OK) failures += "native: " + s.message();
    if (s.api->buffer_wrap(s.instance, 1, static_cast<char *>(native) + 100, bytes - 100, &wrapped, &s.error) !=
        YIRAGE_OK) {
      failures += "wrapping its own memory: " + s.message() + "\n";
    }
    unsigned char byte = 0;
    if (wrapped != nullptr && (s.api->buffer_read(wrapped, 0, &byte, 1, &s.error) != YIRAGE_OK || byte != data[100])) {
      failures += "the wrapped buffer reads other bytes\n";
    }
    if (s.api->buffer_wrap(s.instance, 1, static_cast<char *>(native) + 100, bytes, &foreign, &s.error) !=
        YIRAGE_ERROR_INVALID_ARGUMENT) {
      failures += "wrapping past the allocation's end was accepted\n";
    }
    if (s.api->buffer_wrap(s.instance, 0, native, 16, &foreign, &s.error) != YIRAGE_ERROR_INVALID_ARGUMENT) {
      failures += "wrapping device 1's memory for device 0 was accepted\n";
    }
    if (s.api->buffer_wrap(s.instance, 1, data.data(), 16, &foreign, &s.error) != YIRAGE_ERROR_INVALID_ARGUMENT) {
      failures += "wrapping pageable host memory was accepted\n";
    }
    failures += contains(s.message(), "not memory of device 1 in this plugin's Level Zero context", "wrap's error");
    s.api->buffer_release(wrapped);
    s.api->buffer_release(buffer);
    if (fake_violations(fake_loader()) != 0) failures += "the fake loader saw bad calls: " + fake_calls(fake_loader());
    return failures;
  });
}

TEST(LevelZeroPlugin, AFailedAllocationIsOutOfMemoryWithTheDriversCode) {
  in_child({{"YIRAGE_LEVEL_ZERO_LIBRARY", fake_loader()}, {"FAKE_ZE_DEVICE_MEMORY", std::to_string(3 << 20)}},
           []() -> std::string {
             Session s;
             std::string failures;
             yirage_backend_buffer *first = nullptr, *second = nullptr, *huge = nullptr;
             if (s.api->buffer_alloc(s.instance, 0, 2 << 20, &first, &s.error) != YIRAGE_OK) {
               return "the first allocation: " + s.message();
             }
             if (s.api->buffer_alloc(s.instance, 0, 2 << 20, &second, &s.error) != YIRAGE_ERROR_OUT_OF_MEMORY) {
               failures += "the second allocation did not run out of memory\n";
             }
             if (second != nullptr) failures += "out_buffer was written on failure\n";
             if (s.error.native_code != ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY) failures += "native code\n";
             failures += contains(s.message(),
                                  "zeMemAllocDevice of 2097152 bytes: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "message");
             // Beyond maxMemAllocSize (256 MiB on the fake) it is refused before the driver is asked.
             const std::string before = fake_calls(fake_loader());
             if (s.api->buffer_alloc(s.instance, 0, size_t{1} << 30, &huge, &s.error) != YIRAGE_ERROR_OUT_OF_MEMORY) {
               failures += "1 GiB was not refused\n";
             }
             failures += contains(s.message(), "(maxMemAllocSize)", "message");
             if (fake_calls(fake_loader()) != before) failures += "the driver was asked for 1 GiB\n";
             // The plugin still works.
             s.api->buffer_release(first);
             if (s.api->buffer_alloc(s.instance, 0, 2 << 20, &second, &s.error) != YIRAGE_OK) {
               failures += "no allocation after the failure: " + s.message() + "\n";
             }
             s.api->buffer_release(second);
             return failures;
           });
}

TEST(LevelZeroPlugin, CompilesToSpirvBuildsLaunchesAndTimes) {
  in_child({{"YIRAGE_LEVEL_ZERO_LIBRARY", fake_loader()}}, []() -> std::string {
    Session s;
    std::string failures;
    const std::vector<uint8_t> program = exp_program();
    yirage_backend_executable *executable = nullptr, *again = nullptr;
    if (s.api->compile(s.instance, 0, program.data(), program.size(), nullptr, &executable, &s.error) != YIRAGE_OK) {
      return "compile: " + s.message();
    }
    // The SPIR-V and its source are kept in the cache, checksummed.
    std::string module;
    for (const auto &entry : std::filesystem::directory_iterator(s.cache + "/level_zero")) {
      if (entry.path().extension() == ".spv") module = entry.path();
    }
    if (module.empty() || !util::cached_file_intact(module)) return "no intact .spv in " + s.cache + "/level_zero";
    if (!std::filesystem::exists(module.substr(0, module.size() - 4) + ".cl")) failures += "the source is not kept\n";
    // From the cache the second time; a damaged entry is rebuilt with a warning.
    std::ofstream(module, std::ios::binary | std::ios::trunc) << "damaged";
    if (s.api->compile(s.instance, 0, program.data(), program.size(), nullptr, &again, &s.error) != YIRAGE_OK) {
      failures += "compile again: " + s.message() + "\n";
    }
    failures += contains(s.warnings, "level_zero: rebuilding", "warnings");
    if (!util::cached_file_intact(module)) failures += "the damaged entry was not replaced\n";
    s.api->executable_release(again);

    yirage_backend_buffer *in = nullptr, *out = nullptr;
    yirage_backend_timer *start = nullptr, *stop = nullptr;
    s.api->buffer_alloc(s.instance, 0, 4096 * 4, &in, &s.error);
    s.api->buffer_alloc(s.instance, 0, 4096 * 4, &out, &s.error);
    s.api->timer_create(s.instance, 0, &start, &s.error);
    s.api->timer_create(s.instance, 0, &stop, &s.error);
    int dummy_stream = 0;
    if (s.api->launch(executable, &dummy_stream, &in, 1, &out, 1, &s.error) != YIRAGE_ERROR_UNSUPPORTED) {
      failures += "a stream other than NULL was accepted\n";
    }
    const bool ran = s.api->timer_record(start, nullptr, &s.error) == YIRAGE_OK &&
                     s.api->launch(executable, nullptr, &in, 1, &out, 1, &s.error) == YIRAGE_OK &&
                     s.api->timer_record(stop, nullptr, &s.error) == YIRAGE_OK &&
                     s.api->synchronize(s.instance, 0, nullptr, &s.error) == YIRAGE_OK;
    if (!ran) return failures + "launch: " + s.message();
    double seconds = 0;
    if (s.api->timer_elapsed(start, stop, &seconds, &s.error) != YIRAGE_OK) failures += "elapsed: " + s.message();
    // The fake's clock: 19200 ticks per launch and 1 per timestamp at 19.2 MHz, wrapping at 2^32
    // in between, with junk in the upper bits.
    if (std::abs(seconds - 19201 / 19.2e6) > 1e-12) failures += "elapsed " + std::to_string(seconds) + " s\n";
    // A kernel of 4096 float32 outputs: work-groups of 256, two pointers, a barrier after it.
    const std::string calls = fake_calls(fake_loader());
    failures += contains(calls, "zeModuleCreate zeModuleBuildLogDestroy zeKernelCreate zeKernelSetGroupSize", "calls");
    failures += contains(calls, "zeCommandListAppendLaunchKernel(16,1,1/256:2) zeCommandListAppendBarrier", "calls");
    s.api->timer_release(start);
    s.api->timer_release(stop);
    s.api->buffer_release(in);
    s.api->buffer_release(out);
    s.api->executable_release(executable);
    if (fake_violations(fake_loader()) != 0) failures += "the fake loader saw bad calls: " + calls;
    return failures;
  });
}

TEST(LevelZeroPlugin, AFailedModuleBuildCarriesTheDriversCodeAndBuildLog) {
  in_child({{"YIRAGE_LEVEL_ZERO_LIBRARY", fake_loader()},
            {"FAKE_ZE_BUILD_LOG", "error: undefined reference to `fake_igc_builtin'"}},
           []() -> std::string {
             Session s;
             std::string failures;
             const std::vector<uint8_t> program = exp_program();
             yirage_backend_executable *executable = nullptr;
             if (s.api->compile(s.instance, 0, program.data(), program.size(), nullptr, &executable, &s.error) !=
                 YIRAGE_ERROR_BACKEND) {
               return "the build did not fail: " + s.message();
             }
             if (executable != nullptr) failures += "out_executable was written on failure\n";
             if (s.error.native_code != ZE_RESULT_ERROR_MODULE_BUILD_FAILURE) failures += "native code\n";
             failures += contains(s.message(), "zeModuleCreate (SPIR-V, ", "message");
             failures += contains(s.message(), "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE (0x70000004):\n", "message");
             failures += contains(s.message(), "undefined reference to `fake_igc_builtin'", "message");
             if (fake_violations(fake_loader()) != 0) failures += "the fake loader saw bad calls\n";
             return failures;
           });
}

}  // namespace
}  // namespace yirage::level_zero
