#include "cuda/codegen/cuda_wgmma.hpp"

namespace yirage::codegen::cuda {

namespace {

// The asm statement of one wgmma.m64n`n`k16 with float accumulators: `operands` (the PTX operands
// after the accumulators, then the predicate and immediates) with `inputs` as its input list;
// operand `flag` (an index) says whether to add.
std::string wgmma_asm(int64_t n, DType dtype, const std::string &acc, int64_t first, const std::string &operands,
                      const std::string &inputs, int64_t flag) {
  const std::string type = dtype == DType::kBFloat16 ? "bf16" : "f16";
  std::string list;
  for (int64_t i = 0; i < n / 2; ++i) list += (i ? ", %" : "%") + std::to_string(i);
  return "asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %" + std::to_string(flag) +
         ", 0; wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + type + "." + type + " {" + list +
         "}, " + operands + "; }\" : " + wgmma_register_list(acc, first, n / 8) + " : " + inputs + ");";
}

std::string operand(int64_t i) {
  return "%" + std::to_string(i);
}

}  // namespace

std::string wgmma_call(int64_t n, DType dtype, const std::string &acc, int64_t first, const std::string &a,
                       const std::string &desc, bool accumulate) {
  // Operands: the accumulators, A's 4 registers, B's descriptor, whether to add; B transposed.
  const int64_t regs = n / 2;
  return wgmma_asm(n, dtype, acc, first,
                   "{" + operand(regs) + ", " + operand(regs + 1) + ", " + operand(regs + 2) + ", " +
                       operand(regs + 3) + "}, " + operand(regs + 4) + ", p, 1, 1, 1",
                   "\"r\"(" + a + "[0]), \"r\"(" + a + "[1]), \"r\"(" + a + "[2]), \"r\"(" + a + "[3]), \"l\"(" + desc +
                       "), \"r\"(" + (accumulate ? "1" : "0") + ")",
                   regs + 5);
}

std::string wgmma_call_shared(int64_t n, DType dtype, const std::string &acc, int64_t first, const std::string &a_desc,
                              const std::string &b_desc, bool accumulate) {
  // Operands: the accumulators, A's and B's descriptors, whether to add; A not transposed, B
  // transposed (MN-major).
  const int64_t regs = n / 2;
  return wgmma_asm(n, dtype, acc, first, operand(regs) + ", " + operand(regs + 1) + ", p, 1, 1, 0, 1",
                   "\"l\"(" + a_desc + "), \"l\"(" + b_desc + "), \"r\"(" + (accumulate ? "1" : "0") + ")", regs + 2);
}

std::string wgmma_register_list(const std::string &acc, int64_t first, int64_t chunks) {
  std::string list;
  for (int64_t c = first; c < first + chunks; ++c) {
    for (int r = 0; r < 4; ++r) {
      list += std::string(list.empty() ? "" : ", ") + "\"+f\"(" + acc + "[" + std::to_string(c) + "][" +
              std::to_string(r) + "])";
    }
  }
  return list;
}

std::string wgmma_operand_fence(const std::string &acc, int64_t first, int64_t chunks) {
  return "asm volatile(\"\" : " + wgmma_register_list(acc, first, chunks) + " :: \"memory\");\n";
}

}  // namespace yirage::codegen::cuda
