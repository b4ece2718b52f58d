// Abstract expressions (ARCHITECTURE.md §4): a symbolic term per tensor that forgets shapes and
// tiling but keeps what is computed — inputs are variables, matmul is sum(k, mul(a, b)), a
// reduction is sum(n, x), rms_norm is div(x, rms(n, x)). The search keeps a partial µGraph only
// if every term it computes occurs in the target graph's terms under the algebra's axioms
// (docs/search.md lists them); SubexpressionOracle answers that question.
//
// Terms are immutable and hash-consed by their canonical text. The constructors normalise as
// they build (associative-commutative add and mul flattened and sorted, divisions pulled out of
// products and sums, nested sums merged), so most equal terms are equal as text and the rest
// is left to Z3.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace yirage::search {

enum class ExprOp : uint8_t {
  kVar,    // graph input `size`
  kConst,  // a constant, named by `name`
  kAdd,    // n-ary, sorted
  kMul,    // n-ary, sorted
  kDiv,
  kNeg,
  kSum,  // sum over `size` elements
  kRms,  // sqrt(mean of squares over `size` elements)
  kFn,   // an uninterpreted function `name` (exp, silu, max, sum-max over `size`…)
};

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  ExprOp op;
  int64_t size = 0;  // kVar: input index; kSum, kRms, sized kFn: element count
  std::string name;  // kConst, kFn
  std::vector<Expr> args;
  std::string text;  // canonical text: equal text, equal term
};

Expr expr_var(int64_t input);
Expr expr_const(const std::string &name);
Expr expr_add(std::vector<Expr> args);
Expr expr_mul(std::vector<Expr> args);
Expr expr_div(Expr a, Expr b);
Expr expr_neg(Expr a);
Expr expr_sum(int64_t size, Expr a);
Expr expr_rms(int64_t size, Expr a);
// size 0 for functions without an element count.
Expr expr_fn(const std::string &name, std::vector<Expr> args, int64_t size = 0);

// The input indices a term reads.
std::vector<int64_t> expr_variables(const Expr &e);

}  // namespace yirage::search
