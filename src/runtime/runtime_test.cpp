// The runtime with real plugins: loading (good, missing entry symbol, wrong ABI versions, no
// devices, values the loader refuses to trust), isolated discovery of plugins that crash, exit
// or hang while loading, the CPU plugin compiling and running every operator kind in every dtype and the six
// fused benchmark µGraphs against the reference executor, its kernel cache, and the measurer's
// checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "benchmark_ugraphs.hpp"
#include "cpu/codegen/cpu_source.hpp"
#include "ir/block_graph.hpp"
#include "profiling/search_on_device.hpp"
#include "runtime/context.hpp"
#include "runtime/host_tensor.hpp"
#include "runtime/measure.hpp"
#include "search/cost_model.hpp"
#include "serialize/kernel_program.hpp"
#include "target/target.hpp"

namespace yirage::runtime {
namespace {

namespace fs = std::filesystem;

std::string test_cache_dir(const std::string &name) {
  const fs::path dir = fs::path(YIRAGE_TEST_BUILD_DIR) / "test-cache" / name;
  return dir.string();
}

// The kernel cache the conformance tests use too (meson's test_cache_dir): the kernels of every
// operator kind and benchmark µGraph are compiled once for the plain and sanitized builds. Tests
// of the cache itself use folders of their own.
std::unique_ptr<Plugin> cpu_plugin(const std::string &cache = YIRAGE_TEST_KERNEL_CACHE) {
  return Plugin::load(YIRAGE_TEST_CPU_PLUGIN, cache);
}

ErrorCode load_error(const std::string &path, std::string &message) {
  try {
    Plugin::load(path, "");
  } catch (const Error &e) {
    message = e.what();
    return e.code();
  }
  return ErrorCode::kInternal;
}

TEST(PluginLoading, CpuPluginReportsTheHost) {
  auto plugin = cpu_plugin();
  EXPECT_EQ(plugin->name(), "cpu");
  ASSERT_EQ(plugin->device_count(), 1);
  const DeviceInfo &d = plugin->device(0);
  EXPECT_GT(d.target.compute_units, 0);
  EXPECT_GT(d.target.memory_bandwidth, 1e8);
  EXPECT_GT(d.target.shared_memory_per_block, 0);
  EXPECT_EQ(d.raw.dlpack_device_type, kDLCPU);
  EXPECT_FALSE(d.name.empty());
  EXPECT_THROW(plugin->device(1), Error);
}

TEST(PluginLoading, RefusesBrokenAndIncompatiblePlugins) {
  std::string message;
  EXPECT_EQ(load_error(YIRAGE_TEST_PLUGIN_NO_ENTRY, message), ErrorCode::kBackend);
  EXPECT_NE(message.find("does not export yirage_backend_entry"), std::string::npos) << message;
  EXPECT_EQ(load_error(YIRAGE_TEST_PLUGIN_NEWER_MAJOR, message), ErrorCode::kVersionMismatch);
  EXPECT_NE(message.find("newer"), std::string::npos) << message;
  EXPECT_EQ(load_error(YIRAGE_TEST_PLUGIN_OLDER_MAJOR, message), ErrorCode::kVersionMismatch);
  EXPECT_NE(message.find("too old"), std::string::npos) << message;
  EXPECT_EQ(load_error("/nonexistent/libyirage-backend-x.so", message), ErrorCode::kNotFound);
  // A file that is not a shared object at all.
  const std::string junk = test_cache_dir("junk") + "/libyirage-backend-junk.so";
  fs::create_directories(test_cache_dir("junk"));
  std::ofstream(junk) << "not an ELF file";
  EXPECT_EQ(load_error(junk, message), ErrorCode::kNotFound);
  EXPECT_THROW(check_plugin_version("p", 1, 0, 8), Error);                       // table too small for 1.0
  EXPECT_NO_THROW(check_plugin_version("p", 1, 7, sizeof(yirage_backend_api)));  // newer minor
}

TEST(PluginLoading, MissingDriverLoadsWithZeroDevices) {
  auto plugin = Plugin::load(YIRAGE_TEST_PLUGIN_NO_DEVICE, "");
  EXPECT_EQ(plugin->device_count(), 0);
  EXPECT_NE(plugin->unavailable_reason().find("no driver"), std::string::npos);
  try {
    plugin->device(0);
    ADD_FAILURE();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("no driver"), std::string::npos) << e.what();
  }
}

// The names of the plugins a context loaded from `folder`, sorted, and its load errors about files
// there. A context scans the install's plugin folder too, so on a machine where yirage is
// installed it also loads those plugins (or notes them as shadowed): the tests count only what
// they put in their own folder.
std::vector<std::string> plugins_from(const Context &context, const std::string &folder) {
  std::vector<std::string> names;
  for (const auto &plugin : context.plugins()) {
    if (plugin->path().rfind(folder + "/", 0) == 0) names.push_back(plugin->name());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> load_errors_from(const Context &context, const std::string &folder) {
  std::vector<std::string> errors;
  for (const std::string &e : context.load_errors()) {
    if (e.find(folder + "/") != std::string::npos) errors.push_back(e);
  }
  return errors;
}

TEST(PluginLoading, ContextScansFoldersAndRecordsFailures) {
  const std::string folder = test_cache_dir("scan");
  fs::remove_all(folder);
  fs::create_directories(folder);
  fs::copy_file(YIRAGE_TEST_CPU_PLUGIN, folder + "/libyirage-backend-cpu.so");
  fs::copy_file(YIRAGE_TEST_PLUGIN_NO_ENTRY, folder + "/libyirage-backend-noentry.so");
  fs::copy_file(YIRAGE_TEST_PLUGIN_NO_DEVICE, folder + "/libyirage-backend-nodevice.so");
  std::ofstream(folder + "/unrelated.so") << "ignored: not named libyirage-backend-*";
  setenv("YIRAGE_BACKEND_PATH", folder.c_str(), 1);
  Context context(ContextOptions{{}, true, YIRAGE_TEST_KERNEL_CACHE});
  unsetenv("YIRAGE_BACKEND_PATH");
  EXPECT_EQ(plugins_from(context, folder), (std::vector<std::string>{"cpu", "nodevice"}));
  // $YIRAGE_BACKEND_PATH's folders come before the install's.
  EXPECT_EQ(context.plugin("cpu").path(), folder + "/libyirage-backend-cpu.so");
  EXPECT_EQ(context.plugin("cpu").device_count(), 1);
  EXPECT_EQ(context.plugin("nodevice").device_count(), 0);
  const std::vector<std::string> errors = load_errors_from(context, folder);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("noentry"), std::string::npos);
  EXPECT_THROW(context.plugin("noentry"), Error);
  // An explicit path that fails is an error, not a note.
  EXPECT_THROW(Context(ContextOptions{{YIRAGE_TEST_PLUGIN_NO_ENTRY}, false, ""}), Error);
}

// A fresh folder holding copies of `plugins` named as scanned plugins are
// (libyirage-backend-<key>.so).
std::string plugin_folder(const std::string &name, const std::vector<std::pair<std::string, std::string>> &plugins) {
  const std::string folder = test_cache_dir(name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  for (const auto &[key, path] : plugins) fs::copy_file(path, folder + "/libyirage-backend-" + key + ".so");
  return folder;
}

// The load error that mentions `file` ("" if none does).
std::string load_error_of(const Context &context, const std::string &file) {
  for (const std::string &e : context.load_errors()) {
    if (e.find("/libyirage-backend-" + file + ".so") != std::string::npos) return e;
  }
  return "";
}

// The CPU plugin of a context still serves: its device, and a buffer written and read back.
void expect_cpu_serves(const Context &context) {
  const Plugin &cpu = context.plugin("cpu");
  ASSERT_EQ(cpu.device_count(), 1);
  yirage_backend_buffer *buffer = nullptr;
  cpu.call("buffer_alloc", cpu.api().buffer_alloc, cpu.instance(), 0, sizeof(float), &buffer);
  const float written = 2.5f;
  float read = 0;
  cpu.call("buffer_write", cpu.api().buffer_write, buffer, size_t{0}, static_cast<const void *>(&written),
           sizeof written);
  cpu.call("buffer_read", cpu.api().buffer_read, buffer, size_t{0}, static_cast<void *>(&read), sizeof read);
  cpu.api().buffer_release(buffer);
  EXPECT_EQ(read, written);
}

// Values a plugin reports are checked, not trusted: each of these is refused with the value in
// the message, while the same plugin with the value right (ONE_DEVICE) loads.
TEST(PluginLoading, RefusesValuesItCannotTrust) {
  const std::pair<const char *, const char *> refused[] = {
      {YIRAGE_TEST_PLUGIN_HUGE_COUNT, "the plugin reports 2000000000 devices (more than the 1024"},
      {YIRAGE_TEST_PLUGIN_NEGATIVE_COUNT, "the plugin reports -1 devices (a count cannot be negative)"},
      {YIRAGE_TEST_PLUGIN_LONG_REASON, "unavailable_reason is not a NUL-terminated string of at most 4095 bytes"},
      {YIRAGE_TEST_PLUGIN_BAD_NAME, "the plugin's name \"Fake Device\" is not a short lowercase word"},
      {YIRAGE_TEST_PLUGIN_UNTERMINATED_NAME, "device 0 has a name that is not NUL-terminated within its 128 bytes"},
      {YIRAGE_TEST_PLUGIN_UNKNOWN_DTYPES, "device 0 reports dtypes 0xffffffff, which has bits of no dtype"},
      {YIRAGE_TEST_PLUGIN_BAD_DLPACK, "device 0 reports DLPack device (1, -1)"},
      {YIRAGE_TEST_PLUGIN_UNKNOWN_FLAGS, "device 0 reports flags 0x80000000, which has bits of no flag"},
  };
  for (const auto &[path, expected] : refused) {
    std::string message;
    EXPECT_EQ(load_error(path, message), ErrorCode::kBackend) << path;
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
  auto good = Plugin::load(YIRAGE_TEST_PLUGIN_ONE_DEVICE, "");
  EXPECT_EQ(good->name(), "fakedevice");
  ASSERT_EQ(good->device_count(), 1);
  EXPECT_EQ(good->device(0).name, "fake device");
}

// In-process discovery (the default) skips plugins with bad counts, and the others load.
TEST(PluginLoading, ContextSkipsPluginsThatReportBadCounts) {
  const std::string folder = plugin_folder("bad-counts", {{"cpu", YIRAGE_TEST_CPU_PLUGIN},
                                                          {"huge", YIRAGE_TEST_PLUGIN_HUGE_COUNT},
                                                          {"negative", YIRAGE_TEST_PLUGIN_NEGATIVE_COUNT},
                                                          {"nodevice", YIRAGE_TEST_PLUGIN_NO_DEVICE}});
  setenv("YIRAGE_BACKEND_PATH", folder.c_str(), 1);
  Context context(ContextOptions{{}, true, YIRAGE_TEST_KERNEL_CACHE, PluginProbe::kInProcess});
  unsetenv("YIRAGE_BACKEND_PATH");
  EXPECT_EQ(plugins_from(context, folder), (std::vector<std::string>{"cpu", "nodevice"}));
  expect_cpu_serves(context);
  EXPECT_EQ(context.plugin("nodevice").device_count(), 0);
  EXPECT_EQ(load_errors_from(context, folder).size(), 2u);
  EXPECT_NE(load_error_of(context, "huge").find("reports 2000000000 devices"), std::string::npos);
  EXPECT_NE(load_error_of(context, "negative").find("reports -1 devices"), std::string::npos);
}

// Isolated discovery: each plugin is loaded first in a child process; one that crashes, aborts,
// exits or hangs there (or reports a bad count) is skipped with the reason, and the rest load
// here. The hang costs the one-second limit; the probes run at once.
TEST(PluginProbe, IsolatedDiscoverySkipsPluginsThatCrashExitOrHang) {
  const std::string folder = plugin_folder("probe", {{"cpu", YIRAGE_TEST_CPU_PLUGIN},
                                                     {"nodevice", YIRAGE_TEST_PLUGIN_NO_DEVICE},
                                                     {"segv", YIRAGE_TEST_PLUGIN_CREATE_SEGV},
                                                     {"abort", YIRAGE_TEST_PLUGIN_COUNT_ABORT},
                                                     {"exit", YIRAGE_TEST_PLUGIN_ENTRY_EXIT},
                                                     {"exitnow", YIRAGE_TEST_PLUGIN_CREATE_EXIT},
                                                     {"hang", YIRAGE_TEST_PLUGIN_CREATE_HANG},
                                                     {"huge", YIRAGE_TEST_PLUGIN_HUGE_COUNT},
                                                     {"negative", YIRAGE_TEST_PLUGIN_NEGATIVE_COUNT}});
  setenv("YIRAGE_BACKEND_PATH", folder.c_str(), 1);
  const auto start = std::chrono::steady_clock::now();
  Context context(ContextOptions{{}, true, YIRAGE_TEST_KERNEL_CACHE, PluginProbe::kIsolated, 1.0});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  unsetenv("YIRAGE_BACKEND_PATH");
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(plugins_from(context, folder), (std::vector<std::string>{"cpu", "nodevice"}));
  expect_cpu_serves(context);
  EXPECT_EQ(context.plugin("nodevice").device_count(), 0);
  EXPECT_EQ(load_errors_from(context, folder).size(), 7u);
  const std::pair<const char *, const char *> expected[] = {
      {"segv", "probe process was killed by signal 11 (SIGSEGV) while loading it"},
      {"abort", "probe process was killed by signal 6 (SIGABRT) while loading it"},
      {"exit", "the plugin called exit() in its probe process while loading (a plugin must never exit)"},
      {"exitnow", "probe process exited with status 4 (a plugin must never exit) while loading it"},
      {"hang", "did not finish loading within 1 s in its probe process, which was killed"},
      {"huge", "the plugin reports 2000000000 devices"},
      {"negative", "the plugin reports -1 devices"},
  };
  for (const auto &[file, reason] : expected) {
    EXPECT_NE(load_error_of(context, file).find(reason), std::string::npos)
        << file << ": " << load_error_of(context, file);
  }
}

// The probe mode and its limit from the environment, as the C ABI and `yirage devices
// --isolated` use them; an explicit path whose probe fails is an error, and this process lives.
TEST(PluginProbe, ReadsTheEnvironmentAndRefusesExplicitPathsThatCrash) {
  setenv("YIRAGE_PLUGIN_PROBE", "isolated", 1);
  setenv("YIRAGE_PLUGIN_PROBE_TIMEOUT", "0.5", 1);
  try {
    Context(ContextOptions{{YIRAGE_TEST_PLUGIN_CREATE_HANG}, false, ""});
    ADD_FAILURE() << "a hanging explicit plugin loaded";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kBackend);
    EXPECT_NE(std::string(e.what()).find("did not finish loading within 0.5 s"), std::string::npos) << e.what();
  }
  try {
    Context(ContextOptions{{YIRAGE_TEST_PLUGIN_CREATE_SEGV}, false, ""});
    ADD_FAILURE() << "a crashing explicit plugin loaded";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("SIGSEGV"), std::string::npos) << e.what();
  }
  Context good(ContextOptions{{YIRAGE_TEST_PLUGIN_ONE_DEVICE}, false, ""});
  EXPECT_EQ(good.plugin("fakedevice").device_count(), 1);
  // Values it cannot read are errors, not a silent fallback to in-process loading.
  setenv("YIRAGE_PLUGIN_PROBE_TIMEOUT", "soon", 1);
  EXPECT_THROW(Context(ContextOptions{{}, false, ""}), Error);
  unsetenv("YIRAGE_PLUGIN_PROBE_TIMEOUT");
  setenv("YIRAGE_PLUGIN_PROBE", "sandboxed", 1);
  try {
    Context(ContextOptions{{}, false, ""});
    ADD_FAILURE() << "YIRAGE_PLUGIN_PROBE=sandboxed accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("isolated or in-process, not 'sandboxed'"), std::string::npos) << e.what();
  }
  unsetenv("YIRAGE_PLUGIN_PROBE");
}

// Checks `graph` on the CPU plugin against the reference executor.
void expect_correct(const Plugin &plugin, const KernelGraph &graph, const std::string &what) {
  Measurer measurer(plugin, 0, graph, MeasureOptions{});
  const Measurement m = measurer.measure(graph, false);
  EXPECT_TRUE(m.correct) << what << ": " << m.error;
  EXPECT_GE(m.max_relative_error, 0) << what;
}

class EveryDType : public ::testing::TestWithParam<DType> {};

TEST_P(EveryDType, EveryOperatorKind) {
  const DType dt = GetParam();
  auto plugin = cpu_plugin();
  {
    KernelGraph g;
    const TensorId x = g.new_input({3, 5, 7}, dt);
    for (OpKind kind :
         {OpKind::kExp, OpKind::kSilu, OpKind::kGelu, OpKind::kRelu, OpKind::kSquare, OpKind::kSigmoid, OpKind::kNeg}) {
      g.mark_output(g.unary(kind, x));
    }
    g.mark_output(g.clamp(x, -0.25, 0.5));
    g.mark_output(g.mul_scalar(x, 0.375));
    // sqrt and log of negative inputs give NaN on both sides; square first for real values.
    g.mark_output(g.unary(OpKind::kSqrt, g.unary(OpKind::kSquare, x)));
    g.mark_output(g.unary(OpKind::kLog, g.unary(OpKind::kExp, x)));
    expect_correct(*plugin, g, std::string("unary ") + dtype_name(dt));
  }
  {
    KernelGraph g;
    const TensorId a = g.new_input({2, 3, 6}, dt), b = g.new_input({2, 1, 6}, dt), c = g.new_input({1, 3, 1}, dt);
    for (OpKind kind : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kMax}) {
      g.mark_output(g.binary(kind, a, b));
      g.mark_output(g.binary(kind, c, a));
    }
    g.mark_output(g.binary(OpKind::kPow, g.unary(OpKind::kExp, a), c));
    expect_correct(*plugin, g, std::string("binary ") + dtype_name(dt));
  }
  {
    KernelGraph g;
    const TensorId a = g.new_input({2, 1, 19, 33}, dt), b = g.new_input({1, 3, 33, 130}, dt);
    g.mark_output(g.matmul(a, b));  // batch broadcast, odd sizes, n over one register block
    const TensorId x = g.new_input({4, 1, 9}, dt);
    g.mark_output(g.reduction(OpKind::kReduction, x, 2));
    g.mark_output(g.reduction(OpKind::kReductionMax, x, 0));
    const TensorId w = g.new_input({9}, dt);
    g.mark_output(g.rms_norm(x, {9}, 1e-6, w));
    g.mark_output(g.rms_norm(x, {1, 9}, 1e-5, std::nullopt));
    g.mark_output(g.concat(x, g.unary(OpKind::kNeg, x), 1));
    for (TensorId part : g.split(x, 2, {4, 5})) g.mark_output(part);
    expect_correct(*plugin, g, std::string("matmul, reductions, layout ") + dtype_name(dt));
  }
}

// A µGraph whose input tile is saved as it is, and one whose tile a matmul reads and a saver
// saves: the generator and the CPU cost model look at every reader of a tile, output savers
// (which have no outputs) among them.
TEST_P(EveryDType, TilesSavedAsTheyAreAndReadByAMatmul) {
  const DType dt = GetParam();
  auto plugin = cpu_plugin();
  for (const bool product : {false, true}) {
    KernelGraph g;
    const TensorId x = g.new_input({16, 32}, dt);
    BlockGraphConfig config;
    config.grid = {2, 1, 1};
    auto bg = std::make_shared<BlockGraph>(config);
    const TensorId xt = bg->new_input({16, 32}, dt, GridMap{0, -1, -1}, -1);
    bg->new_output(xt, GridMap{0, -1, -1}, -1);
    std::vector<TensorId> inputs = {x};
    if (product) {
      inputs.push_back(g.new_input({32, 32}, dt));
      bg->new_output(bg->matmul(xt, bg->new_input({32, 32}, dt, kReplicated, -1)), GridMap{0, -1, -1}, -1);
    }
    for (TensorId out : g.customized(inputs, bg)) g.mark_output(out);
    EXPECT_TRUE(std::isfinite(search::estimate_cost(g, targets::host_cpu_target()).seconds));
    expect_correct(*plugin, g, std::string(product ? "saved and multiplied " : "saved ") + dtype_name(dt));
  }
}

INSTANTIATE_TEST_SUITE_P(CpuPlugin, EveryDType, ::testing::Values(DType::kFloat32, DType::kFloat16, DType::kBFloat16),
                         [](const auto &info) { return std::string(dtype_name(info.param)); });

TEST(CpuPlugin, FusedBenchmarkUGraphs) {
  auto plugin = cpu_plugin();
  for (const std::string &name : bench::benchmark_names()) {
    for (DType dt : {DType::kFloat16, DType::kFloat32}) {
      const KernelGraph unfused = bench::build_unfused(name, 2, dt, 16);
      const KernelGraph fused = bench::build_fused(name, 2, dt, 16);
      Measurer measurer(*plugin, 0, unfused, MeasureOptions{});
      const Measurement f = measurer.measure(fused, false);
      EXPECT_TRUE(f.correct) << name << " fused " << dtype_name(dt) << ": " << f.error;
      // Unfused qknorm stores Σ exp(scores) in float16, which overflows on these inputs (the
      // reference computes in float64): a property of the graph, not of the backend.
      if (name == "qknorm" && dt == DType::kFloat16) continue;
      const Measurement u = measurer.measure(unfused, false);
      EXPECT_TRUE(u.correct) << name << " unfused " << dtype_name(dt) << ": " << u.error;
    }
  }
}

// The CPU backend's kernels include no header (cpu/codegen/cpu_prelude.cpp: they compile in a third
// to half the time); the fused µGraphs and the unfused graphs' pre-defined operators, in every dtype,
// use nothing but what the prelude declares (the test above builds and runs them).
TEST(CpuPlugin, GeneratedSourceIncludesNoHeader) {
  for (const std::string &name : bench::benchmark_names()) {
    for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
      for (const KernelGraph &g : {bench::build_unfused(name, 2, dt, 16), bench::build_fused(name, 2, dt, 16)}) {
        for (size_t i : serialize::kernel_operators(g)) {
          const std::string source = codegen::cpu_source(serialize::make_kernel_program(g, i));
          EXPECT_EQ(source.find("#include"), std::string::npos) << name << ":\n" << source;
        }
      }
    }
  }
}

