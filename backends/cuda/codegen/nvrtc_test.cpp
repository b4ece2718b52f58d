// The CUDA generator without a GPU: NVRTC must compile the kernel of every operator kind in every
// dtype, and of the six fused benchmark µGraphs, for sm_75, sm_80 and sm_90 (sm_75 takes the
// paths without tensor cores, cp.async or bfloat16 cvt). Skips when NVRTC cannot be opened; the
// AddressSanitizer build generates the same sources without compiling them (kCompileWithNvrtc).
// (Running the kernels is the conformance suite's job, on a machine with a GPU.)
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "benchmark_ugraphs.hpp"
#include "cuda/codegen/cuda_source.hpp"
#include "cuda/codegen/generator_test_support.hpp"
#include "driver.hpp"
#include "ir/block_graph.hpp"
#include "ir/rebuild.hpp"
#include "ragged_graphs.hpp"
#include "search/loop_split.hpp"
#include "testing/test_support.hpp"

namespace yirage::cuda {
namespace {

using namespace generator_test;

const Nvrtc *nvrtc_or_null() {
  try {
    return &Nvrtc::load();
  } catch (const Error &) {
    return nullptr;
  }
}

// NVRTC is a closed library that the sanitizers do not see into, and the generated sources are the
// same in every build: the sanitized build generates them (what it is there to check) and leaves
// compiling them to the plain build, where NVRTC's allocations do not go through the sanitizer's.
#if defined(__SANITIZE_ADDRESS__)  // GCC's
#define YIRAGE_TEST_ASAN
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)  // Clang's
#define YIRAGE_TEST_ASAN
#endif
#endif
#if defined(YIRAGE_TEST_ASAN)
constexpr bool kCompileWithNvrtc = false;
#else
constexpr bool kCompileWithNvrtc = true;
#endif

// Kernels to compile, gathered by architecture and prelude. NVRTC takes most of its time per
// call (the prelude parsed again each time), so each group compiles as one translation unit: the
// prelude once, each kernel's own text in a namespace of its own with its symbol renamed. A group
// that fails is compiled kernel by kernel to name the one at fault.
class Pending {
 public:
  void add(int cc, const codegen::CudaKernel &kernel, const std::string &what) {
    const size_t body_at = kernel.source.find("// Kernel program");
    ASSERT_NE(body_at, std::string::npos) << what;
    Group &g = groups_[{cc, kernel.source.substr(0, body_at)}];
    std::string body = kernel.source.substr(body_at);
    const std::string symbol = std::string(codegen::kCudaKernelSymbol) + "(";
    const size_t at = body.find(symbol);
    ASSERT_NE(at, std::string::npos) << what;
    body.replace(at, symbol.size() - 1,
                 std::string(codegen::kCudaKernelSymbol) + "_" + std::to_string(g.kernels.size()));
    g.unit += "namespace k" + std::to_string(g.kernels.size()) + " {\n" + body + "}\n";
    g.kernels.push_back({what, kernel.source});
  }

  void compile_all(const Nvrtc &nvrtc) {
    for (const auto &[key, g] : groups_) {
      const std::string arch = codegen::cuda_arch(key.first);
      try {
        EXPECT_GT(nvrtc.compile(key.second + g.unit, arch).size(), 100u * g.kernels.size());
      } catch (const Error &together) {
        bool alone_failed = false;
        for (const auto &[what, source] : g.kernels) {
          try {
            nvrtc.compile(source, arch);
          } catch (const Error &e) {
            alone_failed = true;
            ADD_FAILURE() << what << ", " << arch << ": " << e.what() << "\n" << source;
          }
        }
        if (!alone_failed) ADD_FAILURE() << arch << ": kernels that compile alone fail together: " << together.what();
      }
    }
    groups_.clear();
  }

