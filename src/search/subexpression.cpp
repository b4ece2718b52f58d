#include "search/subexpression.hpp"

#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <utility>

namespace yirage::search {

namespace {

// A term's depth (a variable or constant is 1), memoised by text.
int expr_depth(const Expr &e, std::map<std::string, int> &memo) {
  auto found = memo.find(e->text);
  if (found != memo.end()) return found->second;
  int deepest = 0;
  for (const Expr &a : e->args) deepest = std::max(deepest, expr_depth(a, memo));
  memo.emplace(e->text, deepest + 1);
  return deepest + 1;
}

// A sum Σ_n e, or a quotient (Σ_n e)/b, as its (argument, divisor) texts (divisor "" for a plain
// sum) and n: what partial sums of the target are indexed by.
using SumKey = std::pair<std::pair<std::string, std::string>, int64_t>;
std::optional<SumKey> sum_key(const Expr &e) {
  if (e->op == ExprOp::kSum) return SumKey{{e->args[0]->text, ""}, e->size};
  if (e->op == ExprOp::kDiv && e->args[0]->op == ExprOp::kSum) {
    return SumKey{{e->args[0]->args[0]->text, e->args[1]->text}, e->args[0]->size};
  }
  return std::nullopt;
}

}  // namespace

// The algebra in Z3: an uninterpreted sort of terms, integer element counts, and the axioms of
// docs/search.md as quantified formulas (Z3 picks the instantiation patterns).
struct SubexpressionOracle::Z3State {
  z3::context context;
  z3::solver solver{context};
  z3::sort term = context.uninterpreted_sort("T");
  z3::sort count = context.int_sort();
  z3::func_decl add = context.function("add", term, term, term);
  z3::func_decl mul = context.function("mul", term, term, term);
  z3::func_decl div = context.function("div", term, term, term);
  z3::func_decl neg = context.function("neg", term, term);
  z3::func_decl sum = context.function("sum", count, term, term);
  z3::func_decl rms = context.function("rms", count, term, term);
  z3::func_decl exp = context.function("exp", term, term);
  z3::func_decl subexpr = context.function("subexpr", term, term, context.bool_sort());
  std::map<std::string, z3::func_decl> functions;  // other uninterpreted functions
  std::vector<z3::expr> roots;

  explicit Z3State(int timeout_ms) {
    z3::params p(context);
    p.set("rlimit", static_cast<unsigned>(timeout_ms));
    solver.set(p);
    const z3::expr x = context.constant("x", term), y = context.constant("y", term), z = context.constant("z", term);
    const z3::expr i = context.int_const("i"), j = context.int_const("j");
    auto all = [&](std::initializer_list<z3::expr> vars, const z3::expr &body) {
      z3::expr_vector v(context);
      for (const z3::expr &e : vars) v.push_back(e);
      solver.add(z3::forall(v, body));
    };
    // Ring laws and division.
    all({x, y}, add(x, y) == add(y, x));
    all({x, y}, mul(x, y) == mul(y, x));
    all({x, y, z}, add(add(x, y), z) == add(x, add(y, z)));
    all({x, y, z}, mul(mul(x, y), z) == mul(x, mul(y, z)));
    all({x, y, z}, mul(x, add(y, z)) == add(mul(x, y), mul(x, z)));
    all({x, y, z}, div(add(x, y), z) == add(div(x, z), div(y, z)));
    all({x, y, z}, mul(x, div(y, z)) == div(mul(x, y), z));
    all({x, y, z}, div(div(x, y), z) == div(x, mul(y, z)));
    all({x}, neg(neg(x)) == x);
    all({x, y}, mul(neg(x), y) == neg(mul(x, y)));
    all({x, y}, exp(add(x, y)) == mul(exp(x), exp(y)));
    // Sums: linearity, constants pulled out (the abstraction forgets indices), splitting.
    all({i, x, y}, sum(i, add(x, y)) == add(sum(i, x), sum(i, y)));
    all({i, x, y}, sum(i, div(x, y)) == div(sum(i, x), y));
    all({i, x}, sum(i, neg(x)) == neg(sum(i, x)));
    all({i, j, x}, z3::implies(i > 0 && j > 0, sum(i, sum(j, x)) == sum(i * j, x)));
    // Occurrence: reflexive, transitive, every argument occurs in its application, and a
    // partial sum occurs in a longer one.
    all({x}, subexpr(x, x));
    all({x, y, z}, z3::implies(subexpr(x, y) && subexpr(y, z), subexpr(x, z)));
    for (const z3::func_decl *f : {&add, &mul, &div}) {
      all({x, y}, subexpr(x, (*f)(x, y)) && subexpr(y, (*f)(x, y)));
    }
    all({x}, subexpr(x, neg(x)) && subexpr(x, exp(x)));
    all({i, x}, subexpr(x, sum(i, x)) && subexpr(x, rms(i, x)));
    all({i, j, x}, z3::implies(i > 0 && j % i == 0, subexpr(sum(i, x), sum(j, x))));
  }