// Matmuls call the plugin's small-GEMM (libxsmm) where it has one, the loop being their fallback:
// float32 operands as they are; 16-bit input tiles of a µGraph are converted into its arena; a
// kernel-level product of 16-bit tensors converts its tasks' blocks into the thread's scratch where
// it has a whole block of rows, and keeps the loop (which converts as it reads) for fewer rows (a
// decode product streams its B once). All run right with YIRAGE_CPU_LIBXSMM=0 as well
// (FusedBenchmarkUGraphs and EveryDType run them with it on).
TEST(CpuPlugin, MatmulsCallTheSmallGemm) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    for (const bool fused : {false, true}) {
      const KernelGraph g = fused ? bench::build_fused("lora", 2, dt, 16) : bench::build_unfused("lora", 2, dt, 16);
      std::string sources;
      for (size_t i : serialize::kernel_operators(g))
        sources += codegen::cpu_source(serialize::make_kernel_program(g, i));
      EXPECT_NE(sources.find("yr_gemm(rt, "), std::string::npos) << dtype_name(dt);
      EXPECT_EQ(sources.find("yr_gemm_scratch(rt, ") != std::string::npos, dt != DType::kFloat32 && !fused)
          << dtype_name(dt) << (fused ? " fused" : " unfused");
    }
    KernelGraph decode;
    decode.mark_output(decode.matmul(decode.new_input({8, 64}, dt), decode.new_input({64, 256}, dt)));
    const std::string decode_source = codegen::cpu_source(serialize::make_kernel_program(decode, 2));
    EXPECT_EQ(decode_source.find("yr_gemm(rt, "), std::string::npos) << dtype_name(dt) << ": 8 rows stream B";
    EXPECT_EQ(decode_source.find("yr_fa = yr_scratch(rt, ") != std::string::npos, dt != DType::kFloat32)
        << dtype_name(dt) << ": a 16-bit A is converted once per thread";
    // A µGraph's product of 2 rows reads a 16-bit weight tile in place, through the loop.
    const KernelGraph two_rows = bench::build_fused("rmsnorm_linear", 1, dt, 16);
    EXPECT_EQ(
        codegen::cpu_source(serialize::make_kernel_program(two_rows, 2)).find("yr_gemm(rt, ") != std::string::npos,
        dt == DType::kFloat32)
        << dtype_name(dt);
  }

  setenv("YIRAGE_CPU_LIBXSMM", "0", 1);
  auto plugin = cpu_plugin();
  for (DType dt : {DType::kFloat16, DType::kFloat32}) {
    for (const std::string name : {"lora", "gated_mlp", "gqa"}) {
      const KernelGraph unfused = bench::build_unfused(name, 2, dt, 16);
      Measurer measurer(*plugin, 0, unfused, MeasureOptions{});
      for (const KernelGraph &g : {unfused, bench::build_fused(name, 2, dt, 16)}) {
        const Measurement m = measurer.measure(g, false);
        EXPECT_TRUE(m.correct) << name << " " << dtype_name(dt) << " with YIRAGE_CPU_LIBXSMM=0: " << m.error;
      }
    }
  }
  unsetenv("YIRAGE_CPU_LIBXSMM");
}

