// The skeleton's generator on two kernel programs made with the kit's IR: a pre-defined
// operator, and a customized one whose µGraph sums exp of its input's tiles over a for-loop. Each
// printed kernel must compile with the C compiler; a float16 program is refused.
// usage: skeleton_source_test C_COMPILER WORKDIR
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "ir/block_graph.hpp"
#include "serialize/kernel_program.hpp"
#include "skeleton_source.hpp"
#include "util/error.hpp"

using namespace yirage;

namespace {

int failures = 0;

void expect(bool ok, const std::string &what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    ++failures;
  }
}

std::string source_of(const KernelGraph &g, size_t op) {
  const std::vector<uint8_t> bytes = serialize::kernel_program_to_bytes(serialize::make_kernel_program(g, op));
  return skeleton::c_source(bytes.data(), bytes.size());
}

// Writes `source` to WORKDIR/name.c and compiles it.
void expect_compiles(const std::string &compiler, const std::string &work, const std::string &name,
                     const std::string &source) {
  const std::string path = work + "/" + name + ".c";
  std::ofstream(path) << source;
  const std::string command = compiler + " -std=c99 -Wall -Werror -c " + path + " -o " + work + "/" + name + ".o";
  expect(std::system(command.c_str()) == 0, name + ": " + command);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s C_COMPILER WORKDIR\n", argv[0]);
    return 2;
  }
  const std::string compiler = argv[1], work = argv[2];

  KernelGraph exp_graph;
  exp_graph.mark_output(exp_graph.unary(OpKind::kExp, exp_graph.new_input({4, 64}, DType::kFloat32)));
  const std::string elementwise = source_of(exp_graph, 1);
  expect(elementwise.find("yr_exp(") != std::string::npos, "exp is called");
  expect_compiles(compiler, work, "exp", elementwise);

  // Σ over 4 iterations of exp(x's tile), 2 blocks of 8 rows each.
  BlockGraphConfig config;
  config.grid = {2, 1, 1};
  config.forloop_range = 4;
  auto bg = std::make_shared<BlockGraph>(config);
  const TensorId tile = bg->new_input({16, 64}, DType::kFloat32, {0, -1, -1}, 1);
  bg->new_output(bg->accumulate(OpKind::kAccumSum, bg->unary(OpKind::kExp, tile)), {0, -1, -1}, -1);
  KernelGraph fused;
  fused.mark_output(fused.customized({fused.new_input({16, 64}, DType::kFloat32)}, bg)[0]);
  const std::string blocks = source_of(fused, 1);
  expect(blocks.find("for (long it = 0; it < 4; ++it)") != std::string::npos, "the for-loop");
  expect(blocks.find("for (long bx = 0; bx < 2; ++bx)") != std::string::npos, "the blocks");
  expect_compiles(compiler, work, "sum_of_exp", blocks);

  KernelGraph half;
  half.mark_output(half.unary(OpKind::kExp, half.new_input({8}, DType::kFloat16)));
  try {
    source_of(half, 1);
    expect(false, "float16 was accepted");
  } catch (const Error &e) {
    expect(e.code() == ErrorCode::kUnsupported, std::string("float16 refused as unsupported: ") + e.what());
  }
  if (failures == 0) std::printf("skeleton_source: 2 kernels printed and compiled, float16 refused\n");
  return failures == 0 ? 0 : 1;
}