 private:
  struct Group {
    std::string unit;
    std::vector<std::pair<std::string, std::string>> kernels;  // what, whole source
  };
  std::map<std::pair<int, std::string>, Group> groups_;
};

// Generates every live operator of `graph` for each architecture and adds it to `pending`;
// identical sources once.
void expect_compiles(const KernelGraph &graph, const std::string &what, std::set<std::string> &seen, Pending &pending) {
  const std::vector<bool> live = live_operators(graph);
  for (size_t i = 0; i < graph.operators().size(); ++i) {
    if (!live[i] || graph.operators()[i].kind == OpKind::kInput) continue;
    for (int cc : {75, 80, 90}) {
      const codegen::CudaKernel kernel = codegen::cuda_source(serialize::make_kernel_program(graph, i), h100_like(cc));
      EXPECT_GT(kernel.block_threads, 0);
      EXPECT_GE(kernel.grid[0], 1);
      if (!seen.insert(kernel.source + std::to_string(cc)).second || !kCompileWithNvrtc) continue;
      pending.add(cc, kernel, what + ", operator " + op_name(graph.operators()[i].kind));
    }
  }
}

class CudaCodegen : public ::testing::Test {
 protected:
  void SetUp() override {
    if (nvrtc_or_null() == nullptr) GTEST_SKIP() << "NVRTC cannot be opened here";
  }
  void TearDown() override {
    if (const Nvrtc *nvrtc = nvrtc_or_null(); nvrtc != nullptr) pending_.compile_all(*nvrtc);
  }
  std::set<std::string> seen_;
  Pending pending_;
};

TEST_F(CudaCodegen, EveryOperatorKindInEveryDType) {
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    KernelGraph g;
    const TensorId x = g.new_input({3, 5, 7}, dt);
    for (OpKind kind : {OpKind::kExp, OpKind::kSilu, OpKind::kGelu, OpKind::kRelu, OpKind::kSquare, OpKind::kSigmoid,
                        OpKind::kNeg, OpKind::kSqrt, OpKind::kLog}) {
      g.mark_output(g.unary(kind, x));
    }
    g.mark_output(g.clamp(x, -0.25, 0.5));
    g.mark_output(g.mul_scalar(x, 0.375));
    const TensorId b = g.new_input({3, 1, 7}, dt);
    for (OpKind kind : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kMax, OpKind::kPow}) {
      g.mark_output(g.binary(kind, x, b));
    }
    g.mark_output(g.matmul(g.new_input({2, 1, 19, 33}, dt), g.new_input({1, 3, 33, 130}, dt)));
    // B rows of whole 16-byte groups: the vectorized matmul.
    g.mark_output(g.matmul(g.new_input({2, 1, 19, 300}, dt), g.new_input({1, 3, 300, 136}, dt)));
    // 5 or more rows, k a multiple of 16, n of 32: tensor cores from sm_80 for 16-bit data, 16
    // rows per block (20: a second block of 4).
    g.mark_output(g.matmul(g.new_input({6, 64}, dt), g.new_input({64, 96}, dt)));
    g.mark_output(g.matmul(g.new_input({20, 64}, dt), g.new_input({64, 96}, dt)));
    g.mark_output(g.reduction(OpKind::kReduction, x, 2));
    g.mark_output(g.reduction(OpKind::kReductionMax, x, 0));
    g.mark_output(g.rms_norm(x, {7}, 1e-6, g.new_input({7}, dt)));
    g.mark_output(g.rms_norm(x, {5, 7}, 1e-5, std::nullopt));
    g.mark_output(g.concat(x, b, 1));
    for (TensorId part : g.split(x, 2, {3, 4})) g.mark_output(part);
    g.mark_output(g.reshape(x, {7, -1}));
    g.mark_output(g.permute(x, {2, 0, 1}));
    // Whole 16-byte groups: elementwise operators on vectors (cuda_elementwise.hpp).
    const TensorId v = g.new_input({3, 40}, dt), w = g.new_input({3, 40}, dt);
    for (OpKind kind : {OpKind::kSilu, OpKind::kSqrt}) g.mark_output(g.unary(kind, v));
    g.mark_output(g.clamp(v, -0.25, 0.5));
    for (OpKind kind : {OpKind::kMul, OpKind::kPow}) g.mark_output(g.binary(kind, v, w));
    // rms_norm over whole vectors, with its weight and without.
    g.mark_output(g.rms_norm(v, {40}, 1e-6, g.new_input({40}, dt)));
    g.mark_output(g.rms_norm(w, {40}, 1e-6, std::nullopt));
    // Broadcast operands on vectors: a row's scalar (softmax's division by its sum), rows of
    // another tensor, both at once.
    const TensorId sum = g.new_input({3, 1}, dt), row = g.new_input({1, 40}, dt);
    g.mark_output(g.binary(OpKind::kDiv, v, sum));
    g.mark_output(g.binary(OpKind::kAdd, row, w));
    g.mark_output(g.binary(OpKind::kMul, sum, row));
    // Reductions: a block per output (a long contiguous dim), a warp per output on vectors, a
    // thread per output (an outer dim over 32 and more contiguous outputs).
    const TensorId long_rows = g.new_input({3, 2 * 2048}, dt), wide = g.new_input({3, 9, 64}, dt);
    g.mark_output(g.reduction(OpKind::kReduction, long_rows, 1));
    g.mark_output(g.reduction(OpKind::kReductionMax, long_rows, 1));
    g.mark_output(g.reduction(OpKind::kReduction, v, 1));
    g.mark_output(g.reduction(OpKind::kReductionMax, wide, 1));
    expect_compiles(g, dtype_name(dt), seen_, pending_);
  }
}

TEST_F(CudaCodegen, FusedBenchmarkUGraphs) {
  for (const std::string &name : bench::benchmark_names()) {
    for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
      expect_compiles(bench::build_fused(name, 2, dt, 16), name + " " + dtype_name(dt), seen_, pending_);
    }
  }
}

