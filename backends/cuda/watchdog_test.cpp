// The persistent kernel's watchdog on a GPU (codegen/cuda_persistent.hpp, watch_records.hpp): a
// launch whose wait for a tile never ends is abandoned after YIRAGE_CUDA_WAIT_TIMEOUT_MS and
// reported by synchronize() as a timeout naming the kernel program, not a hang of this process;
// the device stays usable. YIRAGE_CUDA_TEST_HANG=1 plants the wait no launch satisfies. Without
// a CUDA device the test is skipped, and says so.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmark_ugraphs.hpp"
#include "runtime/plugin.hpp"
#include "serialize/kernel_program.hpp"

namespace yirage {
namespace {

struct Launched {
  yirage_status status = YIRAGE_OK;
  std::string message;
  double seconds = 0;
};

// Compiles `program` on device 0 and launches it `runs` times, each followed by synchronize().
std::vector<Launched> launch(const runtime::Plugin &plugin, const serialize::KernelProgram &program, int runs) {
  const yirage_backend_api &api = plugin.api();
  const std::vector<uint8_t> bytes = serialize::kernel_program_to_bytes(program);
  yirage_backend_executable *executable = nullptr;
  plugin.call("compile", api.compile, plugin.instance(), 0, static_cast<const void *>(bytes.data()), bytes.size(),
              static_cast<const yirage_backend_compile_options *>(nullptr), &executable);
  std::vector<yirage_backend_buffer *> inputs, outputs;
  for (size_t size : program.input_bytes()) {
    inputs.push_back(nullptr);
    plugin.call("buffer_alloc", api.buffer_alloc, plugin.instance(), 0, size, &inputs.back());
  }
  for (size_t size : program.output_bytes()) {
    outputs.push_back(nullptr);
    plugin.call("buffer_alloc", api.buffer_alloc, plugin.instance(), 0, size, &outputs.back());
  }
  std::vector<Launched> launched;
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    plugin.call("launch", api.launch, executable, static_cast<void *>(nullptr),
                static_cast<yirage_backend_buffer *const *>(inputs.data()), inputs.size(),
                static_cast<yirage_backend_buffer *const *>(outputs.data()), outputs.size());
    yirage_backend_error error{};
    error.struct_size = sizeof error;
    Launched l;
    l.status = api.synchronize(plugin.instance(), 0, nullptr, &error);
    l.message = error.message;
    l.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    launched.push_back(l);
  }
  for (yirage_backend_buffer *b : inputs) api.buffer_release(b);
  for (yirage_backend_buffer *b : outputs) api.buffer_release(b);
  api.executable_release(executable);
  return launched;
}

serialize::KernelProgram chain_program(DType dtype) {
  const KernelGraph chain = bench::build_ugraph_chain(true, dtype);
  return serialize::make_group_program(chain, serialize::kernel_operators(chain)).program;
}

TEST(CudaWatchdog, AHungDependencyIsReportedNotAHang) {
  setenv("YIRAGE_CUDA_TEST_HANG", "1", 1);
  setenv("YIRAGE_CUDA_WAIT_TIMEOUT_MS", "200", 1);
  char cache[] = "/tmp/yirage-watchdog-XXXXXX";
  ASSERT_NE(mkdtemp(cache), nullptr);
  // YIRAGE_TEST_CUDA_PLUGIN: the plugin elsewhere than where it was built (a bundle on a GPU machine).
  const char *path = std::getenv("YIRAGE_TEST_CUDA_PLUGIN");
  const std::unique_ptr<runtime::Plugin> plugin =
      runtime::Plugin::load(path != nullptr ? path : YIRAGE_CUDA_PLUGIN, cache);
  if (plugin->device_count() == 0) {
    GTEST_SKIP() << "no CUDA device here, the watchdog was not run: " << plugin->unavailable_reason();
  }
  const serialize::KernelProgram hung = chain_program(DType::kFloat16);
  for (const Launched &l : launch(*plugin, hung, 3)) {  // the kernel readies its workspace each time
    EXPECT_EQ(l.status, YIRAGE_ERROR_TIMEOUT) << l.message;
    EXPECT_NE(l.message.find("kernel program \"" + hung.name + "\""), std::string::npos) << l.message;
    // The first wait to time out is reported: the planted one (operator 1's for operator 0), or
    // operator 2's for operator 1's tiles, which wait on it.
    const bool planted = l.message.find("a block of operator 1 (task ") != std::string::npos &&
                         l.message.find("waited more than 200 ms for the blocks of operator 0;") != std::string::npos;
    const bool behind = l.message.find("a block of operator 2 (task ") != std::string::npos &&
                        l.message.find("of operator 1;") != std::string::npos;
    EXPECT_TRUE(planted || behind) << l.message;
    EXPECT_LT(l.seconds, 5.0) << "the abandoned launch took " << l.seconds << " s";
  }
  // The device is still usable: the same chain without the planted wait (another dtype, so
  // another program) runs and synchronizes cleanly, launch after launch.
  unsetenv("YIRAGE_CUDA_TEST_HANG");
  for (const Launched &l : launch(*plugin, chain_program(DType::kFloat32), 3)) {
    EXPECT_EQ(l.status, YIRAGE_OK) << l.message;
  }
}

}  // namespace
}  // namespace yirage
