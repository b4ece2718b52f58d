// The Level Zero compile path without a GPU: every kernel kind of the conformance suite
// (conformance/tests_kernels.cpp: each kernel-level operator, the 16-byte and matmul layouts, the
// six fused benchmark µGraphs in all three dtypes, attention at half size and in blocks, split
// for-loops, weight products, block reductions, row chains, block-level rms_norm), generated as
// the plugin generates it for an Intel GPU and compiled to SPIR-V by the plugin's own compiler
// (spirv_compiler.hpp, cached where the conformance tests keep kernels), must be SPIR-V that
// `spirv-val --target-env opencl2.0` accepts, and Intel's offline compiler `ocloc` (Debian:
// intel-opencl-icd) must turn it into GPU code for Data Center GPU Max (pvc) and Arc (dg2).
//
// Kind by kind the sources differ little between dtypes but in loads and stores, so each
// kernel-level kind is generated in one dtype, the three taking turns, and the fused µGraphs in
// all three. ocloc gets every kernel in one module (the sources concatenated, each kernel
// renamed), one run per GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "benchmark_ugraphs.hpp"
#include "ir/block_graph.hpp"
#include "opencl/codegen/opencl_source.hpp"
#include "search/loop_split.hpp"
#include "serialize/kernel_program.hpp"
#include "spirv_compiler.hpp"
#include "util/error.hpp"
#include "util/file_cache.hpp"
#include "util/subprocess.hpp"

namespace yirage::level_zero {
namespace {

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

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

// Every kernel operator of `graph`, generated.
void add(Kernels &out, const std::string &kind, DType dt, const KernelGraph &graph) {
  for (size_t op : serialize::kernel_operators(graph)) {
    const std::string name =
        kind + "." + dtype_name(dt) + "." + op_name(graph.operators()[op].kind) + "#" + std::to_string(op);
    try {
      out.kernels.push_back(
          {name, codegen::opencl_source(serialize::make_kernel_program(graph, op), out.target).source});
    } catch (const Error &e) {
      if (e.code() != ErrorCode::kUnsupported) throw;
      out.unsupported.push_back(name + ": " + e.what());
    }
  }
}

KernelGraph one_op(const std::function<void(KernelGraph &)> &build) {
  KernelGraph g;
  build(g);
  return g;
}

// The block-level rms_norm of conformance's rms_norm_limits: rows of 37 shared by a block's
// threads, with a weight, three blocks, no for-loop.
KernelGraph block_rms_norm(DType dt) {
  KernelGraph g;
  const TensorId x = g.new_input({6, 5, 37}, dt), w = g.new_input({37}, dt);
  BlockGraphConfig config;
  config.grid = {3, 1, 1};
  config.block_threads = 128;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId xt = bg->new_input({6, 5, 37}, dt, {0, -1, -1}, -1);
  const TensorId wt = bg->new_input({37}, dt, kReplicated, -1);
  bg->new_output(bg->rms_norm(xt, {37}, 1e-5, wt), {0, -1, -1}, -1);
  g.mark_output(g.customized({x, w}, bg)[0]);
  return g;
}

// Every kind, generated for a GPU of `local_bytes` of shared local memory (0: no limit).
Kernels generate(int64_t local_bytes) {
  Kernels out;
  out.target = intel_gpu(local_bytes);
  size_t turn = 0;
  const auto next_dtype = [&turn] { return kDTypes[turn++ % 3]; };
  // Kernel-level operators, on odd shapes with broadcasts.
  for (OpKind kind : {OpKind::kExp, OpKind::kSilu, OpKind::kGelu, OpKind::kRelu, OpKind::kSqrt, OpKind::kSquare,
                      OpKind::kSigmoid, OpKind::kLog, OpKind::kNeg}) {
    const DType dt = next_dtype();
    add(out, op_name(kind), dt, one_op([&](KernelGraph &g) {
          g.mark_output(g.unary(kind, g.new_input({5, 7, 37}, dt)));
        }));
  }
  DType dt = next_dtype();
  add(out, "clamp", dt, one_op([&](KernelGraph &g) { g.mark_output(g.clamp(g.new_input({5, 37}, dt), -0.25, 0.5)); }));
  dt = next_dtype();
  add(out, "mul_scalar", dt, one_op([&](KernelGraph &g) {
        g.mark_output(g.mul_scalar(g.new_input({5, 37}, dt), -1.375));
      }));
  for (OpKind kind : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow, OpKind::kMax}) {
    dt = next_dtype();
    add(out, op_name(kind), dt, one_op([&](KernelGraph &g) {
          g.mark_output(g.binary(kind, g.new_input({5, 1, 37}, dt), g.new_input({1, 9, 37}, dt)));
        }));
  }
  dt = next_dtype();
  add(out, "elementwise_16byte_vectors", dt, one_op([&](KernelGraph &g) {
        const TensorId a = g.new_input({9, 8 * 13}, dt), b = g.new_input({9, 8 * 13}, dt);
        g.mark_output(g.unary(OpKind::kGelu, a));
        g.mark_output(g.binary(OpKind::kMax, a, b));
      }));
  const std::pair<const char *, std::pair<Dims, Dims>> matmuls[] = {
      {"matmul", {{3, 17, 45}, {1, 45, 131}}},
      {"matmul_16byte_rows", {{3, 11, 301}, {1, 301, 8 * 13}}},
      {"matmul_long_k", {{13, 16 * 133}, {16 * 133, 32 * 5}}},
      {"matmul_many_rows", {{77, 8 * 13}, {8 * 13, 8 * 11}}}};
  for (const auto &[kind, shapes] : matmuls) {
    dt = next_dtype();
    add(out, kind, dt, one_op([&, &shapes = shapes](KernelGraph &g) {
          g.mark_output(g.matmul(g.new_input(shapes.first, dt), g.new_input(shapes.second, dt)));
        }));
  }
  for (OpKind kind : {OpKind::kReduction, OpKind::kReductionMax}) {
    dt = next_dtype();
    add(out, op_name(kind), dt, one_op([&](KernelGraph &g) {
          g.mark_output(g.reduction(kind, g.new_input({5, 7, 37}, dt), 1));
        }));
  }
  dt = next_dtype();
  add(out, "rms_norm", dt, one_op([&](KernelGraph &g) {
        g.mark_output(g.rms_norm(g.new_input({7, 45}, dt), {45}, 1e-6, g.new_input({45}, dt)));
      }));
  dt = next_dtype();
  add(out, "concat", dt, one_op([&](KernelGraph &g) {
        g.mark_output(g.concat(g.new_input({7, 13}, dt), g.new_input({7, 21}, dt), 1));
      }));
  dt = next_dtype();
  add(out, "split", dt, one_op([&](KernelGraph &g) {
        for (TensorId part : g.split(g.new_input({7, 34}, dt), 1, {13, 21})) g.mark_output(part);
      }));

