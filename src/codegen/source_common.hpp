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

#include "ir/dtype.hpp"
#include "ir/operator.hpp"
#include "ir/shape.hpp"

namespace yirage {
class BlockGraph;
}

namespace yirage::codegen {

// A float literal that means exactly `value` in C/C++/CUDA ("(1.5f)", "NAN", "INFINITY").
std::string literal(double value);

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

// Strides of `dims` when broadcast to `out` (same rank): 0 along dims of size 1.
Dims broadcast_strides(const Dims &dims, const Dims &out);

// A matmul operand's element strides (a view keeps its parent's), 0 along the batch dims (all
// but the last two) where it has size 1 and the output `out` does not.
Dims matmul_operand_strides(const Ref &x, const Dims &out);

// Σ vars[d] · strides[d], skipping zero strides ("0" when nothing is left).
std::string index_expr(const std::vector<std::string> &vars, const Dims &strides);

// The float expression of a unary / binary elementwise operator applied to expressions.
std::string unary_expr(OpKind kind, const OpAttributes &attributes, const std::string &v);
std::string binary_expr(OpKind kind, const std::string &a, const std::string &b);

class Printer {
 public:
  // indent: the nesting level lines start at (a body printed before its enclosing head).
  explicit Printer(int indent = 0) : indent_(indent) {}
  void line(const std::string &text) { out_ << std::string(2 * indent_, ' ') << text << '\n'; }
  // Appends text printed elsewhere, as it is.
  void text(const std::string &printed) { out_ << printed; }
  void open(const std::string &head) {
    line(head + " {");
    ++indent_;
  }
  void close(const std::string &tail = "") {
    --indent_;
    line("}" + tail);
  }
  std::string str() const { return out_.str(); }

  // Loops over `dims` (variables prefix0, prefix1, …) around body(vars); `pragma`, when not
  // empty, is printed before the outermost loop.
  void nest(const Dims &dims, const std::string &prefix, const std::string &pragma,
            const std::function<void(const std::vector<std::string> &)> &body);

 private:
  std::ostringstream out_;
  int indent_ = 0;
};

// Outer × extent × inner view of `dims` around `dim`.
struct AxisView {
  int64_t outer = 1, extent = 1, inner = 1;
};
AxisView axis_view(const Dims &dims, size_t dim);

// Where one µGraph block keeps its tiles and accumulator state: float offsets into one region
// (the CPU's per-thread arena, CUDA's shared memory), each rounded up to `align` floats. -1
// where an operator has no such array.
struct BlockLayout {
  std::vector<int64_t> tile;         // per tensor
  std::vector<int64_t> state;        // per operator: a reducing accumulator's sums, or the new
                                     // running max during an online-softmax (rescale) update
  std::vector<int64_t> running_max;  // per operator: a rescale accumulator's running max
  int64_t floats = 0;                // the region's size
};
// row_pad (empty, or one entry per tensor): floats left after each row (last dim) of a tile;
// elsewhere (empty, or one entry per tensor): tensors whose values the caller keeps elsewhere
// (they get no room); sums_elsewhere (empty, or one entry per operator): reducing accumulators
// whose running sums the caller keeps elsewhere (they get no state).
BlockLayout plan_block_layout(const BlockGraph &bg, int64_t align, const std::vector<int64_t> &row_pad = {},
                              const std::vector<bool> &elsewhere = {}, const std::vector<bool> &sums_elsewhere = {});

// The element offset, in the kernel-level tensor, of the tile that input iterator or output
// saver `op` handles in block (bx, by, bz) at for-loop iteration `it` (an expression).
std::string tile_base(const BlockGraph &bg, const Operator &op, const Dims &tile_dims,
                      const std::string &it);
// The largest number every term of that offset is a multiple of, whatever the block and
// iteration (0 when the offset is always 0).
int64_t tile_base_granule(const BlockGraph &bg, const Operator &op, const Dims &tile_dims);

// Elements of `dtype` in 16 bytes: one vector load or store.
inline int64_t group_elements(DType dtype) { return 16 / static_cast<int64_t>(dtype_size(dtype)); }

// The generated name of an element type: float, yr_f16, yr_bf16 (each prelude defines the last two
// and yr_ld/yr_st for all three).
const char *element_type(DType dtype);

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
