// The OpenCL plugin's parts without the conformance suite: no ICD loader and no platform (zero
// devices with the reason, never a crash), a build that fails (the driver's code and build log in
// the error), and the program-binary cache (kept, used, a damaged entry rebuilt). Tests that need
// a device run on the first one the ICD loader lists (PoCL's CPU device in CI) and skip, saying
// so, where there is none.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cl_api.hpp"
#include "common/testing/plugin_test_support.hpp"
#include "devices.hpp"
#include "opencl/codegen/opencl_source.hpp"
#include "programs.hpp"
#include "serialize/kernel_program.hpp"
#include "util/file_cache.hpp"
#include "yirage_backend.h"

namespace yirage::opencl {
namespace {

// The plugin file, from meson (YIRAGE_OPENCL_PLUGIN).
std::string plugin_path() {
  const char *path = std::getenv("YIRAGE_OPENCL_PLUGIN");
  return path != nullptr ? path : "";
}

TEST(OpenclPlugin, WithoutAnIcdLoaderReportsZeroDevicesAndWhy) {
  ASSERT_FALSE(plugin_path().empty()) << "set YIRAGE_OPENCL_PLUGIN";
  testing::expect_no_devices(plugin_path(), "YIRAGE_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1",
                             "opencl: no ICD loader");
}

TEST(OpenclPlugin, WithoutAPlatformReportsZeroDevicesAndWhy) {
  ASSERT_FALSE(plugin_path().empty()) << "set YIRAGE_OPENCL_PLUGIN";
  // ocl-icd reads the drivers from OCL_ICD_VENDORS: an empty folder lists none.
  const std::string empty = std::filesystem::temp_directory_path() / ("yirage-no-icds-" + util::unique_suffix());
  std::filesystem::create_directories(empty);
  testing::expect_no_devices(plugin_path(), "OCL_ICD_VENDORS", empty, "opencl: no platform");
  std::filesystem::remove_all(empty);
}

// Instances created and destroyed on eight threads at once: PoCL crashed in clGetDeviceInfo while
// another thread's instance made or released its context, until the plugin serialized both.
TEST(OpenclPlugin, InstancesComeAndGoOnManyThreadsAtOnce) {
  ASSERT_FALSE(plugin_path().empty()) << "set YIRAGE_OPENCL_PLUGIN";
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's own thread teardown failed here ("unable to unmap" an alternate signal
  // stack) with eight threads making PoCL contexts; the plain build runs this test.
  GTEST_SKIP() << "not run under AddressSanitizer, whose thread teardown fails with PoCL here; the plain build runs it";
#endif
  EXPECT_TRUE(testing::run_in_child([]() -> std::string {
    void *handle = dlopen(plugin_path().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return std::string("dlopen: ") + dlerror();
    auto entry = reinterpret_cast<yirage_backend_entry_fn>(dlsym(handle, YIRAGE_BACKEND_ENTRY_SYMBOL));
    const yirage_backend_api *api = entry(YIRAGE_BACKEND_ABI_MAJOR, YIRAGE_BACKEND_ABI_MINOR);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 8; ++i) {
          yirage_backend_host host{sizeof host, YIRAGE_BACKEND_ABI_MAJOR, YIRAGE_BACKEND_ABI_MINOR, nullptr, nullptr,
                                   nullptr};
          yirage_backend_error error{};
          error.struct_size = sizeof error;
          yirage_backend_instance *instance = nullptr;
          if (api->create(&host, &instance, &error) != YIRAGE_OK) ++failures;
          api->destroy(instance);
        }
      });
    }
    for (std::thread &t : threads) t.join();
    return failures == 0 ? "" : std::to_string(failures.load()) + " creates failed";
  }));
}

// The first device, or nullptr (and the test skips) where the machine has none.
class OpenclDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    api_ = Api::load(why);
    if (api_ == nullptr) GTEST_SKIP() << "no OpenCL here, nothing to build on: " << why;
    std::vector<std::string> skipped;
    devices_ = open_devices(*api_, why, skipped);
    if (devices_.empty()) GTEST_SKIP() << "no OpenCL device here, nothing to build on: " << why;
    cache_ = std::filesystem::temp_directory_path() / ("yirage-opencl-test-" + util::unique_suffix());
  }
  void TearDown() override {
    for (Device &d : devices_) close_device(*api_, d);
    if (!cache_.empty()) std::filesystem::remove_all(cache_);
  }
  BuiltKernel build(const std::string &source) {
    return build_kernel(*api_, devices_[0], source, "k", cache_,
                        [this](BuildWarning, const std::string &m) { warnings_ += m; });
  }

  const Api *api_ = nullptr;
  std::vector<Device> devices_;
  std::string cache_, warnings_;
};

