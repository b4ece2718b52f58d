// The matmuls o = a·b that the MFMA emulator test (codegen/mfma_emulator_test.cpp) runs through
// the generator's MFMA code: tile matmuls (cuda_tile_mfma.hpp: each MFMA kind, partial row and
// column tiles, k tails, batches with broadcast operands, strided views, fewer items than
// wavefronts and more) and pre-defined matmuls (cuda_mfma.hpp). Operands are named A and B, the
// result O (compact), as the generated functions take them.
#pragma once

#include <string>
#include <vector>

#include "cuda/codegen/cuda_ref.hpp"

namespace yirage::hip::testing {

struct MfmaTileCase {
  std::string name;
  codegen::cuda::Ref a, b, o;
  int64_t threads;  // the block's: whole 64-lane wavefronts
};

// A tile of `dims`: 16-bit values of `element` widened (float16/bfloat16), or any float32
// (a computed tile); `strides` empty for a compact one.
inline codegen::cuda::Ref mfma_tile(const std::string &name, Dims dims, DType element, Dims strides = {}) {
  codegen::cuda::Ref ref{name, std::move(dims), std::move(strides)};
  ref.widened_16bit = element != DType::kFloat32;
  ref.element = element;
  return ref;
}

inline std::vector<MfmaTileCase> mfma_tile_cases() {
  using D = DType;
  auto c = [](std::string name, Dims a, D ea, Dims b, D eb, int64_t threads, Dims sa = {}, Dims sb = {}) {
    Dims o = a.size() >= b.size() ? a : b;
    const size_t r = o.size();
    o[r - 2] = a[a.size() - 2];
    o[r - 1] = b[b.size() - 1];
    for (size_t d = 0; d + 2 < r; ++d) o[d] = std::max(a[d], b[d]);
    return MfmaTileCase{std::move(name), mfma_tile("A", std::move(a), ea, std::move(sa)),
                        mfma_tile("B", std::move(b), eb, std::move(sb)), mfma_tile("O", o, D::kFloat32), threads};
  };
  return {
      c("f16_one_row_k_tail", {1, 40}, D::kFloat16, {40, 16}, D::kFloat16, 256),
      c("f16_partial_tiles", {5, 12}, D::kFloat16, {12, 20}, D::kFloat16, 256),
      c("f16_more_items_than_wavefronts", {64, 64}, D::kFloat16, {64, 64}, D::kFloat16, 256),
      c("bf16_partial_tiles", {33, 40}, D::kBFloat16, {40, 17}, D::kBFloat16, 128),
      c("bf16_batch_broadcast_a", {1, 16, 32}, D::kBFloat16, {3, 32, 48}, D::kBFloat16, 256),
      c("f16_views", {8, 12}, D::kFloat16, {12, 24}, D::kFloat16, 64, {20, 1}, {28, 1}),
      c("f16_column_major_b", {18, 16}, D::kFloat16, {16, 18}, D::kFloat16, 192, {}, {1, 16}),
      c("f32_computed_a_k_tail", {1, 10}, D::kFloat32, {10, 16}, D::kFloat16, 64),
      c("f32_mixed_types", {20, 8}, D::kBFloat16, {8, 33}, D::kFloat16, 256),
      c("f32_rank4_broadcast_b", {2, 3, 7, 5}, D::kFloat32, {1, 3, 5, 9}, D::kFloat32, 192),
      c("f32_three_wavefronts", {40, 36}, D::kFloat32, {36, 40}, D::kFloat32, 192),
  };
}

// Pre-defined matmuls of 16-bit tensors (the result too): partial tiles, k tails, batches with a
// broadcast A (few blocks: the emulator runs a host thread per lane).
struct MfmaMatmulCase {
  std::string name;
  Dims a, b, o;
  DType dtype;
};

inline std::vector<MfmaMatmulCase> mfma_matmul_cases() {
  std::vector<MfmaMatmulCase> cases;
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    cases.push_back({std::string(dtype_name(dt)) + "_37x40x45", {37, 40}, {40, 45}, {37, 45}, dt});
    cases.push_back({std::string(dtype_name(dt)) + "_batch_broadcast_a", {1, 20, 27}, {3, 27, 33}, {3, 20, 33}, dt});
  }
  return cases;
}

}  // namespace yirage::hip::testing
