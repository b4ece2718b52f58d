#include "cuda/codegen/cuda_wgmma.hpp"

namespace yirage::codegen::cuda {

std::string wgmma_call(int64_t n, DType dtype, const std::string &acc, int64_t first, const std::string &a,
                       const std::string &desc, bool accumulate) {
  const int64_t regs = n / 2;
  const std::string type = dtype == DType::kBFloat16 ? "bf16" : "f16";
  std::string list;
  for (int64_t i = 0; i < regs; ++i) list += (i ? ", %" : "%") + std::to_string(i);
  const std::string A = std::to_string(regs), D = std::to_string(regs + 4), S = std::to_string(regs + 5);
  return "asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %" + S + ", 0; wgmma.mma_async.sync.aligned.m64n" +
         std::to_string(n) + "k16.f32." + type + "." + type + " {" + list + "}, {%" + A + ", %" +
         std::to_string(regs + 1) + ", %" + std::to_string(regs + 2) + ", %" + std::to_string(regs + 3) + "}, %" + D +
         ", p, 1, 1, 1; }\" : " + wgmma_register_list(acc, first, n / 8) + " : \"r\"(" + a + "[0]), \"r\"(" + a +
         "[1]), \"r\"(" + a + "[2]), \"r\"(" + a + "[3]), \"l\"(" + desc + "), \"r\"(" + (accumulate ? "1" : "0") +
         "));";
}

std::string wgmma_call_shared(int64_t n, DType dtype, const std::string &acc, int64_t first, const std::string &a_desc,
                              const std::string &b_desc, bool accumulate) {
  const int64_t regs = n / 2;
  const std::string type = dtype == DType::kBFloat16 ? "bf16" : "f16";
  std::string list;
  for (int64_t i = 0; i < regs; ++i) list += (i ? ", %" : "%") + std::to_string(i);
  // Operands: the accumulators, A's and B's descriptors, whether to add; A not transposed, B
  // transposed (MN-major).
  const std::string A = std::to_string(regs), B = std::to_string(regs + 1), S = std::to_string(regs + 2);
  return "asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %" + S + ", 0; wgmma.mma_async.sync.aligned.m64n" +
         std::to_string(n) + "k16.f32." + type + "." + type + " {" + list + "}, %" + A + ", %" + B +
         ", p, 1, 1, 0, 1; }\" : " + wgmma_register_list(acc, first, n / 8) + " : \"l\"(" + a_desc + "), \"l\"(" +
         b_desc + "), \"r\"(" + (accumulate ? "1" : "0") + "));";
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