  // µGraphs: the six fused benchmarks in every dtype, the other kinds in one each.
  for (const std::string &benchmark : bench::benchmark_names()) {
    for (DType each : kDTypes) add(out, "fused." + benchmark, each, bench::build_fused(benchmark, 2, each, 16));
  }
  dt = next_dtype();
  add(out, "fused_half.gqa", dt, bench::build_fused("gqa", 1, dt, 2));
  for (const auto &[benchmark, scale, parts] :
       {std::tuple<const char *, int64_t, int64_t>{"gqa", 2, 4}, {"gated_mlp", 16, 2}}) {
    dt = next_dtype();
    const KernelGraph fused = bench::build_fused(benchmark, 1, dt, scale);
    const std::optional<KernelGraph> split = search::split_loop(fused, fused.operators().size() - 1, parts);
    if (!split) throw std::runtime_error(std::string(benchmark) + "'s µGraph does not split");
    add(out, std::string("split_loop.") + benchmark, dt, *split);
  }
  dt = next_dtype();
  {
    const KernelGraph fused = bench::build_fused("gated_mlp", 1, dt, 16);
    BlockGraphConfig config = fused.operators().back().block_graph->config();
    config.grid = {fused.tensor(fused.inputs()[1]).dims[1] * static_cast<int64_t>(dtype_size(dt)) / 64, 1, 1};
    add(out, "weight_product_ugraph", dt, bench::with_config(fused, config));
  }
  for (const std::string graph : {"gqa", "qknorm"}) {
    dt = next_dtype();
    const KernelGraph full = bench::build_fused(graph, 1, dt, 1);
    for (const auto &[blocks, parts] : {std::pair<int64_t, int64_t>{2, 1}, {4, 16}}) {
      BlockGraphConfig config = full.operators().back().block_graph->config();
      config.grid = {2, blocks, 1};
      config.forloop_range = 32;
      KernelGraph fused = bench::with_config(full, config);
      if (parts > 1) fused = *search::split_loop(fused, fused.operators().size() - 1, parts);
      add(out, "attention_blocks." + graph + "." + std::to_string(blocks), dt, fused);
    }
  }
  dt = next_dtype();
  add(out, "block_reductions", dt, bench::build_block_reductions(true, dt));
  dt = next_dtype();
  add(out, "row_chain", dt, bench::build_row_chain(true, dt));
  dt = next_dtype();
  add(out, "rms_norm_limits.block", dt, block_rms_norm(dt));
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
