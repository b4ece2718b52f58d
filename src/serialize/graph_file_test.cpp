#include "serialize/graph_file.hpp"

#include <gtest/gtest.h>

#include "ir/describe.hpp"

#include <cstring>
#include <random>
#include <string>

#include "benchmark_ugraphs.hpp"
#include "ir/block_graph.hpp"
#include "search/loop_split.hpp"
#include "util/error.hpp"
#include "verify/equivalence.hpp"

namespace yirage::serialize {
namespace {

std::vector<uint8_t> bytes_of(const std::string &text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

KernelGraph load(const std::vector<uint8_t> &bytes) {
  return graph_from_bytes(bytes.data(), bytes.size());
}

// The error code a load ends with, or -1 when it loads.
int load_error(const std::vector<uint8_t> &bytes) {
  try {
    load(bytes);
    return -1;
  } catch (const Error &e) {
    return static_cast<int>(e.code());
  }
}

std::string load_message(const std::string &text) {
  try {
    load(bytes_of(text));
    return "(loaded)";
  } catch (const Error &e) {
    return e.what();
  }
}

TEST(GraphFile, BenchmarkGraphsRoundTripBitForBit) {
  for (const std::string &name : bench::benchmark_names()) {
    for (bool fused : {false, true}) {
      const KernelGraph g =
          fused ? bench::build_fused(name, 1, DType::kFloat16) : bench::build_unfused(name, 1, DType::kFloat16);
      for (GraphFormat format : {GraphFormat::kBinary, GraphFormat::kJson}) {
        const std::vector<uint8_t> first = graph_to_bytes(g, format);
        EXPECT_EQ(first, graph_to_bytes(g, format)) << name << ": not deterministic";
        const KernelGraph loaded = load(first);
        EXPECT_EQ(graph_to_bytes(loaded, format), first) << name << " fused=" << fused;
        // The other format describes the same graph too.
        EXPECT_EQ(graph_to_bytes(load(graph_to_bytes(g, GraphFormat::kJson)), GraphFormat::kBinary),
                  graph_to_bytes(g, GraphFormat::kBinary));
      }
    }
  }
}

TEST(GraphFile, LoadedGraphsComputeTheSameFunction) {
  for (const std::string &name : bench::benchmark_names()) {
    const KernelGraph g = bench::build_fused(name, 1, DType::kFloat16, 16);
    const KernelGraph loaded = load(graph_to_bytes(g, GraphFormat::kJson));
    EXPECT_TRUE(verify::check_equivalence(g, loaded, {2, 3, 1}).equivalent) << name;
  }
}

TEST(GraphFile, HandWrittenJson) {
  const KernelGraph g = load(bytes_of(R"({
    "operators": [
      {"kind": "Input", "sizes": [2, 8], "dtype": "Float16"},
      {"kind": "Input", "sizes": [8, 4], "dtype": "Float16"},
      {"kind": "Matmul", "inputs": [0, 1]},
      {"kind": "Exp", "inputs": [2]}
    ],
    "outputs": [3]
  })"));
  EXPECT_EQ(g.operators().size(), 4u);
  EXPECT_EQ(g.tensor(g.outputs()[0]).dims, (Dims{2, 4}));
  EXPECT_EQ(g.tensor(g.outputs()[0]).dtype, DType::kFloat16);
}

TEST(GraphFile, SemanticErrorsAreCorruptDataWithTheOperator) {
  EXPECT_EQ(load_message(R"({"operators": [
      {"kind": "Input", "sizes": [16, 4096], "dtype": "Float32"}, {"kind": "Input", "sizes": [406, 4096], "dtype": "Float32"},
      {"kind": "Matmul", "inputs": [0, 1]}]})"),
            "graph file: operator 2 (matmul): matmul: A is [16,4096], B is [406,4096]: inner "
            "dimensions 4096 and 406 differ");
  EXPECT_EQ(load_message(R"({"operators": [{"kind": "Input", "sizes": [4], "dtype": "Float32"},
      {"kind": "Exp", "inputs": [1]}]})"),
            "graph file: operator 1 (exp): input 1 is not a tensor defined before it");
  EXPECT_EQ(load_message(R"({"operators": [{"kind": "Input", "sizes": [4], "dtype": "Float32"}], "outputs": [0]})"),
            "graph file: outputs: mark_output: the tensor is a graph input; outputs must be "
            "computed");
  EXPECT_EQ(load_message(R"({"operators": [{"kind": "Input", "sizes": [4], "dtype": "Float32"}], "outputs": [7]})"),
            "graph file: output 7 is not a tensor of the graph");
  EXPECT_EQ(load_message(R"({"operators": [{"kind": "Input", "sizes": [1099511627776,
      1099511627776], "dtype": "Float32"}]})")
                    .find("hold more than 2^56 elements") != std::string::npos,
            true);
  EXPECT_EQ(load_message(R"({"operators": [{"kind": 999}]})").rfind("graph file: operator 0", 0), 0u);
  EXPECT_NE(
      load_message(R"({"operators": [{"kind": "Customized"}]})").find("a customized operator without a block graph"),
      std::string::npos);
  EXPECT_NE(load_message(R"({"operators": [{"kind": "Input", "sizes": [4],
      "dtype": "Float32", "grid_map": [1, 2]}]})")
                .find("grid_map must have 3 entries"),
            std::string::npos);
  EXPECT_NE(load_message(R"({"operators": [{"kind": "Input", "sizes": [4], "dtype": "Float32"},
      {"kind": "Customized", "inputs": [0], "block_graph": {"grid": [1, 1, 1], "operators": [
        {"kind": "Customized", "block_graph": {"grid": [1, 1, 1]}}]}}]})")
                .find("a block graph operator cannot hold a block graph"),
            std::string::npos);
  EXPECT_NE(load_message(R"({"operators": [{"kind": "Input", "sizes": [4], "dtype": "Float32"},
      {"kind": "Customized", "inputs": [0], "block_graph": {"grid": [0, 1, 1]}}]})")
                .find("every grid dim must be >= 1"),
            std::string::npos);
  EXPECT_NE(load_message(R"({"operators": [{"kind": "Input", "sizes": [4], "dtype": "Float32"},
      {"kind": "Customized", "inputs": [0], "block_graph": {"grid": [1, 1, 1], "operators": [
        {"kind": "Input", "sizes": [4], "dtype": "Float32"}]}}]})")
                .find("not an operator of this graph level"),
            std::string::npos);
  EXPECT_NE(load_message(R"({"operators": [{"kind": "Input", "sizes": [4]}]})").find("dtype 0 is not a yirage_dtype"),
            std::string::npos);
  EXPECT_NE(load_message(R"({"operators": [{"kind": "Nonsense"}]})").find("JSON:"), std::string::npos);
  EXPECT_NE(load_message("{").find("JSON:"), std::string::npos);
  EXPECT_NE(load_message("hello").find("neither a binary graph file"), std::string::npos);
  EXPECT_NE(load_message("").find("neither"), std::string::npos);
}