// The "items, grain" of each shared loop in a CPU kernel's source (yr_parallel_for(rt, N, G, …)).
std::vector<std::pair<int64_t, int64_t>> shared_loops(const std::string &source) {
  std::vector<std::pair<int64_t, int64_t>> loops;
  const std::string call = "yr_parallel_for(rt, ";
  for (size_t at = source.find(call); at != std::string::npos; at = source.find(call, at + 1)) {
    size_t used = 0;
    const int64_t items = std::stoll(source.substr(at + call.size()), &used);
    const int64_t grain = std::stoll(source.substr(at + call.size() + used + 2));
    loops.emplace_back(items, grain);
  }
  return loops;
}

// A kernel too small to be worth waking another thread runs on the launching thread alone (a
// loop of fewer than 2 × grain items); a large one is shared; what is large depends on the
// element type.
TEST(CpuPlugin, SmallKernelsStayOnTheLaunchingThread) {
  for (int64_t n : {int64_t{256}, int64_t{1} << 22}) {
    KernelGraph g;
    g.mark_output(g.unary(OpKind::kExp, g.new_input({n}, DType::kFloat32)));
    const auto loops = shared_loops(codegen::cpu_source(serialize::make_kernel_program(g, 1)));
    ASSERT_EQ(loops.size(), 1u) << n;
    EXPECT_EQ(loops[0].first, n);
    if (n == 256) {
      EXPECT_LT(loops[0].first, 2 * loops[0].second) << "256 elements are shared among threads";
    } else {
      EXPECT_GE(loops[0].first, 8 * loops[0].second) << "4M elements are not shared among threads";
    }
  }
  // float16 elements cost a conversion each (not vectorized): fewer of them are worth sharing.
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    KernelGraph g;
    g.mark_output(g.unary(OpKind::kExp, g.new_input({8192}, dt)));
    const auto loops = shared_loops(codegen::cpu_source(serialize::make_kernel_program(g, 1)));
    ASSERT_EQ(loops.size(), 1u);
    EXPECT_EQ(loops[0].first >= 2 * loops[0].second, dt == DType::kFloat16) << dtype_name(dt);
  }
}

