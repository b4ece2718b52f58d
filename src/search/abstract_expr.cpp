#include "search/abstract_expr.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <string_view>

namespace yirage::search {

namespace {

Expr make(ExprOp op, int64_t size, std::string name, std::vector<Expr> args) {
  auto node = std::make_shared<ExprNode>();
  node->op = op;
  node->size = size;
  node->name = std::move(name);
  node->args = std::move(args);
  switch (op) {
    case ExprOp::kVar: node->text = "x" + std::to_string(size); break;
    case ExprOp::kConst: node->text = "c" + node->name; break;
    default: {
      // One allocation: terms are built at every attempt of the search, most of them to be
      // looked up and dropped.
      static const char *const names[] = {"", "", "add", "mul", "div", "neg", "sum", "rms", ""};
      const std::string_view head = op == ExprOp::kFn ? std::string_view(node->name) : names[static_cast<int>(op)];
      const bool sized = op == ExprOp::kSum || op == ExprOp::kRms || (op == ExprOp::kFn && size > 0);
      const std::string count = sized ? std::to_string(size) + ',' : std::string();
      size_t length = head.size() + count.size() + 2 + node->args.size();
      for (const Expr &a : node->args) length += a->text.size();
      std::string &text = node->text;
      text.reserve(length);
      text += head;
      text += '(';
      text += count;
      for (size_t i = 0; i < node->args.size(); ++i) {
        if (i) text += ',';
        text += node->args[i]->text;
      }
      text += ')';
    }
  }
  return node;
}

// Flattens nested `op` nodes into one argument list and sorts it by canonical text.
std::vector<Expr> flatten_sorted(ExprOp op, std::vector<Expr> args) {
  std::vector<Expr> flat;
  for (Expr &a : args) {
    if (a->op == op) {
      flat.insert(flat.end(), a->args.begin(), a->args.end());
    } else {
      flat.push_back(std::move(a));
    }
  }
  std::sort(flat.begin(), flat.end(), [](const Expr &x, const Expr &y) { return x->text < y->text; });
  return flat;
}

}  // namespace

Expr expr_var(int64_t input) {
  return make(ExprOp::kVar, input, "", {});
}
Expr expr_const(const std::string &name) {
  return make(ExprOp::kConst, 0, name, {});
}

Expr expr_add(std::vector<Expr> args) {
  auto flat = flatten_sorted(ExprOp::kAdd, std::move(args));
  if (flat.size() == 1) return flat[0];
  return make(ExprOp::kAdd, 0, "", std::move(flat));
}

// A product with a quotient among its factors becomes one quotient: a·(b/c) = (a·b)/c.
Expr expr_mul(std::vector<Expr> args) {
  std::vector<Expr> numerators, denominators;
  for (Expr &a : args) {
    if (a->op == ExprOp::kDiv) {
      numerators.push_back(a->args[0]);
      denominators.push_back(a->args[1]);
    } else {
      numerators.push_back(std::move(a));
    }
  }
  auto flat = flatten_sorted(ExprOp::kMul, std::move(numerators));
  Expr product = flat.size() == 1 ? flat[0] : make(ExprOp::kMul, 0, "", std::move(flat));
  if (denominators.empty()) return product;
  return expr_div(product, expr_mul(std::move(denominators)));
}

// (a/b)/c = a/(b·c).
Expr expr_div(Expr a, Expr b) {
  if (a->op == ExprOp::kDiv) return expr_div(a->args[0], expr_mul({a->args[1], std::move(b)}));
  return make(ExprOp::kDiv, 0, "", {std::move(a), std::move(b)});
}

Expr expr_neg(Expr a) {
  if (a->op == ExprOp::kNeg) return a->args[0];
  return make(ExprOp::kNeg, 0, "", {std::move(a)});
}

// Σ_i Σ_j x = Σ_{i·j} x; Σ (a/b) = (Σ a)/b; Σ (a + b) = Σ a + Σ b. The algebra forgets which
// index a term depends on, so these hold for the abstraction, not for every tensor program:
// pruning with them only keeps more, and fingerprints decide.
Expr expr_sum(int64_t size, Expr a) {
  if (size == 1) return a;
  switch (a->op) {
    case ExprOp::kSum: return expr_sum(size * a->size, a->args[0]);
    case ExprOp::kDiv: return expr_div(expr_sum(size, a->args[0]), a->args[1]);
    case ExprOp::kAdd: {
      std::vector<Expr> terms;
      for (const Expr &t : a->args) terms.push_back(expr_sum(size, t));
      return expr_add(std::move(terms));
    }
    default: return make(ExprOp::kSum, size, "", {std::move(a)});
  }
}

Expr expr_rms(int64_t size, Expr a) {
  return make(ExprOp::kRms, size, "", {std::move(a)});
}

Expr expr_fn(const std::string &name, std::vector<Expr> args, int64_t size) {
  return make(ExprOp::kFn, size, name, std::move(args));
}

std::vector<int64_t> expr_variables(const Expr &e) {
  std::set<int64_t> found;
  std::function<void(const Expr &)> visit = [&](const Expr &x) {
    if (x->op == ExprOp::kVar) found.insert(x->size);
    for (const Expr &a : x->args) visit(a);
  };
  visit(e);
  return {found.begin(), found.end()};
}

}  // namespace yirage::search
