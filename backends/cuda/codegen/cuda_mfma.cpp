#include "cuda/codegen/cuda_mfma.hpp"

#include <string>

namespace yirage::codegen::cuda {

std::optional<MatmulLaunch> mfma_matmul(Printer &p, const Ref &a, const Ref &b, const Ref &o, DType dtype,
                                        const CudaTarget &target) {
  if (!target.mfma || target.dialect != CudaDialect::kHip || target.wavefront != 64 || dtype_size(dtype) != 2) {
    return std::nullopt;
  }
  const size_t rank = o.dims.size();
  const int64_t m = o.dims[rank - 2], k = a.dims[rank - 1], n = o.dims[rank - 1];
  if (m < 16) return std::nullopt;  // few rows: the weight-product kernels read B once
  const Dims batch_out(o.dims.begin(), o.dims.end() - 2);
  const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
  const int64_t row_blocks = (m + 31) / 32, col_blocks = (n + 31) / 32;
  const std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
  const bool f16 = dtype == DType::kFloat16;
  // The operands' element vectors: _Float16 for f16, the raw bits for bf16 (bf16_1k takes shorts).
  // GCC's vector types as well as clang's, so that the host emulator test compiles this code too.
  p.line(std::string("typedef ") + (f16 ? "_Float16" : "short") + " yr_mfma_in __attribute__((vector_size(8)));");
  p.line("typedef float yr_mfma_out __attribute__((vector_size(16)));");
  p.line("const int lane = threadIdx.x % 64, wave = threadIdx.x / 64;");
  emit_matmul_block_origin(p, "cb", col_blocks, "rb", row_blocks, batch_out, sa, sb);
  // Lane l holds A's row l % 16 and B's column l % 16 at k = 4 (l / 16) + 0..3, and receives the
  // output's column l % 16 at rows 4 (l / 16) + 0..3. Rows and columns past the output read its
  // last one (in bounds) and are never stored; k past the end is zero.
  p.line("const int64_t i0 = rb * 32 + (wave / 2) * 16, j0 = cb * 32 + (wave % 2) * 16;");
  p.line("const int64_t row = i0 + lane % 16 < " + M + " ? i0 + lane % 16 : " + std::to_string(m - 1) + ";");
  p.line("const int64_t col = j0 + lane % 16 < " + N + " ? j0 + lane % 16 : " + std::to_string(n - 1) + ";");
  p.line("const int kq = (lane / 16) * 4;");
  p.line("const auto *pa = " + a.ptr + " + ia + row * " + std::to_string(sa[rank - 2]) + ";");
  p.line("const auto *pb = " + b.ptr + " + ib + col * " + std::to_string(sb[rank - 1]) + ";");
  p.line("yr_mfma_out acc = {0.0f, 0.0f, 0.0f, 0.0f};");
  p.open("for (int64_t k0 = 0; k0 < " + K + "; k0 += 16)");
  p.line("yr_mfma_in av, bv;");
  p.line("#pragma unroll");
  p.open("for (int j = 0; j < 4; ++j)");
  p.line("const int64_t kk = k0 + kq + j;");
  const std::string as = std::to_string(sa[rank - 1]), bs = std::to_string(sb[rank - 2]);
  if (f16) {
    p.line("av[j] = kk < " + K + " ? __builtin_bit_cast(_Float16, pa[kk * " + as +
           "].bits) : static_cast<_Float16>(0);");
    p.line("bv[j] = kk < " + K + " ? __builtin_bit_cast(_Float16, pb[kk * " + bs +
           "].bits) : static_cast<_Float16>(0);");
  } else {
    p.line("av[j] = kk < " + K + " ? static_cast<short>(pa[kk * " + as + "].bits) : static_cast<short>(0);");
    p.line("bv[j] = kk < " + K + " ? static_cast<short>(pb[kk * " + bs + "].bits) : static_cast<short>(0);");
  }
  p.close();
  p.line(std::string("acc = __builtin_amdgcn_mfma_f32_16x16x16") + (f16 ? "f16" : "bf16_1k") +
         "(av, bv, acc, 0, 0, 0);");
  p.close();
  p.line("#pragma unroll");
  p.open("for (int r = 0; r < 4; ++r)");
  p.line("const int64_t ii = i0 + kq + r, jj = j0 + lane % 16;");
  p.line("if (ii < " + M + " && jj < " + N + ") yr_st(" + o.ptr + " + bt * " + std::to_string(m * n) + " + ii * " + N +
         " + jj, acc[r]);");
  p.close();
  return MatmulLaunch{row_blocks * col_blocks * std::max<int64_t>(1, num_elements(batch_out)), 256};
}

}  // namespace yirage::codegen::cuda