TEST_F(CudaCodegen, SplitLoopUGraphs) {
  for (const std::string name : {"gqa", "gated_mlp"}) {
    for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
      const KernelGraph fused = bench::build_fused(name, 2, dt, 16);
      const std::optional<KernelGraph> split = search::split_loop(fused, fused.operators().size() - 1, 2);
      ASSERT_TRUE(split.has_value()) << name;
      expect_compiles(*split, name + " split " + dtype_name(dt), seen_, pending_);
    }
  }
}

// The same splits as one program (plugin ABI 1.4): the parts and their sum in one launch, the
// tile's last block adding the parts up (cuda_split_pair.hpp).
TEST_F(CudaCodegen, SplitLoopsInOneLaunch) {
  for (const std::string name : {"gqa", "qknorm", "gated_mlp"}) {
    for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
      for (int64_t parts : {2, 8}) {
        const KernelGraph fused = bench::build_fused(name, 1, dt, 2);
        const std::optional<KernelGraph> split = search::split_loop(fused, fused.operators().size() - 1, parts);
        ASSERT_TRUE(split.has_value()) << name;
        const std::vector<size_t> ops = serialize::kernel_operators(*split);
        const serialize::GroupProgram group = serialize::make_group_program(*split, ops);
        const std::string what = name + " split over " + std::to_string(parts) + " " + dtype_name(dt);
        for (int cc : {80, 90}) {
          const codegen::CudaKernel kernel = codegen::cuda_source(group.program, h100_like(cc));
          EXPECT_NE(kernel.source.find("yr_last_block = atomicAdd(count, 1u) == " + std::to_string(parts) + "u - 1u;"),
                    std::string::npos)
              << what;
          EXPECT_GT(kernel.workspace_bytes, 0) << what;
          const Operator &chunks = split->operators()[ops[0]];
          EXPECT_EQ(kernel.grid, chunks.block_graph->config().grid) << what;
          if (kCompileWithNvrtc && seen_.insert(kernel.source + std::to_string(cc)).second) {
            pending_.add(cc, kernel, what + " in one launch");
          }
        }
      }
    }
  }
}

// Any other chain of µGraphs runs as one persistent kernel (cuda_persistent.hpp): a task per
// block of each, each waiting for the producer blocks whose tiles it reads.
TEST_F(CudaCodegen, ChainsOfUGraphsInOneLaunch) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    const KernelGraph chain = bench::build_ugraph_chain(true, dt);
    const serialize::GroupProgram group = serialize::make_group_program(chain, serialize::kernel_operators(chain));
    for (int cc : {80, 90}) {
      const codegen::CudaKernel kernel = codegen::cuda_source(group.program, h100_like(cc));
      const std::string what = std::string("the µGraph chain in ") + dtype_name(dt) + " on sm_" + std::to_string(cc);
      EXPECT_EQ(kernel.persistent_tasks, 8 + 4 + 4) << what;
      EXPECT_EQ(kernel.persistent_widest, 8) << what;
      EXPECT_EQ(kernel.grid, (std::array<int64_t, 3>{16, 1, 1})) << what;
      // Control words and a flag per task (256 bytes each), then Y (8 × 256 elements).
      EXPECT_EQ(kernel.workspace_bytes, 256 + 256 + 8 * 256 * static_cast<int64_t>(dtype_size(dt))) << what;
      // The product's blocks wait for all eight of the norm's (each reads all of Y: the norm's
      // count); the gate's block (x, y) for the product's blocks 2y and 2y + 1 (64 columns
      // against 32: their flags).
      EXPECT_NE(kernel.source.find("yr_wait_word(yr_ctl + 4, yr_epoch * 8u, yr_ctl + 3, yr_deadline)"),
                std::string::npos)
          << what;
      EXPECT_NE(
          kernel.source.find("const int64_t x0 = (yr_by * 64) / 32, x1 = yr_min64(3, (yr_by * 64 + 64 - 1) / 32);"),
          std::string::npos)
          << what;
      EXPECT_EQ(kernel.source.find("u + 1u, yr_ctl + 3"), std::string::npos) << what << ": the watchdog's test hang";
      // The norm's and the product's blocks of 32 columns of 16-bit weights are weight products
      // (their own code, every warp streaming its slice of k; the first's prefetch first, before
      // the dependent launch's wait on sm_90); of float32 weights, 32 columns are two of their
      // tiles: the general body.
      size_t products = 0;
      for (size_t at = 0; (at = kernel.source.find("// Weight products: every warp streams", at)) != std::string::npos;
           ++at) {
        ++products;
      }
      EXPECT_EQ(products, dtype_size(dt) == 2 ? 2u : 0u) << what;
      const size_t prefetch = kernel.source.find("if (blockIdx.x < 8) {");
      EXPECT_EQ(prefetch != std::string::npos, dtype_size(dt) == 2) << what;
      if (cc == 90 && prefetch != std::string::npos) {
        EXPECT_LT(prefetch, kernel.source.find("griddepcontrol.wait")) << what;
      }
      if (kCompileWithNvrtc && seen_.insert(kernel.source + std::to_string(cc)).second) {
        pending_.add(cc, kernel, what + " in one launch");
      }
    }
  }
  // A chain ending in weight products: they run once, inside the persistent kernel (the last
  // operator's own kernel was once generated beside it, writing the program's outputs unawaited).
  for (DType dt : {DType::kFloat16, DType::kFloat32}) {
    const KernelGraph two = bench::build_ugraph_chain(true, dt, false);
    const codegen::CudaKernel kernel = codegen::cuda_source(
        serialize::make_group_program(two, serialize::kernel_operators(two)).program, h100_like(90));
    EXPECT_EQ(kernel.persistent_tasks, 8 + 4) << dtype_name(dt);
    EXPECT_EQ(kernel.source.find("yr_st(yr_out"), std::string::npos) << dtype_name(dt);
    const size_t head = kernel.source.find("extern \"C\" __global__");
    EXPECT_LT(kernel.source.find("griddepcontrol.wait", head), kernel.source.find("yr_st(", head)) << dtype_name(dt);
    if (kCompileWithNvrtc && seen_.insert(kernel.source + "90").second) {
      pending_.add(90, kernel, std::string("two µGraphs ending in weight products, ") + dtype_name(dt));
    }
  }
  // The watchdog's test (YIRAGE_CUDA_TEST_HANG) plants one wait no launch satisfies, and the
  // timeout is the target's.
  const KernelGraph chain = bench::build_ugraph_chain(true, DType::kFloat16);
  codegen::CudaTarget hung = h100_like(90);
  hung.hang_for_tests = true;
  hung.wait_timeout_ms = 250;
  const codegen::CudaKernel kernel =
      codegen::cuda_source(serialize::make_group_program(chain, serialize::kernel_operators(chain)).program, hung);
  EXPECT_NE(kernel.source.find("yr_epoch * 8u + 1u, yr_ctl + 3"), std::string::npos);
  EXPECT_NE(kernel.source.find("yr_clock_ns() + 250ull * 1000000ull"), std::string::npos);
}

