// The Vulkan plugin's parts without the conformance suite: no loader and no driver (zero devices
// with the reason, never a crash), a shader that fails to compile (the compiler's message in the
// error), VkResults as statuses, and the SPIR-V of every kind of generated kernel valid under
// spirv-val's rules (SPIRV-Tools' validator) on both 16-bit paths: 16-bit storage and packed
// words. Tests that need a device run on the first one the loader lists (lavapipe in CI) and
// skip, saying so, where there is none.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "benchmark_ugraphs.hpp"
#include "common/testing/plugin_test_support.hpp"
#include "devices.hpp"
#include "ir/kernel_graph.hpp"
#include "serialize/kernel_program.hpp"
#include "shaders.hpp"
#include "util/file_cache.hpp"
#include "vk_api.hpp"
#include "vulkan/codegen/glsl_source.hpp"
#include "yirage_backend.h"

namespace yirage::vulkan {
namespace {

// lavapipe (Mesa 22.3.6-1+deb12u2) keeps 128 bytes from a pthread_once in its globals. The loader
// unloads it with the last instance, and LeakSanitizer then reports them as leaked, from frames
// without a module that no suppression can name. Kept loaded (RTLD_NODELETE) its globals still
// reach them. Where lavapipe is not installed this does nothing.
[[maybe_unused]] const void *const kKeepLavapipeLoaded = dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_NODELETE);

// The plugin file, from meson (YIRAGE_VULKAN_PLUGIN).
std::string plugin_path() {
  const char *path = std::getenv("YIRAGE_VULKAN_PLUGIN");
  return path != nullptr ? path : "";
}

TEST(VulkanPlugin, WithoutALoaderReportsZeroDevicesAndWhy) {
  ASSERT_FALSE(plugin_path().empty()) << "set YIRAGE_VULKAN_PLUGIN";
  testing::expect_no_devices(plugin_path(), "YIRAGE_VULKAN_LIBRARY", "/nonexistent/libvulkan.so.1",
                             "vulkan: no loader");
}

TEST(VulkanPlugin, WithoutADriverReportsZeroDevicesAndWhy) {
  ASSERT_FALSE(plugin_path().empty()) << "set YIRAGE_VULKAN_PLUGIN";
  // The loader reads the drivers from VK_ICD_FILENAMES: a manifest that is not there lists none.
  testing::expect_no_devices(plugin_path(), "VK_ICD_FILENAMES", "/nonexistent/icd.json",
                             "is a driver such as mesa-vulkan-drivers installed");
}

TEST(VulkanPlugin, AMissingValidationLayerIsSaid) {
  ASSERT_FALSE(plugin_path().empty()) << "set YIRAGE_VULKAN_PLUGIN";
  // The loader looks for layers in VK_LAYER_PATH only, when it is set: an empty folder has none.
  const std::string empty = std::filesystem::temp_directory_path() / ("yirage-no-layers-" + util::unique_suffix());
  std::filesystem::create_directories(empty);
  setenv("YIRAGE_VULKAN_VALIDATION", "1", 1);
  testing::expect_no_devices(plugin_path(), "VK_LAYER_PATH", empty, "VK_LAYER_KHRONOS_validation is not installed");
  unsetenv("YIRAGE_VULKAN_VALIDATION");
  std::filesystem::remove_all(empty);
}

TEST(VulkanPlugin, VkResultsBecomeStatusesWithTheNativeCode) {
  auto status_of = [](VkResult result) {
    try {
      check(result, "vkSomething");
    } catch (const backend::NativeError &e) {
      return std::make_tuple(static_cast<int>(e.code()), e.native(), std::string(e.what()));
    }
    return std::make_tuple(0, int64_t{0}, std::string());
  };
  EXPECT_EQ(std::get<0>(status_of(VK_SUCCESS)), 0);
  const auto memory = status_of(VK_ERROR_OUT_OF_DEVICE_MEMORY);
  EXPECT_EQ(std::get<0>(memory), static_cast<int>(ErrorCode::kOutOfMemory));
  EXPECT_EQ(std::get<1>(memory), VK_ERROR_OUT_OF_DEVICE_MEMORY);
  EXPECT_EQ(std::get<2>(memory), "vulkan: vkSomething: VK_ERROR_OUT_OF_DEVICE_MEMORY");
  const auto lost = status_of(VK_ERROR_DEVICE_LOST);
  EXPECT_EQ(std::get<0>(lost), static_cast<int>(ErrorCode::kBackend));
  EXPECT_EQ(std::get<1>(lost), VK_ERROR_DEVICE_LOST);
  EXPECT_NE(std::get<2>(lost).find("VK_ERROR_DEVICE_LOST"), std::string::npos);
  EXPECT_EQ(result_name(static_cast<VkResult>(-12345)), "VkResult -12345");
}

TEST(VulkanShaders, AFailedCompileCarriesTheCompilersMessage) {
  const std::string source =
      "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n  float x = undeclared_name;\n}\n";
  try {
    (void)compile_glsl(source, 0);
    FAIL() << "the shader compiled";
  } catch (const backend::NativeError &e) {
    EXPECT_EQ(e.code(), ErrorCode::kBackend);
    EXPECT_NE(e.native(), 0);
    const std::string message = e.what();
    EXPECT_NE(message.find("vulkan: the GLSL compiler (shaderc) failed: compilation error"), std::string::npos)
        << message;
    EXPECT_NE(message.find("undeclared_name"), std::string::npos) << message;  // glslang's own words
  }
}

// Kernel programs of every kind the generator has: each kernel-level operator, and µGraphs with
// matmuls, accumulators, block reductions and row chains.
std::vector<serialize::KernelProgram> every_kind(DType dtype) {
  std::vector<KernelGraph> graphs;
  for (const std::string &name : bench::benchmark_names()) {
    graphs.push_back(bench::build_unfused(name, 1, dtype, 16));
    graphs.push_back(bench::build_fused(name, 1, dtype, 16));
  }
  for (bool fused : {false, true}) {
    graphs.push_back(bench::build_block_reductions(fused, dtype));
    graphs.push_back(bench::build_row_chain(fused, dtype));
  }
  KernelGraph g;
  const TensorId x = g.new_input({3, 5, 7}, dtype), y = g.new_input({3, 1, 7}, dtype);
  for (OpKind kind : {OpKind::kExp, OpKind::kSilu, OpKind::kGelu, OpKind::kRelu, OpKind::kSqrt, OpKind::kSquare,
                      OpKind::kSigmoid, OpKind::kLog, OpKind::kNeg}) {
    g.mark_output(g.unary(kind, x));
  }
  g.mark_output(g.clamp(x, -0.5, 0.5));
  g.mark_output(g.mul_scalar(x, 3.0));
  for (OpKind kind : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow, OpKind::kMax}) {
    g.mark_output(g.binary(kind, x, y));
  }
  g.mark_output(g.reduction(OpKind::kReduction, x, 1));
  g.mark_output(g.reduction(OpKind::kReductionMax, x, 2));
  g.mark_output(g.rms_norm(x, {7}, 1e-6, std::nullopt));
  g.mark_output(g.concat(x, y, 1));
  for (TensorId part : g.split(x, 2, {3, 4})) g.mark_output(part);
  g.mark_output(g.matmul(x, g.new_input({3, 7, 9}, dtype)));
  graphs.push_back(std::move(g));
  std::vector<serialize::KernelProgram> programs;
  for (const KernelGraph &graph : graphs) {
    const std::vector<bool> live = live_operators(graph);
    for (size_t i = 0; i < graph.operators().size(); ++i) {
      if (live[i] && graph.operators()[i].kind != OpKind::kInput) {
        programs.push_back(serialize::make_kernel_program(graph, i));
      }
    }
  }
  return programs;
}