TEST_F(OpenclDevice, AFailedBuildCarriesTheDriversCodeAndBuildLog) {
  try {
    build("__kernel void k(__global float *o) { o[0] = undeclared_name; }");
    FAIL() << "the build succeeded";
  } catch (const backend::NativeError &e) {
    EXPECT_EQ(e.code(), ErrorCode::kBackend);
    EXPECT_EQ(e.native(), CL_BUILD_PROGRAM_FAILURE);
    const std::string message = e.what();
    EXPECT_NE(message.find("clBuildProgram: CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << message;
    EXPECT_NE(message.find("undeclared_name"), std::string::npos) << "no build log in: " << message;
  }
}

// On PoCL with its own kernel cache on, only the source is kept (programs.cpp: driver_keeps_builds).
TEST_F(OpenclDevice, KeepsTheSourceAloneWherePoclCachesBuilds) {
  if (devices_[0].platform_name.find("Portable Computing Language") == std::string::npos) {
    GTEST_SKIP() << "not PoCL: " << devices_[0].platform_name;
  }
  const char *pocl_cache = std::getenv("POCL_KERNEL_CACHE");
  if (pocl_cache != nullptr && std::string(pocl_cache) == "0") GTEST_SKIP() << "PoCL's kernel cache is off here";
  BuiltKernel built = build("__kernel void k(__global float *o) { o[get_global_id(0)] = 3.0f; }");
  release_kernel(*api_, built);
  int sources = 0, binaries = 0;
  for (const auto &entry : std::filesystem::directory_iterator(cache_)) {
    sources += entry.path().extension() == ".cl";
    binaries += entry.path().extension() == ".clbin";
  }
  EXPECT_EQ(sources, 1);
  EXPECT_EQ(binaries, 0) << "a binary was asked of PoCL, which caches its builds itself";
}

TEST_F(OpenclDevice, KeepsBinariesAndRebuildsADamagedOne) {
  // PoCL's binaries are kept only where its own cache is off.
  setenv("POCL_KERNEL_CACHE", "0", 1);
  struct Unset {
    ~Unset() { unsetenv("POCL_KERNEL_CACHE"); }
  } unset;
  const std::string source = "__kernel void k(__global float *o) { o[get_global_id(0)] = 2.0f; }";
  BuiltKernel first = build(source);
  EXPECT_GT(first.work_group_size, 0u);
  release_kernel(*api_, first);
  std::string binary;
  for (const auto &entry : std::filesystem::directory_iterator(cache_)) {
    if (entry.path().extension() == ".clbin") binary = entry.path();
  }
  ASSERT_FALSE(binary.empty()) << "no program binary kept in " << cache_;
  EXPECT_TRUE(util::cached_file_intact(binary));
  EXPECT_TRUE(std::filesystem::exists(binary.substr(0, binary.size() - 6) + ".cl")) << "the source is not kept";

  BuiltKernel again = build(source);  // from the binary: no warning
  release_kernel(*api_, again);
  EXPECT_EQ(warnings_, "");

  std::ofstream(binary, std::ios::binary | std::ios::trunc) << "damaged";
  BuiltKernel rebuilt = build(source);
  EXPECT_NE(rebuilt.kernel, nullptr);
  release_kernel(*api_, rebuilt);
  EXPECT_NE(warnings_.find("rebuilding"), std::string::npos) << warnings_;
  EXPECT_TRUE(util::cached_file_intact(binary)) << "the damaged entry was not replaced";
}

// Kernel-level row passes take a work-group each, with no loop around their barriers (PoCL 5
// aborts compiling a loop strided by the work-group count around them), and the launch has
// exactly that many work-groups; split-k tiles too on a GPU, in a loop on a CPU device (PoCL 5
// gave NaNs without it).
TEST(OpenclCodegen, RowPassesAndGpuSplitKTilesTakeAWorkGroupEach) {
  codegen::OpenclTarget gpu;
  gpu.max_local_bytes = 48 * 1024;
  gpu.compute_units = 132;
  codegen::OpenclTarget cpu;
  cpu.cpu = true;
  cpu.max_work_group = 4096;
  cpu.compute_units = 2;
  {
    KernelGraph g;
    g.mark_output(g.matmul(g.new_input({4, 4096}, DType::kFloat16), g.new_input({4096, 64}, DType::kFloat16)));
    const codegen::OpenclKernel k =
        codegen::opencl_source(serialize::make_kernel_program(g, g.operators().size() - 1), cpu);
    EXPECT_NE(k.source.find("for (int tile = (int)get_group_id(0)"), std::string::npos) << k.source;
  }
  for (const bool rows : {true, false}) {
    KernelGraph g;
    const TensorId x = g.new_input({4, 4096}, DType::kFloat16);
    g.mark_output(rows ? g.rms_norm(x, {4096}, 1e-6, std::nullopt)
                       : g.matmul(x, g.new_input({4096, 512}, DType::kFloat16)));
    const codegen::OpenclKernel k =
        codegen::opencl_source(serialize::make_kernel_program(g, g.operators().size() - 1), gpu);
    const std::string part = rows ? "pass" : "tile";
    EXPECT_NE(k.source.find("const int " + part + " = (int)get_group_id(0);"), std::string::npos) << k.source;
    EXPECT_EQ(k.source.find("for (int " + part + " = (int)get_group_id(0)"), std::string::npos) << k.source;
    EXPECT_EQ(k.groups[0], rows ? 4 : 512 / 32) << k.source;
  }
}

}  // namespace
}  // namespace yirage::opencl