// A program of several operators of which one is not a µGraph is refused before any code is
// generated for it (a group ending in a matmul once ran the matmul's generator on the group's
// inputs); so is one for a device without acquire loads.
TEST(CudaCodegenLimits, ProgramsOfSeveralOperatorsAreUGraphsOnSm70) {
  KernelGraph g;
  const TensorId e = g.unary(OpKind::kExp, g.new_input({16, 64}, DType::kFloat16));
  g.mark_output(g.matmul(e, g.new_input({64, 32}, DType::kFloat16)));
  const std::vector<size_t> ops = serialize::kernel_operators(g);
  try {
    (void)codegen::cuda_source(serialize::make_group_program(g, ops).program, h100_device());
    ADD_FAILURE() << "exp then matmul was generated as one launch";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("operator 0 (exp) is not a µGraph"), std::string::npos) << e.what();
  }
  const KernelGraph chain = bench::build_ugraph_chain(true, DType::kFloat16);
  try {
    (void)codegen::cuda_source(serialize::make_group_program(chain, serialize::kernel_operators(chain)).program,
                               h100_like(61));
    ADD_FAILURE() << "a persistent kernel was generated for sm_61";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("needs sm_70"), std::string::npos) << e.what();
  }
}

TEST(CudaCodegenLimits, WaitTimeoutsAreMillisecondsUpToAnHour) {
  EXPECT_EQ(codegen::wait_timeout_ms_from(nullptr), codegen::CudaTarget::kDefaultWaitTimeoutMs);
  EXPECT_EQ(codegen::wait_timeout_ms_from("200"), 200);
  EXPECT_EQ(codegen::wait_timeout_ms_from("3600000"), 3600000);
  for (const char *bad : {"", "0", "-5", "3600001", "12ms", "1e3"}) {
    try {
      (void)codegen::wait_timeout_ms_from(bad);
      ADD_FAILURE() << "YIRAGE_CUDA_WAIT_TIMEOUT_MS='" << bad << "' was taken";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("YIRAGE_CUDA_WAIT_TIMEOUT_MS"), std::string::npos);
    }
  }
}

