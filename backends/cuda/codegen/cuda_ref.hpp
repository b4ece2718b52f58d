// A tensor as the CUDA generator's own paths name it: a pointer expression (a float tile in shared
// memory, a 16-bit stage, or a typed kernel parameter) with dims and strides, and what the tensor
// cores need to know about its values.
#pragma once

#include <string>

#include "codegen/stmt.hpp"
#include "ir/dtype.hpp"
#include "ir/shape.hpp"

namespace yirage::codegen::cuda {

struct Ref {
  std::string ptr;
  Dims dims;
  // Elements, one per dim, of a view into a larger row-major tensor; empty: compact.
  Dims strides;
  // Every value is a 16-bit float widened (a tile read from a float16/bfloat16 tensor): exact in
  // any format with 8 exponent and 10 mantissa bits, TensorFloat-32 included.
  bool widened_16bit = false;
  // ptr points at the 16-bit elements themselves (typed yr_f16 / yr_bf16), not at floats.
  bool raw_16bit = false;
  // The 16-bit type of widened or raw values.
  DType element = DType::kFloat32;
  // Every value is already rounded to TensorFloat-32 (a tensor-core view).
  bool tf32_rounded = false;

  Dims element_strides() const { return strides.empty() ? row_major_strides(dims) : strides; }
};

}  // namespace yirage::codegen::cuda