// The kernels run on the plugin's own threads: no OpenMP runtime (whose idle threads spin, and
// whose wait policy an embedding process fixes before yirage loads) is loaded to run them.
TEST(CpuPlugin, KernelsLoadNoOpenMPRuntime) {
  auto plugin = cpu_plugin();
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.new_input({int64_t{1} << 20}, DType::kFloat32)));
  Measurer measurer(*plugin, 0, g, MeasureOptions{});
  const Measurement m = measurer.measure(g, true);
  ASSERT_TRUE(m.correct) << m.error;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) EXPECT_EQ(line.find("libgomp"), std::string::npos) << line;
}

// YIRAGE_CPU_THREADS sets the plugin's thread count; the device says so, and its compute units
// (what the search's cost model divides work among) are as many.
TEST(CpuPlugin, DeviceSaysHowManyThreadsItUses) {
  setenv("YIRAGE_CPU_THREADS", "3", 1);
  auto plugin = cpu_plugin();
  const DeviceInfo d = plugin->device(0);
  unsetenv("YIRAGE_CPU_THREADS");
  EXPECT_EQ(d.target.compute_units, 3);
  EXPECT_NE(d.name.find("3 threads (YIRAGE_CPU_THREADS)"), std::string::npos) << d.name;
}

TEST(CpuPlugin, MeasurerRejectsAWrongCandidate) {
  auto plugin = cpu_plugin();
  KernelGraph reference, wrong;
  reference.mark_output(reference.unary(OpKind::kExp, reference.new_input({64}, DType::kFloat32)));
  wrong.mark_output(wrong.unary(OpKind::kSilu, wrong.new_input({64}, DType::kFloat32)));
  Measurer measurer(*plugin, 0, reference, MeasureOptions{});
  const Measurement m = measurer.measure(wrong);
  EXPECT_FALSE(m.correct);
  EXPECT_LT(m.median_seconds, 0);
  EXPECT_NE(m.error.find("relative error"), std::string::npos) << m.error;
  const Measurement ok = measurer.measure(reference);
  EXPECT_TRUE(ok.correct) << ok.error;
  EXPECT_GT(ok.median_seconds, 0);
  EXPECT_LE(ok.min_seconds, ok.median_seconds);
  EXPECT_GE(ok.max_seconds, ok.median_seconds) << "the spread of the timed runs";
  EXPECT_EQ(ok.samples, MeasureOptions{}.repeats);
}

// A graph whose float16 sum of exps overflows computes zeros after dividing by it: a finite
// error, and the check says why every time, for the graph itself and for a candidate of it. The
// sum of 70 000 exps near 1 overflows however narrow the inputs.
TEST(CpuPlugin, MeasurerExplainsAnOverflowBehindAFiniteError) {
  auto plugin = cpu_plugin();
  KernelGraph g;
  const TensorId e = g.unary(OpKind::kExp, g.new_input({2, 70000}, DType::kFloat16));
  g.mark_output(g.binary(OpKind::kDiv, e, g.reduction(OpKind::kReduction, e, 1)));
  Measurer measurer(*plugin, 0, g, MeasureOptions{});
  const Measurement itself = measurer.measure(g, false);
  ASSERT_FALSE(itself.correct);
  EXPECT_NE(itself.error.find("relative error"), std::string::npos) << itself.error;
  EXPECT_EQ(itself.error.find("relative error inf"), std::string::npos) << itself.error;
  EXPECT_NE(itself.error.find("the graph itself overflows float16 on inputs in [-0.015625, 0.015625]: t"),
            std::string::npos)
      << itself.error;
  EXPECT_NE(itself.error.find("= reduction("), std::string::npos) << itself.error;
  // The same computation written otherwise (the sum of exp(x) · 1): checked against g.
  KernelGraph other;
  const TensorId e2 = other.mul_scalar(other.unary(OpKind::kExp, other.new_input({2, 70000}, DType::kFloat16)), 1.0);
  other.mark_output(other.binary(OpKind::kDiv, e2, other.reduction(OpKind::kReduction, e2, 1)));
  const Measurement candidate = measurer.measure(other, false);
  ASSERT_FALSE(candidate.correct);
  EXPECT_NE(candidate.error.find("the graph it is checked against overflows float16"), std::string::npos)
      << candidate.error;
}