TEST_F(CudaCodegen, BlockReductionsAndFullSizeUGraphs) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    expect_compiles(bench::build_block_reductions(true, dt), std::string("block reductions ") + dtype_name(dt), seen_,
                    pending_);
    expect_compiles(bench::build_row_chain(true, dt), std::string("row chain ") + dtype_name(dt), seen_, pending_);
    expect_compiles(bench::build_sum_to_dimx(true, dt), std::string("sum_todimx ") + dtype_name(dt), seen_, pending_);
    for (int64_t rows : {3, 8}) {
      expect_compiles(bench::build_weighted_norm_product(true, dt, rows),
                      "weighted norm product " + std::to_string(rows) + " " + dtype_name(dt), seen_, pending_);
    }
  }
  // The benchmark shapes: tiles of whole 16-byte groups, cp.async stages as deep as they fit.
  for (const std::string &name : bench::benchmark_names()) {
    expect_compiles(bench::build_fused(name, 1, DType::kFloat16, 1), name + " at full size", seen_, pending_);
  }
  // Attention in registers with 4 row tiles in 2 shares of the keys, and 8 in one, split.
  for (const auto &[blocks, loop, parts] : {std::tuple<int64_t, int64_t, int64_t>{4, 32, 8}, {2, 64, 32}}) {
    const KernelGraph fused = attention_at("gqa", blocks, loop);
    const std::optional<KernelGraph> split = search::split_loop(fused, fused.operators().size() - 1, parts);
    ASSERT_TRUE(split.has_value());
    expect_compiles(*split, "gqa at " + std::to_string(256 / blocks) + " rows per block, split", seen_, pending_);
  }
  // 128 rows per block (warpgroup mma on sm_90a) in bfloat16, split as above.
  const KernelGraph bf16 = attention_at("gqa", 2, 64, nullptr, DType::kBFloat16);
  const std::optional<KernelGraph> bf16_split = search::split_loop(bf16, bf16.operators().size() - 1, 32);
  ASSERT_TRUE(bf16_split.has_value());
  expect_compiles(*bf16_split, "gqa in bfloat16 at 128 rows per block, split", seen_, pending_);
}

// Ragged tiles: the small µGraphs of the conformance suite, and the benchmark µGraphs at full
// size with their long dims 3 shorter (stages filled with zeros past the end, bounded copies,
// fills before reductions and matmuls).
TEST_F(CudaCodegen, RaggedTileUGraphs) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    for (const std::string &name : bench::ragged_names()) {
      expect_compiles(bench::build_ragged(name, true, dt), name + " " + dtype_name(dt), seen_, pending_);
    }
  }
  size_t variants = 0;
  for (const std::string &name : bench::benchmark_names()) {
    KernelGraph ragged;
    try {
      ragged = ragged_variant(bench::build_fused(name, 1, DType::kFloat16, 1));
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << name << ": " << e.what();
      continue;
    }
    expect_compiles(ragged, name + " at full size, ragged", seen_, pending_);
    ++variants;
  }
  EXPECT_GE(variants, 4u);
  // Attention over 4,097 keys in 64 iterations: key tiles of 65, rounded up to 80 in registers.
  expect_compiles(ragged_variant(attention_at("gqa", 16, 64), 1024, -1), "gqa over 4,097 keys", seen_, pending_);
}