// lavapipe's limits: 32 KiB of shared memory, 1024 invocations per work-group.
codegen::VulkanTarget lavapipe_like(bool storage16) {
  codegen::VulkanTarget t;
  t.max_shared_bytes = 32768;
  t.max_work_group = 1024;
  t.compute_units = 2;
  t.storage16 = storage16;
  t.cpu = true;
  return t;
}

// Every kind of kernel compiles and its SPIR-V validates (compile_glsl runs the validator), on
// both 16-bit paths; the packed path stores with atomics and declares no 16-bit type.
TEST(VulkanShaders, EveryKindOfKernelGivesValidSpirv) {
  int64_t compiled = 0;
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (bool storage16 : {true, false}) {
      if (dtype == DType::kFloat32 && !storage16) continue;
      for (const serialize::KernelProgram &program : every_kind(dtype)) {
        codegen::VulkanKernel kernel;
        try {
          kernel = codegen::glsl_source(program, lavapipe_like(storage16));
        } catch (const Error &e) {
          // A µGraph whose tiles exceed lavapipe's shared memory is refused, saying so.
          EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
          continue;
        }
        SCOPED_TRACE(program.name + " " + dtype_name(dtype) + (storage16 ? " 16-bit storage" : " packed"));
        EXPECT_NO_THROW((void)compile_glsl(kernel.source, 0)) << kernel.source;
        if (dtype != DType::kFloat32) {
          EXPECT_EQ(kernel.source.find("uint16_t") != std::string::npos, storage16);
          EXPECT_EQ(kernel.source.find("atomicOr") != std::string::npos, !storage16);
        }
        ++compiled;
      }
    }
  }
  EXPECT_GT(compiled, 100);
}

TEST(VulkanShaders, ValidatorRefusesBrokenSpirv) {
  std::vector<uint32_t> spirv = compile_glsl("#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n", 0);
  EXPECT_EQ(validate_spirv(spirv), "");
  spirv.resize(spirv.size() - 3);
  EXPECT_NE(validate_spirv(spirv), "");
}

