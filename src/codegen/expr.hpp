// Expressions of the loop-level form (docs/codegen.md): index arithmetic on integers and the
// float values of elementwise code, as small value trees that every target prints in its own
// syntax (c_printer.hpp prints the C family: C++, CUDA, OpenCL C, GLSL, HIP).
//
// Values are computed in float32 whatever the stored type: a Load converts the element it reads,
// a Store (stmt.hpp) rounds to the stored type. Math beyond + - * / is a call of one of the
// helpers every target's prelude defines (kHelpers), so that one expression serves every target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/operator.hpp"
#include "ir/shape.hpp"

namespace yirage::codegen {

// Where a buffer lives.
enum class MemorySpace {
  kGlobal,     // a kernel parameter: a tensor in device memory, elements of its dtype
  kShared,     // the block's arena (GPU shared memory, a CPU thread's cache-resident arena), float32
               // but where a narrow tile holds its 16-bit dtype (ugraph_layout.hpp)
  kRegisters,  // a thread's own array, float32
};

// A buffer as expressions and statements name it.
struct BufferRef {
  MemorySpace space = MemorySpace::kGlobal;
  // kGlobal: the parameter ("in0", "out1"); kRegisters: the array; kShared: empty (the arena).
  std::string name;
  int64_t offset = 0;               // kShared: where the buffer starts in the arena, in floats
  DType element = DType::kFloat32;  // what is stored

  bool operator==(const BufferRef &) const = default;
};
BufferRef global_buffer(const std::string &name, DType element);
BufferRef shared_buffer(int64_t offset);

// The math helpers every prelude defines, on floats: yr_exp, yr_erf, yr_sqrt, yr_rsqrt, yr_log,
// yr_pow, yr_sigmoid, yr_max (NaN if either is NaN), yr_clamp (NaN stays NaN).
extern const char *const kHelpers[9];

enum class ExprKind {
  kInt,     // an integer constant (64-bit)
  kFloat,   // a float constant (any double; printers spell NaN and infinities)
  kVar,     // a named value: a loop index, a block index, a Let
  kBinary,  // args[0] op args[1]: + - * / % on integers or floats; < > <= >= == != on either
  kNeg,     // -args[0]
  kSelect,  // args[0] ? args[1] : args[2]
  kLoad,    // element args[0] of `buffer`, as a float
  kCall,    // helper `name` (kHelpers) of args
};

struct Expr {
  ExprKind kind = ExprKind::kInt;
  int64_t int_value = 0;
  double float_value = 0;
  std::string name;  // kVar: the variable; kBinary: the operator; kCall: the helper
  BufferRef buffer;  // kLoad
  std::vector<Expr> args;

  bool is_int(int64_t v) const { return kind == ExprKind::kInt && int_value == v; }
  bool operator==(const Expr &) const = default;
};

Expr int_const(int64_t v);
Expr float_const(double v);
Expr var(const std::string &name);
Expr load(const BufferRef &buffer, Expr index);
Expr call(const std::string &helper, std::vector<Expr> args);
Expr select(Expr condition, Expr if_true, Expr if_false);
Expr binary(const std::string &op, Expr a, Expr b);

// Integer arithmetic folds constants and the identities 0 + x, 1 · x, 0 · x, x / 1, x % 1;
// float arithmetic is kept as written (folding would change rounding).
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);

// Σ vars[d] · strides[d], skipping zero strides (0 when nothing is left).
Expr index_of(const std::vector<Expr> &vars, const Dims &strides);
std::vector<Expr> vars_of(const std::vector<std::string> &names);

// The float expression of elementwise operator `kind` applied to values.
Expr unary_value(OpKind kind, const OpAttributes &attributes, const Expr &v);
Expr binary_value(OpKind kind, const Expr &a, const Expr &b);

}  // namespace yirage::codegen
