// What the C-like code generators share (cpu_source.cpp, cuda_source.cpp): a printer with
// indentation, tensor references with strides, index and broadcast arithmetic, and the
// expressions of elementwise operators. Expressions call the yr_* math helpers every generated
// prelude defines (yr_exp, yr_erf, yr_sqrt, yr_log, yr_pow, yr_sigmoid, yr_max, yr_clamp), so
// one expression serves host C++ and CUDA alike.
#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/c_text.hpp"
#include "codegen/stmt.hpp"
#include "codegen/ugraph_layout.hpp"
#include "ir/dtype.hpp"
#include "ir/operator.hpp"
#include "ir/shape.hpp"

namespace yirage::codegen {

// A tensor as the emitters see it: a pointer expression (float tile or typed tensor) and dims.
// `strides` (elements, one per dim) are those of a view into a larger row-major tensor; empty
// means compact.
struct Ref {
  std::string ptr;
  Dims dims;
  Dims strides;
  // Every value is a 16-bit float widened (a tile read from a float16/bfloat16 tensor): exact in
  // any format with 8 exponent and 10 mantissa bits, TensorFloat-32 included.
  bool widened_16bit = false;
  // ptr points at the 16-bit elements themselves (typed yr_f16 / yr_bf16), not at floats.
  bool raw_16bit = false;
  // The 16-bit type of widened or raw values.
  DType element = DType::kFloat32;
  // Every value is already rounded to TensorFloat-32 (a tensor-core view, CUDA).
  bool tf32_rounded = false;

  Dims element_strides() const { return strides.empty() ? row_major_strides(dims) : strides; }
};

// A matmul operand's element strides (a view keeps its parent's), 0 along the batch dims (all
// but the last two) where it has size 1 and the output `out` does not.
Dims matmul_operand_strides(const Ref &x, const Dims &out);

// The float expression of a unary / binary elementwise operator applied to expressions.
std::string unary_expr(OpKind kind, const OpAttributes &attributes, const std::string &v);
std::string binary_expr(OpKind kind, const std::string &a, const std::string &b);

// tile_base (ugraph_layout.hpp) as text, `it` an expression's text.
std::string tile_base(const BlockGraph &bg, const Operator &op, const Dims &tile_dims, const std::string &it);

// Emits body(vars) for every index of `dims` (variables prefix0, prefix1, …) inside the loops of
// a backend, which decide how the iterations are shared among threads (an OpenMP nest, a CUDA
// grid- or block-stride loop). Each iteration runs exactly once.
using LoopNest = std::function<void(const Dims &dims, const std::string &prefix,
                                    const std::function<void(const std::vector<std::string> &)> &body)>;

// The operators whose code is the same for every C-like backend, only the loops differing:
// elementwise (one iteration per output element, in row-major order), reductions (one per
// output), rms_norm (one per row), concat and split (one per output element). Returns false,
// emitting nothing, for any other operator (matmul, customized).
bool emit_portable_operator(Printer &p, const LoopNest &loop, const Operator &op,
                            const std::vector<Ref> &in, const std::vector<Ref> &out);

}  // namespace yirage::codegen
