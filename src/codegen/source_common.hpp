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

#include "ir/operator.hpp"
#include "ir/shape.hpp"

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

  Dims element_strides() const { return strides.empty() ? row_major_strides(dims) : strides; }
};

// Strides of `dims` when broadcast to `out` (same rank): 0 along dims of size 1.
Dims broadcast_strides(const Dims &dims, const Dims &out);

// Σ vars[d] · strides[d], skipping zero strides ("0" when nothing is left).
std::string index_expr(const std::vector<std::string> &vars, const Dims &strides);

// The float expression of a unary / binary elementwise operator applied to expressions.
std::string unary_expr(OpKind kind, const OpAttributes &attributes, const std::string &v);
std::string binary_expr(OpKind kind, const std::string &a, const std::string &b);

class Printer {
 public:
  void line(const std::string &text) { out_ << std::string(2 * indent_, ' ') << text << '\n'; }
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

}  // namespace yirage::codegen