TEST(GraphFile, SaverSizesMustAgreeWithTheirTileAndMaps) {
  // A [2,6144] output of 2 x 64-column tiles over a 48-step loop: the file must say [2,6144].
  auto file = [](const std::string &sizes) {
    return R"({"operators": [{"kind": "Input", "sizes": [2, 6144], "dtype": "Float32"},
      {"kind": "Customized", "inputs": [0], "block_graph": {"grid": [2, 1, 1], "block_threads": 128,
        "forloop_range": 96, "operators": [
        {"kind": "InputIterator", "sizes": [2, 6144], "dtype": "Float32", "grid_map": [0, -1, -1],
         "forloop_dim": 1},
        {"kind": "OutputSaver", "inputs": [0], "sizes": )" +
           sizes + R"(, "grid_map": [0, -1, -1], "forloop_dim": 1}]}}], "outputs": [1]})";
  };
  EXPECT_EQ(load_message(file("[2, 6144]")), "(loaded)");
  EXPECT_EQ(load_message(file("[192, 64]")),
            "graph file: customized operator, block graph operator 1 (output_saver): its sizes [192,64] disagree "
            "with its tile, omap and loop, which write [2,6144]");
  EXPECT_EQ(load_error(bytes_of(file("[1099511627776, 6144]"))), static_cast<int>(ErrorCode::kCorruptData));
}

// accum_sum_todimx (Mirage's sum_todimx) carries its dimx in sizes and makes the file version 3;
// a file without one stays at its version.
TEST(GraphFile, SumToDimxIsVersionThree) {
  auto file = [](const std::string &accumulator, const std::string &sizes, const std::string &written = "[2, 8]") {
    return R"({"schema_version": 3, "operators": [{"kind": "Input", "sizes": [2, 64], "dtype": "Float32"},
      {"kind": "Customized", "inputs": [0], "block_graph": {"grid": [1, 1, 1], "forloop_range": 2, "operators": [
        {"kind": "InputIterator", "sizes": [2, 64], "dtype": "Float32", "grid_map": [-1, -1, -1], "forloop_dim": 1},
        {"kind": ")" +
           accumulator + R"(", "inputs": [0], "sizes": )" + sizes + R"(},
        {"kind": "OutputSaver", "inputs": [1], "sizes": )" +
           written + R"(, "grid_map": [-1, -1, -1]}]}}], "outputs": [1]})";
  };
  const KernelGraph g = load(bytes_of(file("AccumSumToDimx", "[8]")));
  EXPECT_EQ(g.tensor(g.outputs()[0]).dims, (Dims{2, 8}));
  const std::string json = [&] {
    const std::vector<uint8_t> bytes = graph_to_bytes(g, GraphFormat::kJson);
    return std::string(bytes.begin(), bytes.end());
  }();
  EXPECT_NE(json.find("\"schema_version\": 3"), std::string::npos) << json;
  EXPECT_EQ(graph_to_bytes(load(graph_to_bytes(g, GraphFormat::kBinary)), GraphFormat::kBinary),
            graph_to_bytes(g, GraphFormat::kBinary));
  EXPECT_NE(load_message(file("AccumSumToDimx", "[5]")).find("dimx 5 must be >= 1 and divide its last dim 32"),
            std::string::npos);
  EXPECT_NE(load_message(file("AccumSumToDimx", "[]")).find("expected 1 input and sizes {dimx}"), std::string::npos);
  const std::vector<uint8_t> plain =
      graph_to_bytes(load(bytes_of(file("AccumSum", "[]", "[2, 32]"))), GraphFormat::kJson);
  EXPECT_EQ(std::string(plain.begin(), plain.end()).find("schema_version\": 3"), std::string::npos);
}

// Reshape and permute carry their dims in sizes and make a file version 4; a graph without them
// is written exactly as before.
TEST(GraphFile, ViewsAreVersionFour) {
  auto file = [](const std::string &shape, const std::string &order) {
    return R"({"schema_version": 4, "operators": [{"kind": "Input", "sizes": [4, 6], "dtype": "BFloat16"},
      {"kind": "Reshape", "inputs": [0], "sizes": )" +
           shape + R"(}, {"kind": "Permute", "inputs": [1], "sizes": )" + order + R"(}], "outputs": [2]})";
  };
  const KernelGraph g = load(bytes_of(file("[4, 2, 3]", "[1, 0, 2]")));
  EXPECT_EQ(g.tensor(g.outputs()[0]).dims, (Dims{2, 4, 3}));
  const std::vector<uint8_t> json = graph_to_bytes(g, GraphFormat::kJson);
  EXPECT_NE(std::string(json.begin(), json.end()).find("\"schema_version\": 4"), std::string::npos);
  EXPECT_EQ(graph_to_bytes(load(graph_to_bytes(g, GraphFormat::kBinary)), GraphFormat::kBinary),
            graph_to_bytes(g, GraphFormat::kBinary));
  EXPECT_NE(load_message(file("[5, 5]", "[1, 0]")).find("reshape: X is [4,6] (24 elements), shape [5,5]"),
            std::string::npos);
  EXPECT_NE(load_message(file("[4, 2, 3]", "[1, 1, 2]")).find("dim 1 appears twice: not a permutation"),
            std::string::npos);
  KernelGraph plain;
  plain.mark_output(plain.unary(OpKind::kExp, plain.new_input({4, 6}, DType::kFloat16)));
  const std::vector<uint8_t> plain_json = graph_to_bytes(plain, GraphFormat::kJson);
  EXPECT_EQ(std::string(plain_json.begin(), plain_json.end()).find("schema_version"), std::string::npos);
}

// How the host launches a graph (operators marked to run as one program) is kept by a file, as a
// field older readers skip (they run the operators apart, with the same results); no new
// version. Operators' marks on inputs are refused by the builder, as in a graph made by hand.
TEST(GraphFile, KeepsWhichOperatorsRunAsOneProgram) {
  KernelGraph g;
  const TensorId e = g.unary(OpKind::kExp, g.new_input({4, 6}, DType::kFloat16));
  g.mark_output(g.unary(OpKind::kNeg, e));
  g.set_launch_with_next(1, true);
  const KernelGraph back = load(graph_to_bytes(g, GraphFormat::kBinary));
  EXPECT_TRUE(back.operators()[1].attributes.launch_with_next);
  EXPECT_FALSE(back.operators()[2].attributes.launch_with_next);
  // `yirage show` says so.
  EXPECT_NE(describe(back).find("t1 = exp(t0) : [4,6] float16, launched with the next kernel as one program\n"),
            std::string::npos)
      << describe(back);
  const std::vector<uint8_t> json = graph_to_bytes(g, GraphFormat::kJson);
  EXPECT_NE(std::string(json.begin(), json.end()).find("\"launch_with_next\": true"), std::string::npos);
  EXPECT_EQ(std::string(json.begin(), json.end()).find("schema_version"), std::string::npos);
  EXPECT_NE(load_message(R"({"operators": [{"kind": "Input", "sizes": [2], "dtype": "Float32",
      "launch_with_next": true}, {"kind": "Exp", "inputs": [0]}], "outputs": [1]})")
                .find("an input is not launched"),
            std::string::npos);
}

TEST(GraphFile, NewerSchemaIsAVersionMismatch) {
  try {
    load(bytes_of(R"({"schema_version": 5, "operators": []})"));
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::kVersionMismatch);
    EXPECT_STREQ(e.what(), "graph file: schema version 5 is newer than this library's 4");
  }
}

// Every prefix of a valid file, and every single-bit flip of it, either loads (a flip can land
// in a value that stays valid) or fails with CORRUPT_DATA / VERSION_MISMATCH — never a crash,
// never another error. Run under ASan/UBSan in CI.
// The files: lora's fused µGraph, and attention with its loop split over two kernels (version
// 2: savers that write float32).
class DamagedFiles : public ::testing::TestWithParam<bool> {};

TEST_P(DamagedFiles, AreRefusedCleanly) {
  const KernelGraph lora = bench::build_fused("lora", 1, DType::kFloat16, 16);
  const KernelGraph gqa = bench::build_fused("gqa", 1, DType::kFloat16, 16);
  const std::vector<uint8_t> good =
      graph_to_bytes(GetParam() ? *search::split_loop(gqa, gqa.operators().size() - 1, 2) : lora, GraphFormat::kBinary);
  const int corrupt = static_cast<int>(ErrorCode::kCorruptData);
  const int version = static_cast<int>(ErrorCode::kVersionMismatch);
  for (size_t n = 0; n < good.size(); ++n) {
    const std::vector<uint8_t> prefix(good.begin(), good.begin() + static_cast<ptrdiff_t>(n));
    ASSERT_EQ(load_error(prefix), corrupt) << "prefix of " << n << " bytes";
  }
  int loaded = 0, refused = 0;
  for (size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> flipped = good;
      flipped[byte] ^= static_cast<uint8_t>(1u << bit);
      const int code = load_error(flipped);
      ASSERT_TRUE(code == -1 || code == corrupt || code == version)
          << "byte " << byte << " bit " << bit << ": error code " << code;
      (code == -1 ? loaded : refused) += 1;
    }
  }
  EXPECT_GT(refused, 0);
  std::printf("%zu-byte file: %d bit flips refused, %d still valid\n", good.size(), refused, loaded);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> noise(rng() % 512);
    for (uint8_t &b : noise) b = static_cast<uint8_t>(rng());
    if (noise.size() >= 8 && i % 2 == 0) std::memcpy(noise.data() + 4, "YRGF", 4);
    const int code = load_error(noise);
    ASSERT_TRUE(code == -1 || code == corrupt || code == version) << "noise " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(GraphFile, DamagedFiles, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) { return info.param ? "SplitLoop" : "Lora"; });

}  // namespace
}  // namespace yirage::serialize
