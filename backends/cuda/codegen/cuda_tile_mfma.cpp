#include "cuda/codegen/cuda_tile_mfma.hpp"

#include <string>
#include <vector>

namespace yirage::codegen::cuda {
namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

// `index` clamped to the last of `count` where a tile may run past it (count not a multiple of 16).
std::string clamped(const std::string &index, int64_t count) {
  if (count % 16 == 0) return index;
  return "(" + index + " < " + str(count) + " ? " + index + " : " + str(count - 1) + ")";
}

// An operand value (a float of the tile at `at`) as the instruction takes it.
std::string operand(MfmaKind kind, const std::string &at) {
  switch (kind) {
    case MfmaKind::kFloat16: return "static_cast<_Float16>(" + at + ")";
    case MfmaKind::kBFloat16: return "static_cast<short>(__builtin_bit_cast(unsigned, " + at + ") >> 16)";
    case MfmaKind::kFloat32: break;
  }
  return at;
}

std::string zero(MfmaKind kind) {
  switch (kind) {
    case MfmaKind::kFloat16: return "static_cast<_Float16>(0.0f)";
    case MfmaKind::kBFloat16: return "static_cast<short>(0)";
    case MfmaKind::kFloat32: break;
  }
  return "0.0f";
}

}  // namespace

MfmaKind mfma_kind(const Ref &a, const Ref &b) {
  if (a.widened_16bit && b.widened_16bit && a.element == b.element) {
    if (a.element == DType::kFloat16) return MfmaKind::kFloat16;
    if (a.element == DType::kBFloat16) return MfmaKind::kBFloat16;
  }
  return MfmaKind::kFloat32;
}

bool mfma_tile_matmul(Printer &p, const Ref &a, const Ref &b, const Ref &o, int64_t threads) {
  if (threads <= 0 || threads % 64 != 0 || a.raw_16bit || b.raw_16bit) return false;
  const size_t rank = o.dims.size();
  const int64_t m = o.dims[rank - 2], n = o.dims[rank - 1], k = a.dims[rank - 1];
  const Dims batch(o.dims.begin(), o.dims.end() - 2);
  const int64_t row_tiles = (m + 15) / 16, col_tiles = (n + 15) / 16;
  const int64_t items = num_elements(batch) * row_tiles * col_tiles;
  const Dims sa = matmul_operand_strides(a, o.dims), sb = matmul_operand_strides(b, o.dims);
  const Dims so = o.element_strides();
  const MfmaKind kind = mfma_kind(a, b);
  const bool sixteen = kind != MfmaKind::kFloat32;
  const int64_t k_step = sixteen ? 16 : 4;  // per instruction: 4 k per lane (16-bit) or 1
  p.open("");
  switch (kind) {
    case MfmaKind::kFloat16: p.line("typedef _Float16 yr_mfma_in __attribute__((vector_size(8)));"); break;
    case MfmaKind::kBFloat16: p.line("typedef short yr_mfma_in __attribute__((vector_size(8)));"); break;
    case MfmaKind::kFloat32: break;
  }
  p.line("typedef float yr_mfma_acc __attribute__((vector_size(16)));");
  p.line("const int mf_lane = static_cast<int>(threadIdx.x) % 64, mf_r = mf_lane % 16, mf_q = mf_lane / 16;");
  // Wavefront-uniform: every lane of a wavefront runs the same items (MFMA needs all 64).
  p.open("for (int mf_w = static_cast<int>(threadIdx.x) / 64; mf_w < " + str(items) + "; mf_w += " + str(threads / 64) +
         ")");
  // The item's coordinates, columns of tiles fastest: `name` of `count` (0 where count is 1).
  int64_t inner = 1;
  auto coordinate = [&](const std::string &name, int64_t count) {
    if (count == 1) return std::string("0");
    p.line("const int " + name + " = mf_w" + (inner == 1 ? "" : " / " + str(inner)) +
           (inner * count == items ? "" : " % " + str(count)) + ";");
    inner *= count;
    return name;
  };
  const std::string tj = coordinate("mf_tj", col_tiles), ti = coordinate("mf_ti", row_tiles);
  std::vector<std::string> v(rank, "0");
  for (size_t d = batch.size(); d-- > 0;) v[d] = coordinate("mf_b" + str(static_cast<int64_t>(d)), batch[d]);
  p.line("const int mf_i = " + ti + " * 16 + mf_r, mf_j = " + tj + " * 16 + mf_r;");
  p.line("const float *mf_a = " + a.ptr + " + " + index_expr(v, sa) + " + " + clamped("mf_i", m) + " * " +
         str(sa[rank - 2]) + ";");
  p.line("const float *mf_b = " + b.ptr + " + " + index_expr(v, sb) + " + " + clamped("mf_j", n) + " * " +
         str(sb[rank - 1]) + ";");
  p.line("yr_mfma_acc mf_c = {0.0f, 0.0f, 0.0f, 0.0f};");
  const std::string ka = str(sa[rank - 1]), kb = str(sb[rank - 2]), K = str(k);
  // A lane's operand at k = kk: zero past the end where k is not a whole number of steps.
  auto value = [&](const std::string &ptr, const std::string &stride, const std::string &kk) {
    const std::string text = operand(kind, ptr + "[" + kk + " * " + stride + "]");
    return k % k_step == 0 ? text : kk + " < " + K + " ? " + text + " : " + zero(kind);
  };
  p.open("for (int mf_k = 0; mf_k < " + K + "; mf_k += " + str(k_step) + ")");
  if (sixteen) {
    p.line("yr_mfma_in mf_x, mf_y;");
    p.line("#pragma unroll");
    p.open("for (int mf_e = 0; mf_e < 4; ++mf_e)");
    p.line("const int mf_kk = mf_k + mf_q * 4 + mf_e;");
    p.line("mf_x[mf_e] = " + value("mf_a", ka, "mf_kk") + ";");
    p.line("mf_y[mf_e] = " + value("mf_b", kb, "mf_kk") + ";");
    p.close();
    p.line(std::string("mf_c = __builtin_amdgcn_mfma_f32_16x16x16") + (kind == MfmaKind::kFloat16 ? "f16" : "bf16_1k") +
           "(mf_x, mf_y, mf_c, 0, 0, 0);");
  } else {
    p.line("const int mf_kk = mf_k + mf_q;");
    p.line("const float mf_x = " + value("mf_a", ka, "mf_kk") + ";");
    p.line("const float mf_y = " + value("mf_b", kb, "mf_kk") + ";");
    p.line("mf_c = __builtin_amdgcn_mfma_f32_16x16x4f32(mf_x, mf_y, mf_c, 0, 0, 0);");
  }
  p.close();
  // The lane's results: column mf_j, rows 4 mf_q + 0..3 of the tile.
  const std::string at =
      o.ptr + "[" + index_expr(v, so) + " + mf_row * " + str(so[rank - 2]) + " + mf_j * " + str(so[rank - 1]) + "]";
  std::string guard;
  if (m % 16 != 0) guard = "mf_row < " + str(m);
  if (n % 16 != 0) guard += (guard.empty() ? "" : " && ") + std::string("mf_j < ") + str(n);
  p.line("#pragma unroll");
  p.open("for (int mf_e = 0; mf_e < 4; ++mf_e)");
  p.line("const int mf_row = " + ti + " * 16 + mf_q * 4 + mf_e;");
  p.line((guard.empty() ? "" : "if (" + guard + ") ") + at + " = mf_c[mf_e];");
  p.close();
  p.close();
  p.close();
  return true;
}

}  // namespace yirage::codegen::cuda