// The SPIR-V cache: kept with its GLSL beside it, used again, a damaged entry rebuilt with a
// warning.
TEST(VulkanShaders, SpirvIsCachedAndADamagedEntryRebuilt) {
  const std::string dir = std::filesystem::temp_directory_path() / ("yirage-vulkan-cache-" + util::unique_suffix());
  const std::string source = "#version 450\nlayout(local_size_x = 2) in;\nvoid main() {}\n";
  std::vector<std::string> warnings;
  const BuildLog log = [&](BuildWarning, const std::string &m) { warnings.push_back(m); };
  const std::vector<uint32_t> first = cached_spirv(source, 3, dir, log);
  std::vector<std::string> spv;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".spv") spv.push_back(entry.path());
    if (entry.path().extension() == ".comp") {
      EXPECT_EQ(*util::read_cached(entry.path()), source);
    }
  }
  ASSERT_EQ(spv.size(), 1u);
  EXPECT_EQ(cached_spirv(source, 3, dir, log), first);
  EXPECT_TRUE(warnings.empty());
  { std::ofstream(spv[0], std::ios::binary | std::ios::trunc) << "junk"; }
  EXPECT_EQ(cached_spirv(source, 3, dir, log), first);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("rebuilding"), std::string::npos) << warnings[0];
  std::filesystem::remove_all(dir);
}

// The first device's description: its limits as the device reports them.
TEST(VulkanDevices, PropertiesComeFromTheDevice) {
  Instance instance;
  std::vector<std::string> skipped;
  const std::string dir = std::filesystem::temp_directory_path() / ("yirage-vulkan-dev-" + util::unique_suffix());
  open_instance(instance, dir, skipped);
  // Where the tests name a driver that is installed (meson: lavapipe's manifest), it must be seen.
  const char *icd = std::getenv("VK_ICD_FILENAMES");
  if (icd != nullptr && std::filesystem::is_regular_file(icd)) {
    ASSERT_FALSE(instance.devices.empty()) << icd << " is installed, yet: " << instance.reason;
  }
  if (instance.devices.empty()) GTEST_SKIP() << "no Vulkan device here: " << instance.reason;
  const Device &d = *instance.devices[0];
  const yirage_target_properties &t = d.info.target;
  EXPECT_GT(t.shared_memory_per_block, 0);
  EXPECT_EQ(t.shared_memory_per_block, d.target.max_shared_bytes);
  EXPECT_GT(t.max_threads_per_block, 0);
  EXPECT_GE(t.warp_width, 1);
  EXPECT_GT(t.memory_bytes, 0);
  EXPECT_EQ(std::string(t.name).rfind("vulkan-", 0), 0u) << t.name;
  if (d.name.find("llvmpipe") != std::string::npos) {  // lavapipe, as ENVIRONMENT.md describes it
    EXPECT_EQ(t.shared_memory_per_block, 32768);
    EXPECT_EQ(t.warp_width, 8);
    EXPECT_TRUE(d.storage16);
    EXPECT_TRUE(d.float16);
    EXPECT_EQ(t.kind, YIRAGE_TARGET_CPU);
  }
  close_instance(instance);
  // The pipeline cache is kept on disk when the device closes.
  bool kept = false;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    kept = kept || entry.path().filename().string().rfind("pipelines-", 0) == 0;
  }
  EXPECT_TRUE(kept);
  std::filesystem::remove_all(dir);
}

// YIRAGE_VULKAN_VALIDATION: the layer's messages reach the instance (which fails the plugin call
// that provoked one). A buffer without usage flags is a mistake the layer reports.
TEST(VulkanDevices, ValidationMessagesAreCaught) {
  setenv("YIRAGE_VULKAN_VALIDATION", "1", 1);
  Instance instance;
  std::vector<std::string> skipped;
  std::vector<std::string> logged;
  instance.log_warning = [&](const std::string &m) { logged.push_back(m); };
  const std::string dir = std::filesystem::temp_directory_path() / ("yirage-vulkan-val-" + util::unique_suffix());
  open_instance(instance, dir, skipped);
  unsetenv("YIRAGE_VULKAN_VALIDATION");
  if (instance.devices.empty()) GTEST_SKIP() << "no Vulkan device or no validation layer here: " << instance.reason;
  ASSERT_EQ(instance.validation_messages.load(), 0u) << instance.last_validation_message;
  const Device &d = *instance.devices[0];
  auto create = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  create.size = 64;
  create.usage = 0;
  VkBuffer buffer = VK_NULL_HANDLE;
  if (instance.api.vkCreateBuffer(d.device, &create, nullptr, &buffer) == VK_SUCCESS) {
    instance.api.vkDestroyBuffer(d.device, buffer, nullptr);
  }
  EXPECT_GT(instance.validation_messages.load(), 0u);
  ASSERT_FALSE(logged.empty());
  EXPECT_EQ(logged[0].rfind("vulkan: validation: ", 0), 0u) << logged[0];
  close_instance(instance);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace yirage::vulkan