  z3::expr translate(const Expr &e, std::map<std::string, z3::expr> &done) {
    auto found = done.find(e->text);
    if (found != done.end()) return found->second;
    std::vector<z3::expr> args;
    for (const Expr &a : e->args) args.push_back(translate(a, done));
    auto fold = [&](const z3::func_decl &f) {
      z3::expr acc = args[0];
      for (size_t k = 1; k < args.size(); ++k) acc = f(acc, args[k]);
      return acc;
    };
    z3::expr result = context.bool_val(true);  // replaced below
    switch (e->op) {
      case ExprOp::kVar:
      case ExprOp::kConst: result = context.constant(e->text.c_str(), term); break;
      case ExprOp::kAdd: result = fold(add); break;
      case ExprOp::kMul: result = fold(mul); break;
      case ExprOp::kDiv: result = div(args[0], args[1]); break;
      case ExprOp::kNeg: result = neg(args[0]); break;
      case ExprOp::kSum: result = sum(context.int_val(e->size), args[0]); break;
      case ExprOp::kRms: result = rms(context.int_val(e->size), args[0]); break;
      case ExprOp::kFn: result = apply(e, args); break;
    }
    done.emplace(e->text, result);
    return result;
  }

  z3::expr apply(const Expr &e, const std::vector<z3::expr> &args) {
    if (e->name == "exp" && args.size() == 1) return exp(args[0]);
    const std::string key = e->name + "/" + std::to_string(args.size()) + (e->size ? "s" : "");
    auto f = functions.find(key);
    if (f == functions.end()) {
      z3::sort_vector domain(context);
      if (e->size) domain.push_back(count);
      for (size_t k = 0; k < args.size(); ++k) domain.push_back(term);
      f = functions.emplace(key, context.function(key.c_str(), domain, term)).first;
    }
    z3::expr_vector actual(context);
    if (e->size) actual.push_back(context.int_val(e->size));
    for (const z3::expr &a : args) actual.push_back(a);
    return f->second(actual);
  }
};

SubexpressionOracle::SubexpressionOracle(const std::vector<Expr> &target_terms, int z3_rlimit) : z3_rlimit_(z3_rlimit) {
  std::function<void(const Expr &)> index = [&](const Expr &e) {
    if (!index_.insert(e->text).second) return;
    if (e->op == ExprOp::kVar) variables_.insert(e->size);
    if (const std::optional<SumKey> key = sum_key(e)) summed_[key->first].push_back(key->second);
    // a+c occurs in a+b+c: every sub-multiset of at least two arguments of add and mul.
    const size_t n = e->args.size();
    if ((e->op == ExprOp::kAdd || e->op == ExprOp::kMul) && n >= 3 && n <= 10) {
      for (uint32_t mask = 1; mask + 1 < (1u << n); ++mask) {
        if (__builtin_popcount(mask) < 2) continue;
        std::vector<Expr> part;
        for (size_t k = 0; k < n; ++k) {
          if (mask & (1u << k)) part.push_back(e->args[k]);
        }
        index(e->op == ExprOp::kAdd ? expr_add(part) : expr_mul(part));
      }
    }
    for (const Expr &a : e->args) index(a);
  };
  for (const Expr &t : target_terms) index(t);
  // Z3 is asked about the maximal terms only, each once: a term that occurs inside another
  // occurs wherever that one does (a chain of n operators has one maximal term, not n).
  std::set<std::string> inner, seen;
  std::function<void(const Expr &)> mark_inner = [&](const Expr &e) {
    for (const Expr &a : e->args) {
      if (inner.insert(a->text).second) mark_inner(a);
    }
  };
  for (const Expr &t : target_terms) mark_inner(t);
  for (const Expr &t : target_terms) {
    if (!inner.count(t->text) && seen.insert(t->text).second) roots_.push_back(t);
  }
  // Z3 (4.8) takes time linear in a term's depth per node to delete its context: terms deeper
  // than kMaxZ3Depth are left to the index (a query about them counts as unknown).
  std::map<std::string, int> depth;
  for (const Expr &t : roots_) z3_usable_ = z3_usable_ && expr_depth(t, depth) <= kMaxZ3Depth;
}

SubexpressionOracle::~SubexpressionOracle() = default;

// A term of the target, or a partial sum of one: Σ_m e where the target sums e over a multiple
// of m, and (Σ_m e)/b where it has (Σ_n e)/b (a for-loop's share of a normalized product,
// rms_norm(x)·W = (Σ x·W)/rms(x), before the loop adds the shares up: Z3 would need a sum over
// the loop, which the query lacks, to see it).
bool SubexpressionOracle::in_index(const Expr &term) const {
  if (index_.count(term->text)) return true;
  const std::optional<SumKey> key = sum_key(term);
  if (!key) return false;
  const auto sizes = summed_.find(key->first);
  if (sizes == summed_.end()) return false;
  const int64_t m = key->second;
  return std::any_of(sizes->second.begin(), sizes->second.end(), [m](int64_t n) { return n % m == 0; });
}

std::optional<bool> SubexpressionOracle::remembered(const Expr &term) {
  MemoShard &shard = memo_[std::hash<std::string>{}(term->text) % memo_.size()];
  std::lock_guard lock(shard.mutex);
  const auto it = shard.answers.find(term->text);
  if (it == shard.answers.end()) return std::nullopt;
  memo_hits_.fetch_add(1, std::memory_order_relaxed);
  return it->second;
}

bool SubexpressionOracle::occurs(const Expr &term) {
  queries_.fetch_add(1, std::memory_order_relaxed);
  // The memo's shards and the index (built once, then only read) answer without the oracle's
  // lock; only Z3's questions take it. With one lock around every question, a process's search
  // threads took turns: one rank of 2 threads searched no faster than one thread.
  if (const std::optional<bool> known = remembered(term)) return *known;
  bool answer = false;
  const auto foreign = [&] {  // reads an input the target does not read
    const std::vector<int64_t> read = expr_variables(term);
    return std::any_of(read.begin(), read.end(), [&](int64_t v) { return !variables_.count(v); });
  };
  if (in_index(term)) {
    index_yes_.fetch_add(1, std::memory_order_relaxed);
    answer = true;
  } else if (foreign()) {
    index_no_.fetch_add(1, std::memory_order_relaxed);
  } else if (z3_rlimit_ > 0) {
    std::map<std::string, int> depth;
    std::unique_lock lock(mutex_);
    if (!z3_usable_ || expr_depth(term, depth) > kMaxZ3Depth) {
      ++stats_.z3_unknown;  // too deep to ask Z3: unknown, as when Z3 gives up
    } else {
      answered_.wait(lock, [&] { return !proving_.count(term->text); });
      if (const std::optional<bool> known = remembered(term)) return *known;  // proved meanwhile
      answer = ask_z3(term, lock);
    }
    // Remembered before the lock goes: a thread that waited for this proof then finds it.
    remember(term, answer);
    return answer;
  }
  remember(term, answer);
  return answer;
}

void SubexpressionOracle::remember(const Expr &term, bool answer) {
  MemoShard &shard = memo_[std::hash<std::string>{}(term->text) % memo_.size()];
  std::lock_guard lock(shard.mutex);
  shard.answers.emplace(term->text, answer);
}

bool SubexpressionOracle::ask_z3(const Expr &term, std::unique_lock<std::mutex> &lock) {
  proving_.insert(term->text);
  std::unique_ptr<Z3State> z;
  if (!idle_z3_.empty()) {
    z = std::move(idle_z3_.back());
    idle_z3_.pop_back();
  }
  // Whatever happens in Z3 (it throws z3::exception, e.g. out of memory), the term is no longer
  // being proved and its context goes back to the pool once the lock is held again.
  struct Release {
    SubexpressionOracle &oracle;
    const std::string &text;
    std::unique_ptr<Z3State> &z;
    ~Release() {
      oracle.proving_.erase(text);
      if (z) oracle.idle_z3_.push_back(std::move(z));
      oracle.answered_.notify_all();
    }
  } release{*this, term->text, z};
  lock.unlock();
  const auto started = std::chrono::steady_clock::now();
  z3::check_result r = z3::unknown;
  try {
    if (!z) z = std::make_unique<Z3State>(z3_rlimit_);
    std::map<std::string, z3::expr> done;
    const z3::expr t = z->translate(term, done);
    z3::expr_vector occurs_in(z->context);  // one flat disjunction, not a chain of ors
    for (const Expr &root : roots_) occurs_in.push_back(z->subexpr(t, z->translate(root, done)));
    z->solver.push();
    z->solver.add(!z3::mk_or(occurs_in));
    r = z->solver.check();
    z->solver.pop();
  } catch (...) {
    z.reset();  // it may hold the query's scope: not reused
    lock.lock();
    throw;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  lock.lock();
  ++stats_.z3_queries;
  if (r == z3::unsat) ++stats_.z3_yes;
  if (r == z3::unknown) ++stats_.z3_unknown;
  stats_.z3_seconds += seconds;
  return r == z3::unsat;
}

OracleStats SubexpressionOracle::stats() const {
  std::lock_guard lock(mutex_);
  OracleStats s = stats_;
  s.queries = queries_.load(std::memory_order_relaxed);
  s.memo_hits = memo_hits_.load(std::memory_order_relaxed);
  s.index_yes = index_yes_.load(std::memory_order_relaxed);
  s.index_no = index_no_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace yirage::search