// exp(16 x) overflows float16 for x near 1 but not on [-1/2, 1/2]: the inputs are narrowed until
// the reference stays in range, so the graph (and a search's input graph) can be checked.
TEST(CpuPlugin, MeasurerNarrowsInputsWhereTheReferenceOverflows) {
  auto plugin = cpu_plugin();
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.mul_scalar(g.new_input({4, 64}, DType::kFloat16), 16.0)));
  Measurer measurer(*plugin, 0, g, MeasureOptions{});
  const Measurement m = measurer.measure(g, false);
  EXPECT_TRUE(m.correct) << m.error;
  KernelGraph wrong;  // still a check: exp(15 x) is not exp(16 x)
  wrong.mark_output(wrong.unary(OpKind::kExp, wrong.mul_scalar(wrong.new_input({4, 64}, DType::kFloat16), 15.0)));
  EXPECT_FALSE(measurer.measure(wrong, false).correct);
}

// The range checks (measure.hpp): a graph with an rms_norm is checked again with the inputs that
// reach its normalized operand scaled by 2^64 and 2^-76. An rms_norm spelled out as
// x / sqrt(Σ x² / n) stores x² in float32: right on [-1, 1], infinite or zero on those rows, so
// the check rejects it, and says on which inputs; the operator itself passes. The checks leave
// out what they cannot judge: graphs without rms_norm, float16 inputs (their squares fit
// float32), and factors where the reference itself leaves its dtype (here (2x)², beyond float32
// at 2^64 and below its normal range at 2^-76).
TEST(CpuPlugin, MeasurerChecksNormsOnRowsNearTheRangeLimits) {
  auto plugin = cpu_plugin();
  const Dims dims = {5, 33};
  KernelGraph norm;  // one builder call per statement: the order of inputs is the graph's
  const TensorId x = norm.new_input(dims, DType::kFloat32), b = norm.new_input({1, 33}, DType::kFloat32);
  norm.mark_output(norm.rms_norm(norm.binary(OpKind::kAdd, x, b), {33}, 0.0, std::nullopt));
  KernelGraph spelled;
  const TensorId x2 = spelled.new_input(dims, DType::kFloat32), b2 = spelled.new_input({1, 33}, DType::kFloat32);
  const TensorId y = spelled.binary(OpKind::kAdd, x2, b2);
  const TensorId mean =
      spelled.mul_scalar(spelled.reduction(OpKind::kReduction, spelled.unary(OpKind::kSquare, y), 1), 1.0 / 33);
  spelled.mark_output(spelled.binary(OpKind::kDiv, y, spelled.unary(OpKind::kSqrt, mean)));
  Measurer measurer(*plugin, 0, norm, MeasureOptions{});
  const Measurement ok = measurer.measure(norm, false);
  EXPECT_TRUE(ok.correct) << ok.error;
  EXPECT_EQ(ok.range_checks, 2);
  const Measurement wrong = measurer.measure(spelled, false);
  EXPECT_FALSE(wrong.correct);
  EXPECT_NE(wrong.error.find("on inputs 0, 1 scaled by 2^64"), std::string::npos) << wrong.error;
  MeasureOptions off;
  off.range_checks = false;
  Measurer unchecked(*plugin, 0, norm, off);
  const Measurement plain = unchecked.measure(spelled, false);
  EXPECT_TRUE(plain.correct) << "on [-1, 1] the spelled-out norm is right: " << plain.error;
  EXPECT_EQ(plain.range_checks, 0);

  // Not scaled: no norm, a float16 norm, an input squared beside its norm, a norm no output
  // depends on, an input that also feeds a softmax (scaled by 2^64, one-hot on rounding).
  KernelGraph no_norm, half, squares, dead_norm, shared;
  no_norm.mark_output(no_norm.unary(OpKind::kExp, no_norm.new_input(dims, DType::kFloat32)));
  const TensorId d = dead_norm.new_input(dims, DType::kFloat32);
  dead_norm.rms_norm(d, {33}, 0.0, std::nullopt);
  dead_norm.mark_output(dead_norm.softmax(d, 1));
  const TensorId sx = shared.new_input(dims, DType::kFloat32);
  shared.mark_output(shared.rms_norm(sx, {33}, 0.0, std::nullopt));
  shared.mark_output(shared.softmax(sx, 1));
  half.mark_output(half.rms_norm(half.new_input(dims, DType::kFloat16), {33}, 0.0, std::nullopt));
  const TensorId z = squares.new_input(dims, DType::kFloat32);
  squares.mark_output(squares.rms_norm(z, {33}, 0.0, std::nullopt));
  squares.mark_output(squares.unary(OpKind::kSquare, squares.mul_scalar(z, 2.0)));
  for (const KernelGraph *g : {&no_norm, &half, &squares, &dead_norm, &shared}) {
    Measurer m(*plugin, 0, *g, MeasureOptions{});
    const Measurement result = m.measure(*g, false);
    EXPECT_TRUE(result.correct) << result.error;
    EXPECT_EQ(result.range_checks, 0);
  }
}

// (x·64 + x) − x·64 in float16 is x plus the rounding of the sum (up to 65: steps of 2^-5): a
// relative error of 0.0125 that any backend storing the sum in float16 gives, above float16's
// tolerance (5e-3). The check allows twice what storage alone gives (measure.hpp): the graph
// itself passes, a candidate 5% off does not and is told why; with x·1024 storage alone gives
// 0.19, and even the graph itself is refused, saying so.
TEST(CpuPlugin, MeasurerAllowsWhatStorageInTheDtypeAloneGives) {
  auto plugin = cpu_plugin();
  const auto cancelling = [](double big, double scale) {
    KernelGraph g;
    const TensorId x = g.new_input({8, 256}, DType::kFloat16);
    const TensorId y = g.mul_scalar(x, big);
    g.mark_output(g.mul_scalar(g.binary(OpKind::kSub, g.binary(OpKind::kAdd, y, x), y), scale));
    return g;
  };
  const KernelGraph g = cancelling(64, 1);
  Measurer measurer(*plugin, 0, g, MeasureOptions{});
  const Measurement itself = measurer.measure(g, false);
  EXPECT_TRUE(itself.correct) << itself.error;
  EXPECT_GT(itself.max_relative_error, relative_tolerance(DType::kFloat16));
  const Measurement off = measurer.measure(cancelling(64, 1.05), false);
  ASSERT_FALSE(off.correct);
  EXPECT_NE(off.error.find("the error that storing the reference graph's tensors in float16 alone gives"),
            std::string::npos)
      << off.error;
  KernelGraph exact;  // x itself: within float16's own tolerance
  exact.mark_output(exact.mul_scalar(exact.new_input({8, 256}, DType::kFloat16), 1.0));
  EXPECT_TRUE(measurer.measure(exact, false).correct);
  const KernelGraph coarse = cancelling(1024, 1);
  Measurer coarse_measurer(*plugin, 0, coarse, MeasureOptions{});
  const Measurement refused = coarse_measurer.measure(coarse, false);
  ASSERT_FALSE(refused.correct);
  EXPECT_NE(refused.error.find("its result is mostly rounding there"), std::string::npos) << refused.error;
}

