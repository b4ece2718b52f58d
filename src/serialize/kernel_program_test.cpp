#include "serialize/kernel_program.hpp"

#include <gtest/gtest.h>

#include <flatbuffers/flatbuffers.h>

#include "serialize/graph_file.hpp"
#include "util/error.hpp"
#include "yirage_kernel_program_generated.h"

namespace yirage::serialize {
namespace {

template <class Statement>
void expect_error(ErrorCode code, const std::string &text, Statement statement) {
  try {
    statement();
    ADD_FAILURE() << "no error; expected one saying \"" << text << "\"";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

uint32_t version_of(const std::vector<uint8_t> &bytes) {
  return fb::GetKernelProgram(bytes.data())->schema_version();
}

// x, y → a = exp(x), b = a + y, c = b · x; outputs c and a.
struct Chain {
  KernelGraph g;
  TensorId x, y, a, b, c;
  size_t exp_op, add_op, mul_op;
  Chain() {
    x = g.new_input({4, 8}, DType::kFloat16);
    y = g.new_input({4, 8}, DType::kFloat16);
    a = g.unary(OpKind::kExp, x);
    b = g.binary(OpKind::kAdd, a, y);
    c = g.binary(OpKind::kMul, b, x);
    g.mark_output(c);
    g.mark_output(a);
    exp_op = static_cast<size_t>(g.tensor(a).producer);
    add_op = static_cast<size_t>(g.tensor(b).producer);
    mul_op = static_cast<size_t>(g.tensor(c).producer);
  }
};

TEST(KernelProgram, OneOperatorStaysSchemaVersionOne) {
  const Chain chain;
  const std::vector<uint8_t> bytes = kernel_program_to_bytes(make_kernel_program(chain.g, chain.add_op));
  EXPECT_EQ(version_of(bytes), 1u);  // what plugins of ABI 1.0–1.3 read
  const KernelProgram back = kernel_program_from_bytes(bytes.data(), bytes.size());
  EXPECT_EQ(back.operator_count(), 1u);
  EXPECT_EQ(back.op().kind, OpKind::kAdd);
}

// A group's program reads what its operators read from outside (each read its own input, as in a
// program of one operator) and writes what others read: a graph output, and b, which mul reads.
TEST(KernelProgram, GroupsListTheirReadsAndTheTensorsOthersRead) {
  const Chain chain;
  const GroupProgram group = make_group_program(chain.g, {chain.exp_op, chain.add_op});
  EXPECT_EQ(group.inputs, (std::vector<TensorId>{chain.x, chain.y}));
  EXPECT_EQ(group.outputs, (std::vector<TensorId>{chain.a, chain.b}));
  const std::vector<uint8_t> bytes = kernel_program_to_bytes(group.program);
  EXPECT_EQ(version_of(bytes), 2u);
  const KernelProgram back = kernel_program_from_bytes(bytes.data(), bytes.size(), ProgramOperators::kSeveral);
  EXPECT_EQ(back.operator_count(), 2u);
  EXPECT_EQ(back.input_bytes(), (std::vector<size_t>{64, 64}));
  EXPECT_EQ(back.output_bytes(), (std::vector<size_t>{64, 64}));
  expect_error(ErrorCode::kInternal, "2 operators where one was expected", [&] { (void)back.op(); });
  // A backend that runs one operator a program declines it.
  expect_error(ErrorCode::kUnsupported, "2 operators in one program",
               [&] { (void)kernel_program_from_bytes(bytes.data(), bytes.size()); });

  // All three: x is read twice (by exp and by mul), each read an input; c is the only output
  // read outside besides a.
  const GroupProgram all = make_group_program(chain.g, {chain.exp_op, chain.add_op, chain.mul_op});
  EXPECT_EQ(all.inputs, (std::vector<TensorId>{chain.x, chain.y, chain.x}));
  EXPECT_EQ(all.outputs, (std::vector<TensorId>{chain.a, chain.c}));
}

TEST(KernelProgram, RefusesGroupsThatAreNot) {
  const Chain chain;
  expect_error(ErrorCode::kInvalidArgument, "two or more operators in graph order",
               [&] { (void)make_group_program(chain.g, {chain.add_op}); });
  expect_error(ErrorCode::kInvalidArgument, "two or more operators in graph order", [&] {
    (void)make_group_program(chain.g, {chain.add_op, chain.exp_op});
  });
  expect_error(ErrorCode::kInvalidArgument, "an input is not a kernel", [&] {
    (void)make_group_program(chain.g, {0, chain.exp_op});
  });
}

// Programs of several operators from a hostile host: an input after an operator, a version 1
// program of two operators.
TEST(KernelProgram, RefusesMalformedPrograms) {
  KernelProgram bad;
  const TensorId e = bad.graph.unary(OpKind::kExp, bad.graph.new_input({4}, DType::kFloat32));
  bad.graph.mark_output(bad.graph.binary(OpKind::kAdd, e, bad.graph.new_input({4}, DType::kFloat32)));
  const std::vector<uint8_t> bytes = kernel_program_to_bytes(bad);
  expect_error(ErrorCode::kCorruptData, "the inputs, then the operators (operator 1)",
               [&] { (void)kernel_program_from_bytes(bytes.data(), bytes.size(), ProgramOperators::kSeveral); });

  const Chain chain;
  const std::vector<uint8_t> graph =
      graph_to_bytes(make_group_program(chain.g, {chain.exp_op, chain.add_op}).program.graph, GraphFormat::kBinary);
  flatbuffers::FlatBufferBuilder builder;
  const auto name = builder.CreateString("two");
  const auto graph_bytes = builder.CreateVector(graph);
  builder.Finish(fb::CreateKernelProgram(builder, 1, name, graph_bytes), fb::KernelProgramIdentifier());
  const std::vector<uint8_t> v1(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
  expect_error(ErrorCode::kCorruptData, "exactly one operator",
               [&] { (void)kernel_program_from_bytes(v1.data(), v1.size(), ProgramOperators::kSeveral); });

  // Version 2 with fewer than two operators: only inputs, or one operator.
  auto version_two = [](const KernelGraph &holds) {
    const std::vector<uint8_t> bytes = graph_to_bytes(holds, GraphFormat::kBinary);
    flatbuffers::FlatBufferBuilder b;
    const auto n = b.CreateString("few");
    const auto gb = b.CreateVector(bytes);
    b.Finish(fb::CreateKernelProgram(b, 2, n, gb), fb::KernelProgramIdentifier());
    return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  };
  KernelGraph one;
  one.mark_output(one.unary(OpKind::kExp, one.new_input({4}, DType::kFloat32)));
  for (const std::vector<uint8_t> &few : {version_two(KernelGraph{}), version_two(one)}) {
    for (ProgramOperators operators : {ProgramOperators::kOne, ProgramOperators::kSeveral}) {
      try {
        (void)kernel_program_from_bytes(few.data(), few.size(), operators);
        ADD_FAILURE() << "a version 2 program of fewer than two operators was read";
      } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::kCorruptData) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace yirage::serialize
