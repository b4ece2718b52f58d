// The Level Zero compile path without a GPU: every kernel kind of the conformance suite
// (common/testing/kernel_kinds.hpp), generated as the plugin generates it for an Intel GPU and
// compiled to SPIR-V by the plugin's own compiler (spirv_compiler.hpp, cached where the
// conformance tests keep kernels), must be SPIR-V that `spirv-val --target-env opencl2.0` accepts,
// and Intel's offline compiler `ocloc` (Debian: intel-opencl-icd) must turn it into GPU code for
// Data Center GPU Max (pvc) and Arc (dg2). ocloc gets every kernel in one module (the sources
// concatenated, each kernel renamed), one run per GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/testing/kernel_kinds.hpp"
#include "opencl/codegen/opencl_source.hpp"
#include "spirv_compiler.hpp"
#include "util/error.hpp"
#include "util/file_cache.hpp"
#include "util/subprocess.hpp"

namespace yirage::level_zero {
namespace {

// An Intel GPU as the plugin describes one to the generator: `local_bytes` of shared local memory
// (Data Center GPU Max has 128 KiB, Arc 64; 0 for no limit), work-groups of up to 1024, and the
// EU count Intel's OpenCL reports as compute units (512 on an Arc A770).
codegen::OpenclTarget intel_gpu(int64_t local_bytes) {
  codegen::OpenclTarget target;
  target.max_local_bytes = local_bytes;
  target.max_work_group = 1024;
  target.compute_units = 512;
  target.cpu = false;
  return target;
}

struct Kernel {
  std::string name;  // the kind, dtype and operator
  std::string source;
};

struct Kernels {
  std::vector<Kernel> kernels;
  std::vector<std::string> unsupported;  // kinds the generator refused, with its reason
  codegen::OpenclTarget target;
};

// Every kind, generated for a GPU of `local_bytes` of shared local memory (0: no limit).
Kernels generate(int64_t local_bytes) {
  Kernels out;
  out.target = intel_gpu(local_bytes);
  std::vector<testing::KernelKind> kinds = testing::conformance_kernel_kinds();
  for (testing::KernelKind &ragged : testing::ragged_kernel_kinds()) kinds.push_back(std::move(ragged));
  for (const testing::KernelKind &kind : kinds) {
    try {
      out.kernels.push_back({kind.name, codegen::opencl_source(kind.program, out.target).source});
    } catch (const Error &e) {
      if (e.code() != ErrorCode::kUnsupported) throw;
      out.unsupported.push_back(kind.name + ": " + e.what());
    }
  }
  return out;
}

const Kernels &kernels_for(int64_t local_bytes) {
  static std::map<int64_t, Kernels> generated;
  auto found = generated.find(local_bytes);
  if (found == generated.end()) found = generated.emplace(local_bytes, generate(local_bytes)).first;
  return found->second;
}

// Where the modules go: the kernel cache the conformance tests share, else a temporary folder.
std::string cache_dir() {
  const char *shared = std::getenv("YIRAGE_TEST_KERNEL_CACHE");
  if (shared != nullptr && *shared != '\0') return std::string(shared) + "/level_zero";
  return std::filesystem::temp_directory_path() / "yirage-level-zero-spirv-test";
}

// A folder for this run's files, removed at exit.
const std::string &work_dir() {
  static const struct Folder {
    std::string path = std::filesystem::temp_directory_path() / ("yirage-level-zero-spirv-" + util::unique_suffix());
    Folder() { std::filesystem::create_directories(path); }
    ~Folder() { std::filesystem::remove_all(path); }
  } folder;
  return folder.path;
}

std::string write(const std::string &name, const std::string &bytes) {
  const std::string path = work_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

SpirvCompiler &compiler() {
  static SpirvCompiler instance(cache_dir());
  return instance;
}

const SpirvLog kPrintWarnings = [](const std::string &message) { std::printf("%s\n", message.c_str()); };

// The SPIR-V of `kernels` in as few modules as there are preludes (the text before the kernel and
// the comment lines above it): the sources that share one concatenated with it once, each kernel
// renamed.
std::vector<std::string> combined_modules(const Kernels &kernels) {
  const std::string symbol = codegen::kOpenclKernelSymbol;
  std::map<std::string, std::string> by_prelude;
  size_t index = 0;
  for (const Kernel &k : kernels.kernels) {
    const size_t kernel_at = k.source.find("\n__kernel ");
    const size_t name_at = k.source.find(" " + symbol + "(", kernel_at);
    if (kernel_at == std::string::npos || name_at == std::string::npos) {
      throw std::runtime_error(k.name + ": no __kernel " + symbol + " in the source");
    }
    // The comment lines right before the kernel (which name the program) go with it.
    size_t prelude_end = kernel_at;
    while (prelude_end > 0) {
      const size_t line = k.source.rfind('\n', prelude_end - 1);
      const size_t start = line == std::string::npos ? 0 : line + 1;
      if (k.source.compare(start, 2, "//") != 0) break;
      prelude_end = line == std::string::npos ? 0 : line;
    }
    std::string body = k.source.substr(prelude_end);
    body.replace(name_at - prelude_end + 1, symbol.size(), symbol + "_" + std::to_string(index++));
    by_prelude[k.source.substr(0, prelude_end)] += body + "\n";
  }
  std::vector<std::string> out;
  for (const auto &[prelude, sources] : by_prelude)
    out.push_back(compiler().compile(prelude + sources, kPrintWarnings));
  return out;
}

// spirv-val's verdict on a module: "" when valid.
std::string validate(const std::string &name, const std::string &module) {
  const std::vector<std::string> command = {"spirv-val", "--target-env", "opencl2.0", write(name + ".spv", module)};
  const util::ProcessOutcome run = util::run_process(command);
  if (run.status == 127) return "spirv-val cannot be run (Debian: spirv-tools): " + run.output;
  return run.status == 0 ? "" : util::command_line(command) + ":\n" + run.output;
}

TEST(LevelZeroSpirv, EveryKernelKindCompilesToSpirvThatSpirvValAccepts) {
  const Kernels &kernels = kernels_for(0);  // every kind, whatever local memory it needs
  for (const std::string &u : kernels.unsupported) ADD_FAILURE() << "not generated: " << u;
  EXPECT_GE(kernels.kernels.size(), 60u);
  std::printf("%zu kernels\n", kernels.kernels.size());
  for (size_t i = 0; i < kernels.kernels.size(); ++i) {
    const Kernel &k = kernels.kernels[i];
    std::string module;
    try {
      module = compiler().compile(k.source, kPrintWarnings);
    } catch (const Error &e) {
      ADD_FAILURE() << k.name << ": " << e.what();
      continue;
    }
    EXPECT_EQ(validate("k" + std::to_string(i), module), "") << k.name;
  }
}

// ocloc's build for `device` of every kind a GPU with `local_bytes` of shared local memory runs;
// skips, saying why, where ocloc is missing. The kinds that need more local memory are refused
// by the generator (the plugin's supports() says so, and the search never picks them): listed.
void expect_ocloc_builds(const std::string &device, int64_t local_bytes) {
  if (util::run_process({"ocloc", "--help"}).status == 127) {
    GTEST_SKIP() << "NOT RUN: ocloc is not installed, so the SPIR-V was not compiled for Intel GPUs "
                    "(Debian: intel-opencl-icd; scripts/setup.sh installs it)";
  }
  const Kernels &kernels = kernels_for(local_bytes);
  for (const std::string &u : kernels.unsupported) {
    std::printf("refused for %s: %s\n", device.c_str(), u.c_str());
    EXPECT_NE(u.find("bytes of shared memory per block, the device has"), std::string::npos) << u;
  }
  EXPECT_GE(kernels.kernels.size(), 50u);
  const std::vector<std::string> modules = combined_modules(kernels);
  for (size_t i = 0; i < modules.size(); ++i) {
    const std::string name = device + "-" + std::to_string(i);
    ASSERT_EQ(validate(name, modules[i]), "");
    const std::vector<std::string> command = {
        "ocloc",   "compile", "-q",       "-spirv_input",          "-file",   work_dir() + "/" + name + ".spv",
        "-device", device,    "-out_dir", work_dir() + "/" + name, "-output", name};
    const util::ProcessOutcome run = util::run_process(command);
    EXPECT_EQ(run.status, 0) << util::command_line(command) << ":\n" << run.output.substr(0, 20000);
  }
}

TEST(LevelZeroSpirv, OclocBuildsEveryKernelForDataCenterGpuMax) {
  expect_ocloc_builds("pvc", 128 * 1024);
}

TEST(LevelZeroSpirv, OclocBuildsEveryKernelForArc) {
  expect_ocloc_builds("dg2", 64 * 1024);
}

}  // namespace
}  // namespace yirage::level_zero