// flush_bytes: a kernel through the plugin before every timed run, outside the timed span; where
// it cannot be built (here its buffers cannot be allocated), every timed measurement fails with
// its error and nothing is timed warm instead.
TEST(CpuPlugin, MeasurerFlushesBeforeEachTimedRun) {
  auto plugin = cpu_plugin();
  KernelGraph graph;
  graph.mark_output(graph.unary(OpKind::kExp, graph.new_input({64}, DType::kFloat32)));
  MeasureOptions options;
  options.repeats = 5;
  options.flush_bytes = 1 << 20;
  Measurer measurer(*plugin, 0, graph, options);
  EXPECT_TRUE(measurer.measure(graph, false).correct);
  EXPECT_EQ(measurer.flushes(), 0) << "an untimed check flushes nothing";
  const Measurement m = measurer.measure(graph);
  EXPECT_TRUE(m.correct) << m.error;
  EXPECT_GT(m.median_seconds, 0);
  EXPECT_EQ(measurer.flushes(), 5);

  options.flush_bytes = int64_t{1} << 50;
  Measurer too_big(*plugin, 0, graph, options);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const Measurement failed = too_big.measure(graph);
    EXPECT_FALSE(failed.correct);
    EXPECT_LT(failed.median_seconds, 0);
    EXPECT_EQ(failed.error.rfind("cache flush: ", 0), 0u) << failed.error;
  }
  EXPECT_EQ(too_big.flushes(), 0);
}

TEST(CpuPlugin, KernelCacheHitMissAndCorruption) {
  const std::string cache = test_cache_dir("cache-test");
  fs::remove_all(cache);
  auto plugin = cpu_plugin(cache);
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kGelu, g.new_input({5, 3}, DType::kFloat32)));
  auto objects = [&] {
    std::vector<fs::path> found;
    for (const auto &e : fs::directory_iterator(cache + "/cpu")) {
      if (e.path().extension() == ".so") found.push_back(e.path());
    }
    return found;
  };
  expect_correct(*plugin, g, "miss");
  ASSERT_EQ(objects().size(), 1u);
  const fs::path object = objects()[0];
  const auto written = fs::last_write_time(object);
  expect_correct(*plugin, g, "hit");
  EXPECT_EQ(fs::last_write_time(object), written);     // loaded, not rebuilt
  fs::resize_file(object, fs::file_size(object) / 3);  // a truncated object
  expect_correct(*plugin, g, "truncated");
  std::ofstream(object, std::ios::trunc) << "garbage";  // an overwritten one
  expect_correct(*plugin, g, "garbage");
  EXPECT_GT(fs::file_size(object), 1000u);
  EXPECT_EQ(objects().size(), 1u);
}

// check_buildable asks supports() of every kernel and passes on the backend's refusal.
TEST(CpuPlugin, SaysWhetherItCanBuildAGraph) {
  auto plugin = cpu_plugin();
  KernelGraph g;
  const TensorId x = g.new_input({8}, DType::kFloat32);
  g.mark_output(g.unary(OpKind::kExp, g.unary(OpKind::kExp, x)));
  check_buildable(*plugin, 0, g);
  try {
    check_buildable(*plugin, 3, g);
    ADD_FAILURE() << "device 3 accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("supports"), std::string::npos) << e.what();
  }
}

// The backend's loop waits (yirage_backend_api::estimate, optional): none from a plugin without
// the entry; a plugin's failure is a backend error; answers outside -1 and 1 to the range are
// refused.
// A search profiled on a plugin with an estimate entry ranks with its estimates and keys the
// ranking by the plugin's build (measured_by: its file too), so that a rebuilt plugin's ranking
// is another cache request.
TEST(PluginLoading, KeysRankingsWithAPluginsEstimatesByItsBuild) {
  auto plugin = Plugin::load(YIRAGE_TEST_PLUGIN_ONE_DEVICE, "");
  ASSERT_NE(plugin->estimate_entry(), nullptr);
  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.new_input({8, 64}, DType::kFloat32)));
  search::SearchOptions o;
  profiling::profile_on_device(o, *plugin, 0, g, MeasureOptions{});
  EXPECT_TRUE(o.backend_estimates);
  EXPECT_EQ(o.backend_estimates_source, profiling::measured_by(*plugin, 0));
  EXPECT_NE(o.backend_estimates_source.find(plugin->path()), std::string::npos) << o.backend_estimates_source;
}

