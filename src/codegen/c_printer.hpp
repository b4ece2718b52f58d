// Prints the loop-level form (expr.hpp, stmt.hpp) as C-family source. C++, CUDA, HIP, OpenCL C
// and GLSL spell expressions, float and integer declarations, ifs and serial loops alike; a
// target derives from CPrinter and says how it spells what differs: how loops are shared by
// threads, how buffers are read and written, barriers, and the structured statements it has a
// faster way to do (a matmul on its matrix units, a row reduction across a warp).
#pragma once

#include <string>

#include "codegen/c_text.hpp"
#include "codegen/stmt.hpp"

namespace yirage::codegen {

class CPrinter {
 public:
  explicit CPrinter(Printer &p) : p_(p) {}
  virtual ~CPrinter() = default;
  CPrinter(const CPrinter &) = delete;
  CPrinter &operator=(const CPrinter &) = delete;

  void print(const Block &block);
  void print(const Stmt &stmt);
  // The C text of `e`.
  std::string text(const Expr &e) const;
  // The text of `e` as an offset added to a pointer: a sum in parentheses, so that `p + offset`
  // is one pointer addition (on a GPU each would be a 64-bit add and a sign extension).
  std::string offset_text(const Expr &e) const;

  // The type of integer indices and values (loop variables, integer Lets).
  virtual std::string int_type() const { return "int64_t"; }
  // Every thread of a block waits for the others (Barrier).
  virtual void print_barrier() = 0;
  Printer &out() { return p_; }

 protected:
  // A loop shared among threads (Sharing other than kSerial).
  virtual void print_shared_loop(const Loop &loop) = 0;
  // Serial loops: one `for` per dim, vars[d] from 0 to dims[d].
  virtual void print_serial_loop(const Loop &loop);
  // Structured statements: their plain expansion unless the target does better.
  virtual void print_matmul(const Matmul &m) { print(expand(m)); }
  virtual void print_row_reduce(const RowReduce &r) { print(expand(r)); }
  virtual void print_copy(const TileCopy &c) { print(expand(c)); }
  // Where a shared or register buffer starts, as a pointer ("(arena + 64)").
  virtual std::string pointer(const BufferRef &buffer) const = 0;
  // Reads element `index` of a buffer as a float; stores `value` there.
  virtual std::string load_text(const BufferRef &buffer, const std::string &index) const;
  virtual void print_store(const BufferRef &buffer, const std::string &index, const std::string &value);

  // `e` as an operand of an operator binding with `precedence` (parenthesized when it binds
  // more loosely).
  std::string text(const Expr &e, int precedence) const;

  Printer &p_;
};

}  // namespace yirage::codegen