// Matmuls of many rows on 16-bit data are tiled GEMMs from sm_80 (cuda_gemm.hpp): on sm_80 the
// largest of 128 × 128, 64 × 128 and 64 × 64 mma.sync tiles that gives each multiprocessor a
// block (else 64 × 64); on sm_90a warpgroup mma in the largest of 128 × 256, 128 × 128 and
// 64 × 128 tiles that does, the stages swizzled for wgmma (four or three stages where two blocks
// then share a multiprocessor, one wgmma in flight with four), and mma.sync's tiles where none
// does; partial row,
// column and k tiles; batched with A broadcast. Float32, a row of B not in 16-byte groups, or
// sm_75 keep the other matmul kernels.
TEST_F(CudaCodegen, ManyRowMatmulsAreTiledGemms) {
  struct Case {
    Dims a, b;
    DType dtype;
    int64_t bm, bn, blocks;           // sm_80: mma.sync
    int64_t wg_bm, wg_bn, wg_blocks;  // sm_90a: wgmma (0: mma.sync's tiles)
  };
  const codegen::CudaTarget ampere{80, kH100SharedBytes, 132, kH100SharedPerMultiprocessor};
  for (const Case &c : {Case{{256, 4096}, {4096, 6144}, DType::kFloat16, 64, 128, 4 * 48, 64, 128, 4 * 48},
                        Case{{256, 18944}, {18944, 3584}, DType::kBFloat16, 64, 64, 4 * 56, 0, 0, 0},
                        Case{{1024, 1024}, {1024, 3072}, DType::kBFloat16, 128, 128, 8 * 24, 128, 128, 8 * 24},
                        Case{{1024, 4096}, {4096, 8192}, DType::kFloat16, 128, 128, 8 * 64, 128, 256, 8 * 32},
                        Case{{40, 72}, {72, 136}, DType::kFloat16, 64, 64, 3, 0, 0, 0},
                        Case{{1, 300, 1032}, {3, 1032, 264}, DType::kBFloat16, 64, 64, 3 * 5 * 5, 0, 0, 0}}) {
    KernelGraph g;
    g.mark_output(g.matmul(g.new_input(c.a, c.dtype), g.new_input(c.b, c.dtype)));
    const std::string shape = to_string(c.a) + " x " + to_string(c.b);
    const auto expect_mma = [&](const codegen::CudaKernel &kernel, const std::string &where) {
      EXPECT_NE(kernel.source.find("yr_ldmatrix4(a + i * 16"), std::string::npos) << shape << where;
      EXPECT_EQ(kernel.source.find("yr_wgmma_desc(sb"), std::string::npos) << shape << where;
      EXPECT_EQ(kernel.grid[0], c.blocks) << shape << where;
      EXPECT_EQ(kernel.block_threads, 256) << shape << where;
      EXPECT_EQ(kernel.shared_bytes, (c.bm == 128 ? 3 : 4) * (c.bm * 72 + 64 * (c.bn + 8)) * 2) << shape << where;
    };
    expect_mma(codegen::cuda_source(serialize::make_kernel_program(g, g.operators().size() - 1), ampere), " sm_80");
    const codegen::CudaKernel wg =
        codegen::cuda_source(serialize::make_kernel_program(g, g.operators().size() - 1), h100_device());
    if (c.wg_bm == 0) {
      expect_mma(wg, " sm_90a");
    } else {
      const int64_t wn = c.wg_bm == 128 ? c.wg_bn : c.wg_bn / 2;  // each warpgroup's columns
      EXPECT_NE(wg.source.find("wgmma.mma_async.sync.aligned.m64n" + std::to_string(wn) + "k16"), std::string::npos)
          << shape;
      EXPECT_NE(wg.source.find("yr_swizzled128(r, nc, 64)"), std::string::npos) << shape;
      EXPECT_EQ(wg.grid[0], c.wg_blocks) << shape;
      EXPECT_EQ(wg.block_threads, 256) << shape;
      const int64_t stage = (c.wg_bm * 64 + 64 * c.wg_bn) * 2;
      const int64_t stages = 2 * 4 * stage <= kH100SharedPerMultiprocessor   ? 4
                             : 2 * 3 * stage <= kH100SharedPerMultiprocessor ? 3
                                                                             : 4;
      const bool two = 2 * stages * stage <= kH100SharedPerMultiprocessor;
      EXPECT_NE(wg.source.find("yr_wgmma_wait<" + std::string(stages >= 4 ? "1" : "0") + ">();  // step kt"),
                std::string::npos)
          << shape;
      EXPECT_EQ(wg.shared_bytes, stages * stage) << shape;
      EXPECT_NE(wg.source.find("__launch_bounds__(256, " + std::string(two ? "2" : "1") + ")"), std::string::npos)
          << shape;
    }
    expect_compiles(g, "tiled gemm " + shape, seen_, pending_);
  }
  for (const auto &[a, b, dtype, cc] : {std::tuple<Dims, Dims, DType, int>{{256, 64}, {64, 64}, DType::kFloat32, 90},
                                        {{256, 64}, {64, 60}, DType::kFloat16, 90},
                                        {{256, 64}, {64, 64}, DType::kFloat16, 75},
                                        {{16, 64}, {64, 64}, DType::kFloat16, 90}}) {
    KernelGraph g;
    g.mark_output(g.matmul(g.new_input(a, dtype), g.new_input(b, dtype)));
    const codegen::CudaKernel kernel =
        codegen::cuda_source(serialize::make_kernel_program(g, g.operators().size() - 1), h100_like(cc));
    EXPECT_EQ(kernel.source.find("yr_gemm_smem"), std::string::npos) << to_string(a) << " x " << to_string(b);
  }
}