TEST(PluginLoading, AsksTheBackendForItsEstimateWhereItHasAnEntry) {
  const KernelGraph fused = bench::build_fused("gated_mlp", 1, DType::kFloat16, 16);
  const size_t op = fused.operators().size() - 1;
  ASSERT_EQ(fused.operators()[op].kind, OpKind::kCustomized);
  auto cpu = cpu_plugin();
  EXPECT_EQ(cpu->estimate_entry(), nullptr);
  const serialize::KernelProgram program = serialize::make_kernel_program(fused, op);
  const yirage_backend_kernel_estimate none = backend_estimate(*cpu, 0, program);
  EXPECT_EQ(none.loop_waits, -1);
  EXPECT_EQ(none.shared_memory_seconds, -1);
  EXPECT_EQ(none.dependent_launch_seconds, -1);
  EXPECT_EQ(none.max_resident_blocks, -1);
  EXPECT_EQ(none.whole_product, -1);
  auto fake = Plugin::load(YIRAGE_TEST_PLUGIN_NO_DEVICE, "");
  ASSERT_NE(fake->estimate_entry(), nullptr);
  try {
    backend_estimate(*fake, 0, program);
    ADD_FAILURE() << "a plugin without devices estimated";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kBackend);
    EXPECT_NE(std::string(e.what()).find("estimate: fake: no device"), std::string::npos) << e.what();
  }
  EXPECT_EQ(profiling::checked_loop_waits("p", -1, 32), std::nullopt);
  EXPECT_EQ(profiling::checked_loop_waits("p", 1, 32), 1);
  EXPECT_EQ(profiling::checked_loop_waits("p", 32, 32), 32);
  // Past the range only from a plugin of ABI 1.5 or newer: the waits of tiles read once.
  EXPECT_EQ(profiling::checked_loop_waits("p", 35, 32, YIRAGE_BACKEND_MAX_READ_ONCE_WAITS), 35);
  for (auto [bad, beyond] : {std::pair<int64_t, int64_t>{0, 0}, {-2, 0}, {33, 0}, {0, 1024}, {32 + 1025, 1024}}) {
    try {
      profiling::checked_loop_waits("p", bad, 32, beyond);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::kBackend);
      EXPECT_NE(std::string(e.what()).find("p estimate: loop_waits " + std::to_string(bad)), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(profiling::checked_seconds("p", "shared_memory_seconds", -1), std::nullopt);
  EXPECT_EQ(profiling::checked_seconds("p", "shared_memory_seconds", 0), 0);
  EXPECT_EQ(profiling::checked_seconds("p", "shared_memory_seconds", 2e-6), 2e-6);
  for (double bad : {-0.5, 1.5, std::nan(""), static_cast<double>(INFINITY)}) {
    try {
      profiling::checked_seconds("p", "shared_memory_seconds", bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::kBackend);
      EXPECT_NE(std::string(e.what()).find("p estimate: shared_memory_seconds"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(profiling::checked_resident_blocks("p", -1), std::nullopt);
  EXPECT_EQ(profiling::checked_resident_blocks("p", 1), 1);
  for (int64_t bad : {int64_t{0}, int64_t{-2}, profiling::kMaxResidentBlocks + 1}) {
    try {
      profiling::checked_resident_blocks("p", bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::kBackend);
      EXPECT_NE(std::string(e.what()).find("p estimate: max_resident_blocks " + std::to_string(bad)), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(profiling::checked_whole_product("p", -1), std::nullopt);
  EXPECT_EQ(profiling::checked_whole_product("p", 0), false);
  EXPECT_EQ(profiling::checked_whole_product("p", 1), true);
  for (int64_t bad : {int64_t{2}, int64_t{-2}, int64_t{77}}) {
    try {
      profiling::checked_whole_product("p", bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::kBackend);
      EXPECT_NE(std::string(e.what()).find("p estimate: whole_product " + std::to_string(bad)), std::string::npos)
          << e.what();
    }
  }
  // What the search hears: the program of the candidate's operator; nothing for a refusal.
  const search::BackendEstimates refusing =
      profiling::estimates_from("p", [](const serialize::KernelProgram &) -> yirage_backend_kernel_estimate {
        throw Error(ErrorCode::kUnsupported, "too large");
      });
  EXPECT_EQ(refusing(fused, op).loop_waits, std::nullopt);
  EXPECT_EQ(refusing(fused, op).shared_memory_seconds, std::nullopt);
  const search::BackendEstimates counting = profiling::estimates_from("p", [&](const serialize::KernelProgram &p) {
    EXPECT_EQ(serialize::kernel_program_to_bytes(p), serialize::kernel_program_to_bytes(program));
    yirage_backend_kernel_estimate e{};
    e.loop_waits = 1;
    e.shared_memory_seconds = 3e-6;
    e.dependent_launch_seconds = -1;
    e.max_resident_blocks = 2;
    e.whole_product = 1;
    return e;
  });
  EXPECT_EQ(counting(fused, op).loop_waits, 1);
  EXPECT_EQ(counting(fused, op).whole_product, true);
  EXPECT_EQ(counting(fused, op).max_resident_blocks, 2);
  EXPECT_EQ(counting(fused, op).shared_memory_seconds, 3e-6);
  EXPECT_EQ(counting(fused, op).dependent_launch_seconds, std::nullopt);
  // A plugin's fault in any field is the backend's error.
  const search::BackendEstimates faulty = profiling::estimates_from("p", [](const serialize::KernelProgram &) {
    yirage_backend_kernel_estimate e{};
    e.loop_waits = -1;
    e.shared_memory_seconds = -1;
    e.dependent_launch_seconds = 2;
    e.max_resident_blocks = -1;
    return e;
  });
  try {
    faulty(fused, op);
    ADD_FAILURE() << "a dependent launch of 2 s accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kBackend);
    EXPECT_NE(std::string(e.what()).find("p estimate: dependent_launch_seconds 2"), std::string::npos) << e.what();
  }
}

// Outputs may not share memory with inputs or with each other (a kernel reads and writes them
// in no defined order); the check runs before anything is launched.
// A reshape that is not a graph output launches nothing: its result is its input's buffer (a
// graph input's, an intermediate's, a graph output's); one that is an output is copied into it.
TEST(CpuPlugin, ReshapesAliasTheirInput) {
  auto plugin = cpu_plugin();
  KernelGraph g;
  const TensorId x = g.new_input({4, 6}, DType::kFloat32);
  const TensorId e = g.unary(OpKind::kExp, x);
  g.mark_output(e);
  const TensorId heads = g.permute(g.reshape(x, {4, 2, 3}), {1, 0, 2});               // input's buffer
  g.mark_output(g.unary(OpKind::kNeg, g.reshape(g.reshape(heads, {8, 3}), {3, 8})));  // chained
  g.mark_output(g.binary(OpKind::kAdd, g.reshape(e, {6, 4}), g.reshape(x, {6, 4})));  // an output's
  g.mark_output(g.reshape(g.unary(OpKind::kRelu, x), {24}));                          // copied
  const CompiledGraph compiled(*plugin, 0, g);
  EXPECT_EQ(compiled.stats().kernels, 6);  // exp, permute, neg, add, relu, the last reshape
  expect_correct(*plugin, g, "aliased reshapes");
}

// Operators marked to run as one program (launch_with_next) run as one on the CPU plugin (plugin
// ABI 1.4: one parallel region), with the same results; a view that aliases its input breaks the
// run, whose operators then run apart. The marks leave the programs each operator gets alone as
// they were (schema version 1, no mark).
TEST(CpuPlugin, RunsOperatorsMarkedAsOneProgramAsOne) {
  auto plugin = cpu_plugin();
  EXPECT_TRUE(plugin->takes_operator_groups(0));
  KernelGraph g;
  const TensorId x = g.new_input({64, 300}, DType::kFloat32);
  const TensorId e = g.unary(OpKind::kExp, x);
  g.mark_output(g.binary(OpKind::kMul, g.unary(OpKind::kNeg, e), x));
  const std::optional<KernelGraph> grouped = runtime::with_operator_groups(*plugin, 0, g);
  ASSERT_TRUE(grouped.has_value());
  EXPECT_TRUE(grouped->operators()[1].attributes.launch_with_next);
  EXPECT_TRUE(grouped->operators()[2].attributes.launch_with_next);
  EXPECT_FALSE(grouped->operators()[3].attributes.launch_with_next);
  const CompiledGraph compiled(*plugin, 0, *grouped);
  EXPECT_EQ(compiled.stats().kernels, 1);
  EXPECT_EQ(compiled.stats().grouped_operators, 3);
  EXPECT_EQ(compiled.launch_plan(),
            "1 launch a run on cpu device 0:\n  launch 1: operators 1 (exp), 2 (neg), 3 (mul) as one program\n");
  EXPECT_NE(CompiledGraph(*plugin, 0, g).launch_plan().find("  launch 3: operator 3 (mul)\nruns on one stream"),
            std::string::npos);
  expect_correct(*plugin, *grouped, "operators marked as one program");
  EXPECT_EQ(serialize::kernel_program_to_bytes(serialize::make_kernel_program(*grouped, 2)),
            serialize::kernel_program_to_bytes(serialize::make_kernel_program(g, 2)));

  // A longer run: programs of at most kMaxGroupOperators.
  KernelGraph chain;
  TensorId y = chain.new_input({4, 6}, DType::kFloat32);
  for (int i = 0; i < 20; ++i) y = chain.unary(OpKind::kNeg, y);
  chain.mark_output(y);
  const std::optional<KernelGraph> chained = runtime::with_operator_groups(*plugin, 0, chain);
  ASSERT_TRUE(chained.has_value());
  std::vector<size_t> unmarked;
  for (size_t i = 1; i <= 20; ++i) {
    if (!chained->operators()[i].attributes.launch_with_next) unmarked.push_back(i);
  }
  EXPECT_EQ(unmarked, (std::vector<size_t>{runtime::kMaxGroupOperators, 20}));
  for (size_t i = 1; i < 20; ++i) chain.set_launch_with_next(i, true);  // one run of 20 marked
  const CompiledGraph cut(*plugin, 0, chain);
  EXPECT_EQ(cut.stats().kernels, 2);
  EXPECT_EQ(cut.stats().grouped_operators, 20);
  EXPECT_NE(cut.launch_plan().find("  launch 2: operators 17 (neg), 18 (neg), 19 (neg), 20 (neg) as one program\n"),
            std::string::npos)
      << cut.launch_plan();
  expect_correct(*plugin, chain, "a run of 20 operators marked as one program");

  KernelGraph viewed;
  const TensorId r = viewed.reshape(viewed.unary(OpKind::kExp, viewed.new_input({4, 6}, DType::kFloat32)), {6, 4});
  viewed.mark_output(viewed.unary(OpKind::kNeg, r));
  viewed.set_launch_with_next(1, true);
  viewed.set_launch_with_next(2, true);
  const CompiledGraph apart(*plugin, 0, viewed);
  EXPECT_EQ(apart.stats().kernels, 2);  // exp, neg: the reshape aliases exp's result
  EXPECT_EQ(apart.stats().grouped_operators, 0);
  expect_correct(*plugin, viewed, "operators marked as one program around an aliasing view");
}

// The profiler measures a candidate's grouped form only where the launches it saves (one per
// operator marked to run with the next, the target's launch overhead each) are at least a
// twentieth of the time the candidate took apart, and could make it the fastest so far.
TEST(Profiling, MeasuresGroupedFormsWhereLaunchesMatter) {
  KernelGraph g;
  const TensorId e = g.unary(OpKind::kExp, g.new_input({4, 6}, DType::kFloat32));
  g.mark_output(g.unary(OpKind::kExp, g.unary(OpKind::kNeg, e)));
  EXPECT_EQ(profiling::launches_saved(g), 0);
  g.set_launch_with_next(1, true);
  EXPECT_EQ(profiling::launches_saved(g), 1);
  g.set_launch_with_next(2, true);
  EXPECT_EQ(profiling::launches_saved(g), 2);
  const double none = INFINITY;                                   // nothing measured before
  EXPECT_TRUE(profiling::worth_grouping(2, 100e-6, 5e-6, none));  // one launch saved
  EXPECT_FALSE(profiling::worth_grouping(2, 101e-6, 5e-6, none));
  EXPECT_TRUE(profiling::worth_grouping(3, 200e-6, 5e-6, none));  // two
  EXPECT_FALSE(profiling::worth_grouping(3, 201e-6, 5e-6, none));
  EXPECT_FALSE(profiling::worth_grouping(1, 1e-9, 5e-6, none));  // nothing to save
  // Only where it could beat the fastest candidate measured before it: 50 µs less 10 µs saved.
  EXPECT_TRUE(profiling::worth_grouping(3, 50e-6, 5e-6, 40.5e-6));
  EXPECT_FALSE(profiling::worth_grouping(3, 50e-6, 5e-6, 40e-6));
}

// A graph of several kernels run twice on one buffer set is recorded and replayed from then on
// (plugin ABI 1.3); a replay reads the buffers' contents as they are then, and other buffers get
// launches (then a recording) of their own. YIRAGE_RECORDINGS=0 records nothing.
TEST(CpuPlugin, RecordsAGraphRunTwiceOnTheSameBuffers) {
  auto plugin = cpu_plugin();
  ASSERT_TRUE(plugin->records());
  KernelGraph g;
  const TensorId x = g.new_input({4, 8}, DType::kFloat32);
  g.mark_output(g.binary(OpKind::kAdd, g.unary(OpKind::kExp, x), x));  // two kernels
  int64_t shape[] = {4, 8};
  auto tensor = [&](std::vector<float> &memory) {
    DLTensor t{};
    t.data = memory.data();
    t.device = {kDLCPU, 0};
    t.ndim = 2;
    t.dtype = dtype_to_dlpack(DType::kFloat32);
    t.shape = shape;
    return t;
  };
  std::vector<float> x_a(32, 0.5f), y_a(32), x_b(32, 1.0f), y_b(32);
  const DLTensor in_a = tensor(x_a), out_a = tensor(y_a), in_b = tensor(x_b), out_b = tensor(y_b);
  const CompiledGraph compiled(*plugin, 0, g);
  ASSERT_EQ(compiled.stats().kernels, 2);
  auto run = [&](const DLTensor &in, const DLTensor &out, std::vector<float> &y, float value) {
    std::fill(y.begin(), y.end(), -1.0f);  // poisoned
    compiled.run({&in}, {&out}, nullptr);
    for (float v : y) ASSERT_FLOAT_EQ(v, std::exp(value) + value);
  };
  run(in_a, out_a, y_a, 0.5f);
  EXPECT_EQ(compiled.recordings(), 0u);
  run(in_a, out_a, y_a, 0.5f);  // recorded, then replayed
  EXPECT_EQ(compiled.recordings(), 1u);
  std::fill(x_a.begin(), x_a.end(), 0.25f);
  run(in_a, out_a, y_a, 0.25f);  // replayed on the new contents
  run(in_b, out_b, y_b, 1.0f);   // other buffers: launched
  for (float v : y_a) ASSERT_FLOAT_EQ(v, std::exp(0.25f) + 0.25f);
  EXPECT_EQ(compiled.recordings(), 1u);
  run(in_b, out_b, y_b, 1.0f);
  EXPECT_EQ(compiled.recordings(), 2u);
  run(in_a, out_a, y_a, 0.25f);

  setenv("YIRAGE_RECORDINGS", "0", 1);
  const CompiledGraph unrecorded(*plugin, 0, g);
  unsetenv("YIRAGE_RECORDINGS");
  for (int i = 0; i < 3; ++i) unrecorded.run({&in_b}, {&out_b}, nullptr);
  EXPECT_EQ(unrecorded.recordings(), 0u);
  // One kernel: nothing to record.
  KernelGraph one;
  one.mark_output(one.unary(OpKind::kExp, one.new_input({4, 8}, DType::kFloat32)));
  const CompiledGraph single(*plugin, 0, one);
  for (int i = 0; i < 3; ++i) single.run({&in_b}, {&out_b}, nullptr);
  EXPECT_EQ(single.recordings(), 0u);
}

TEST(CpuPlugin, RunRefusesOutputsThatShareMemory) {
  auto plugin = cpu_plugin();
  KernelGraph g;
  const TensorId x = g.new_input({4, 8}, DType::kFloat32);
  g.mark_output(g.unary(OpKind::kExp, x));
  g.mark_output(g.unary(OpKind::kRelu, x));
  const CompiledGraph compiled(*plugin, 0, g);
  std::vector<float> memory(4 * 8 * 3, 0.5f);
  int64_t shape[] = {4, 8};
  auto tensor = [&](size_t offset) {
    DLTensor t{};
    t.data = memory.data() + offset;
    t.device = {kDLCPU, 0};
    t.ndim = 2;
    t.dtype = dtype_to_dlpack(DType::kFloat32);
    t.shape = shape;
    return t;
  };
  const DLTensor in = tensor(0), a = tensor(32), b = tensor(64), b_over_a = tensor(40);
  auto message = [&](const DLTensor &first, const DLTensor &second) -> std::string {
    try {
      compiled.run({&in}, {&first, &second}, nullptr);
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message(a, b_over_a).find("output 1 overlaps output 0"), std::string::npos);
  EXPECT_NE(message(a, a).find("output 1 overlaps output 0"), std::string::npos);
  EXPECT_NE(message(a, in).find("output 1 overlaps input 0"), std::string::npos);
  EXPECT_EQ(memory[40], 0.5f) << "nothing ran";
  EXPECT_EQ(message(a, b), "");
  EXPECT_FLOAT_EQ(memory[32], std::exp(0.5f));
  EXPECT_FLOAT_EQ(memory[64], 0.5f);
}

TEST(CpuPlugin, RefusesBadProgramsAndLaunches) {
  auto plugin = cpu_plugin();
  const yirage_backend_api &api = plugin->api();
  yirage_backend_error error{};
  error.struct_size = sizeof error;
  yirage_backend_executable *exe = nullptr;
  const char junk[] = "definitely not a kernel program";
  EXPECT_EQ(api.compile(plugin->instance(), 0, junk, sizeof junk, nullptr, &exe, &error), YIRAGE_ERROR_CORRUPT_DATA);
  EXPECT_EQ(exe, nullptr);
  EXPECT_NE(std::string(error.message).find("kernel program"), std::string::npos);

  KernelGraph g;
  g.mark_output(g.unary(OpKind::kExp, g.new_input({8}, DType::kFloat32)));
  const auto program = serialize::kernel_program_to_bytes(serialize::make_kernel_program(g, 1));
  EXPECT_EQ(api.compile(plugin->instance(), 3, program.data(), program.size(), nullptr, &exe, &error),
            YIRAGE_ERROR_INVALID_ARGUMENT);
  // Truncations of a valid program are refused, never crash.
  for (size_t n = 0; n < program.size(); n += 7) {
    EXPECT_NE(api.supports(plugin->instance(), 0, program.data(), n, &error), YIRAGE_OK) << n;
  }
  ASSERT_EQ(api.compile(plugin->instance(), 0, program.data(), program.size(), nullptr, &exe, &error), YIRAGE_OK)
      << error.message;
  Buffer small = allocate_buffer(*plugin, 0, 16), big = allocate_buffer(*plugin, 0, 32);
  yirage_backend_buffer *in[] = {big.get()}, *out[] = {small.get()};
  EXPECT_EQ(api.launch(exe, nullptr, in, 1, out, 1, &error), YIRAGE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("needs 32"), std::string::npos) << error.message;
  EXPECT_EQ(api.launch(exe, nullptr, in, 0, out, 1, &error), YIRAGE_ERROR_INVALID_ARGUMENT);
  out[0] = big.get();
  EXPECT_EQ(api.launch(exe, nullptr, in, 1, out, 1, &error), YIRAGE_OK) << error.message;
  api.executable_release(exe);
  api.executable_release(nullptr);
  api.buffer_release(nullptr);
}

}  // namespace
}  // namespace yirage::runtime
