// Text helpers of the C-family printers (C++, CUDA, HIP, OpenCL C, GLSL): lines with
// indentation, float literals, expressions (expr.hpp) as C text, and the names of the 16-bit
// element types every prelude defines.
#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/expr.hpp"

namespace yirage::codegen {

// A float literal that means exactly `value` in the C family ("(1.5f)", "NAN", "INFINITY").
std::string literal(double value);

// How a printer spells a load of element `index` (C text) of `buffer`.
using LoadSpelling = std::function<std::string(const BufferRef &buffer, const std::string &index)>;
// C's binding strength of an offset added to a pointer: a sum in parentheses, so that `p + (a + b)`
// is one pointer addition (on a GPU each would be a 64-bit add and a sign extension per element).
inline constexpr int kOffsetPrecedence = 7;
// The C text of `e` as an operand of an operator binding with `precedence` (0: a whole
// expression), loads spelled by `load` (default: yr_ld(name + index)).
std::string c_text(const Expr &e, int precedence = 0, const LoadSpelling &load = nullptr);

// The float expression of elementwise operator `kind` applied to values given as text.
std::string unary_expr(OpKind kind, const OpAttributes &attributes, const std::string &v);
std::string binary_expr(OpKind kind, const std::string &a, const std::string &b);

// Σ vars[d] · strides[d] as text, skipping zero strides ("0" when nothing is left); a sum is
// parenthesized, as an offset.
std::string index_expr(const std::vector<std::string> &vars, const Dims &strides);

// The generated name of an element type: float, yr_f16, yr_bf16 (each prelude defines the last two
// and yr_ld/yr_st for all three).
const char *element_type(DType dtype);

// Elements of `dtype` in 16 bytes: one vector load or store.
inline int64_t group_elements(DType dtype) {
  return 16 / static_cast<int64_t>(dtype_size(dtype));
}

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

}  // namespace yirage::codegen