// A µGraph that is one product of many rows, summed over its loop, with unary operators of the
// sum (a prefill GELU up-projection: x[256, 1024] · W[1024, 6144]) is the tiled GEMM of a
// pre-defined matmul of that shape, its grid and loop the GEMM's own, and the operators applied
// to the sums as they are stored; the µGraph's tiles (2 × 64 blocks of [128, 96], 16 iterations)
// no longer matter; a residual added to the sums is read where each sum is stored. A µGraph that
// computes something else keeps its tiles.
TEST_F(CudaCodegen, ManyRowProductUGraphsAreTiledGemms) {
  const auto product = [](DType dt, bool gelu, std::array<int64_t, 3> grid, GridMap rows, GridMap columns,
                          GridMap laid) {
    KernelGraph g;
    const TensorId x = g.new_input({256, 1024}, dt), w = g.new_input({1024, 6144}, dt);
    BlockGraphConfig config;
    config.grid = grid;
    config.block_threads = 128;
    config.forloop_range = 16;
    auto bg = std::make_shared<BlockGraph>(config);
    const TensorId xt = bg->new_input({256, 1024}, dt, rows, 1);
    const TensorId wt = bg->new_input({1024, 6144}, dt, columns, 0);
    TensorId sum = bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, wt));
    if (gelu) sum = bg->unary(OpKind::kGelu, sum);
    bg->new_output(sum, laid, -1);
    g.mark_output(g.customized({x, w}, bg)[0]);
    return g;
  };
  KernelGraph plain;
  plain.mark_output(
      plain.matmul(plain.new_input({256, 1024}, DType::kFloat16), plain.new_input({1024, 6144}, DType::kFloat16)));
  const codegen::CudaKernel gemm = codegen::cuda_source(serialize::make_kernel_program(plain, 2), h100_device());
  const codegen::CudaTarget ampere{80, kH100SharedBytes, 132, kH100SharedPerMultiprocessor};
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const KernelGraph g = product(dt, true, {2, 64, 1}, {0, -1, -1}, {-1, 1, -1}, {0, 1, -1});
    const codegen::CudaKernel kernel = codegen::cuda_source(serialize::make_kernel_program(g, 2), h100_device());
    EXPECT_NE(kernel.source.find("yr_wgmma_desc(sb"), std::string::npos) << dtype_name(dt);
    EXPECT_EQ(kernel.grid, gemm.grid);
    EXPECT_EQ(kernel.block_threads, gemm.block_threads);
    EXPECT_EQ(kernel.shared_bytes, gemm.shared_bytes);
    EXPECT_EQ(kernel.loop_waits, 1);
    EXPECT_TRUE(kernel.whole_product);
    EXPECT_EQ(kernel.estimate(2e-6).whole_product, 1);
    EXPECT_NE(kernel.source.find("yr_erf(acc[j][2 * h] * 0.707"), std::string::npos) << dtype_name(dt);
    EXPECT_NE(kernel.source.find("yr_erf(acc[j][2 * h + 1] * 0.707"), std::string::npos) << dtype_name(dt);
    // mma.sync's GEMM on sm_80, the same epilogue.
    const std::string sm80 = codegen::cuda_source(serialize::make_kernel_program(g, 2), ampere).source;
    EXPECT_NE(sm80.find("yr_ldmatrix4(a + i * 16"), std::string::npos) << dtype_name(dt);
    EXPECT_NE(sm80.find("yr_erf(acc[i][j][2 * h + 1] * 0.707"), std::string::npos) << dtype_name(dt);
    expect_compiles(g, std::string("gelu(x · W) as a µGraph, ") + dtype_name(dt), seen_, pending_);
  }
  // Rows along y, columns along x, no operator after the sum: the GEMM, stored as it is.
  const KernelGraph swapped = product(DType::kFloat16, false, {64, 2, 1}, {-1, 0, -1}, {1, -1, -1}, {1, 0, -1});
  const codegen::CudaKernel kernel = codegen::cuda_source(serialize::make_kernel_program(swapped, 2), h100_device());
  EXPECT_EQ(kernel.grid, gemm.grid);
  EXPECT_NE(kernel.source.find("(nullptr), acc[j][2 * h], acc[j][2 * h + 1]);"), std::string::npos);
  expect_compiles(swapped, "x · W as a µGraph, rows along y", seen_, pending_);
  // A residual added to the sums: read at the offset each value is stored to.
  {
    KernelGraph g;
    const TensorId x = g.new_input({256, 1024}, DType::kBFloat16), w = g.new_input({1024, 6144}, DType::kBFloat16);
    const TensorId r = g.new_input({256, 6144}, DType::kBFloat16);
    BlockGraphConfig config;
    config.grid = {4, 64, 1};  // tiles that fit sm_75's shared memory, where the µGraph keeps them
    config.block_threads = 128;
    config.forloop_range = 16;
    auto bg = std::make_shared<BlockGraph>(config);
    const TensorId xt = bg->new_input({256, 1024}, DType::kBFloat16, {0, -1, -1}, 1);
    const TensorId wt = bg->new_input({1024, 6144}, DType::kBFloat16, {-1, 1, -1}, 0);
    const TensorId rt = bg->new_input({256, 6144}, DType::kBFloat16, {0, 1, -1}, -1);
    bg->new_output(bg->binary(OpKind::kAdd, rt, bg->accumulate(OpKind::kAccumSum, bg->matmul(xt, wt))), {0, 1, -1}, -1);
    g.mark_output(g.customized({x, w, r}, bg)[0]);
    const codegen::CudaKernel residual = codegen::cuda_source(serialize::make_kernel_program(g, 3), h100_device());
    EXPECT_EQ(residual.grid, gemm.grid);
    EXPECT_NE(residual.source.find("yr_ld(in2 + (to - out0)) + acc[j][2 * h]"), std::string::npos);
    EXPECT_NE(residual.source.find("yr_ld(in2 + (to - out0 + 1)) + acc[j][2 * h + 1]"), std::string::npos);
    expect_compiles(g, "x · W + r as a µGraph", seen_, pending_);
  }
  // The saver laying rows out along the columns' axis computes something else: its tiles stay.
  const KernelGraph crossed = product(DType::kFloat16, false, {2, 64, 1}, {0, -1, -1}, {-1, 1, -1}, {1, 0, -1});
  EXPECT_EQ(
      codegen::cuda_source(serialize::make_kernel_program(crossed, 2), h100_device()).estimate(2e-6).whole_product, 0);
  EXPECT_EQ(
      codegen::cuda_source(serialize::make_kernel_program(crossed, 2), h100_device()).source.find("yr_wgmma_desc(sb"),
      std::string::npos);
}

// A µGraph that is only weight products of one small A (gated_mlp in blocks of 32 weight
// columns, the grid the search keeps) is one weight-product kernel: half the block's warps
// stream W1, half W2, and silu and the gate are applied to the sums in registers. In blocks of
// 64 columns (the hand-written grid) it keeps its tiles in shared memory. The plugin's estimate
// tells the search that the streamed loop waits once, and that the tiles' loop, its copies 3
// iterations ahead through a ring of 4 stages, waits once per 3 of its 64 iterations.
TEST_F(CudaCodegen, WeightProductUGraphsStreamTheirWeights) {
  const KernelGraph wide = bench::build_fused("gated_mlp", 1, DType::kFloat16, 1);
  BlockGraphConfig config = wide.operators().back().block_graph->config();
  config.grid = {4096 / 32, 1, 1};
  const KernelGraph narrow = bench::with_config(wide, config);
  const codegen::CudaKernel kernel =
      codegen::cuda_source(serialize::make_kernel_program(narrow, narrow.operators().size() - 1), h100_device());
  EXPECT_EQ(kernel.grid[0], 128);
  EXPECT_EQ(kernel.block_threads, 512);
  EXPECT_EQ(kernel.shared_bytes, 0);
  EXPECT_EQ(kernel.loop_waits, 1);
  EXPECT_EQ(kernel.source.find("extern __shared__"), std::string::npos);
  EXPECT_NE(kernel.source.find("const auto *wb = warp < 8 ? in1 : in2;"), std::string::npos);
  EXPECT_NE(kernel.source.find("yr_mma16(pb, tc[j], ar.x, au.x, ar.y, au.y"), std::string::npos);
  EXPECT_NE(kernel.source.find("sum1 += partial[8 + w][r][t % 32];"), std::string::npos);
  EXPECT_NE(kernel.source.find("const float e0 = sum0 * yr_sigmoid(sum0);"), std::string::npos);
  EXPECT_NE(kernel.source.find("const float e1 = e0 * sum1;"), std::string::npos);
  EXPECT_NE(kernel.source.find("yr_st(out0 + ii * 4096 + jj, e1);"), std::string::npos);
  EXPECT_LT(kernel.source.find("prefetch.global.L2 [%0];\" :: \"l\"(wb"), kernel.source.find("griddepcontrol.wait"));
  expect_compiles(narrow, "gated_mlp in 32-column blocks", seen_, pending_);
  const codegen::CudaKernel tiles =
      codegen::cuda_source(serialize::make_kernel_program(wide, wide.operators().size() - 1), h100_device());
  EXPECT_NE(tiles.source.find("extern __shared__"), std::string::npos);
  EXPECT_NE(tiles.source.find("yr_cp_wait<2>();"), std::string::npos) << "4 stages";
  EXPECT_EQ(tiles.loop_waits, (64 + 2) / 3);
  const KernelGraph unfused = bench::build_unfused("gated_mlp", 1, DType::kFloat16, 1);
  for (size_t i : serialize::kernel_operators(unfused)) {
    EXPECT_EQ(codegen::cuda_source(serialize::make_kernel_program(unfused, i), h100_device()).loop_waits, -1)
        << "pre-defined operators have no for-loop: " << op_name(unfused.operators()[i].kind);
  }
}

// Weight products whose k is split over blocks (a pre-defined product of one row by k >= 2048,
// the H100's multiprocessors known; a partial last column tile) compile in every dtype. µGraphs
// (a weighted norm's product) keep k whole.
TEST_F(CudaCodegen, WeightProductsSplitOverBlocksCompile) {
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    KernelGraph g;
    g.mark_output(g.matmul(g.new_input({1, 2048}, dt), g.new_input({2048, 520}, dt)));
    const codegen::CudaKernel product =
        codegen::cuda_source(serialize::make_kernel_program(g, g.operators().size() - 1), h100_device());
    EXPECT_GT(product.workspace_bytes, 0) << dtype_name(dt);
    pending_.add(90, product, std::string("a product split over blocks, ") + dtype_name(dt));
  }
  const KernelGraph fused = bench::build_fused("rmsnorm_linear", 1, DType::kFloat16, 1);
  const codegen::CudaKernel norm =
      codegen::cuda_source(serialize::make_kernel_program(fused, fused.operators().size() - 1), h100_device());
  EXPECT_EQ(norm.workspace_bytes, 0);
}

}  // namespace
}  // namespace yirage::cuda
