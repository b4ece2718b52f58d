// "Does this term occur in the target's terms?" — the pruning question of the search
// (ARCHITECTURE.md §4). A term t is a subexpression of the target when some target term u
// satisfies subexpr(t, u) under the axioms of docs/search.md: ring laws, division and sum rules,
// exp of a sum, and partial sums (Σ over m elements occurs in Σ over n when m divides n).
//
// Two deciders, one answer. A canonical-text index of every target subterm (with the sub-sums
// of n-ary add/mul and the partial sums) settles a query exactly when the term is there, or
// reads an input the target never reads. Everything else goes to Z3: the axioms as quantified
// formulas, the query as the negation of subexpr(t, u) for every target term u; unsat means
// "occurs". Z3 gets a resource limit per query; unknown or out of it counts as "does not occur"
// (the search's benchmark checks on small instances that no candidate is lost this way).
// Answers are memoised; the oracle is safe to share between threads. Z3 queries run outside the
// lock, each on a Z3 context of its own (contexts are taken from a pool, made as threads need
// them), so that the search's threads do not wait on one another's proofs (with one lock around
// Z3, a second thread gained little). A thread asking what another is proving waits for that
// answer instead of proving it again.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "search/abstract_expr.hpp"

namespace yirage::search {

struct OracleStats {
  int64_t queries = 0;     // questions asked, memoised ones included
  int64_t memo_hits = 0;   // answered from the memo
  int64_t index_yes = 0;   // settled by the subterm index
  int64_t index_no = 0;    // settled by reading an input the target does not read
  int64_t z3_queries = 0;  // sent to Z3
  int64_t z3_yes = 0;      // Z3 proved occurrence
  int64_t z3_unknown = 0;  // Z3 gave up or ran out of time (treated as "does not occur")
  double z3_seconds = 0;   // time spent in Z3, summed over the threads
};

class SubexpressionOracle {
 public:
  // `target_terms`: the term of every tensor of the target graph. z3_rlimit bounds each Z3
  // query; 0 skips Z3 (only the index answers).
  SubexpressionOracle(const std::vector<Expr> &target_terms, int z3_rlimit);
  ~SubexpressionOracle();
  SubexpressionOracle(const SubexpressionOracle &) = delete;
  SubexpressionOracle &operator=(const SubexpressionOracle &) = delete;

  bool occurs(const Expr &term);
  OracleStats stats() const;

  // Deeper terms are not sent to Z3 (see the constructor).
  static constexpr int kMaxZ3Depth = 64;

 private:
  struct Z3State;
  bool in_index(const Expr &term) const;
  bool ask_z3(const Expr &term, std::unique_lock<std::mutex> &lock);  // lock held on entry and exit
  std::optional<bool> remembered(const Expr &term);                   // the memo's answer, if any
  void remember(const Expr &term, bool answer);

  std::set<std::string> index_;
  // (Σ's argument, divisor) texts -> sizes summed, of every Σ_n e (divisor "") and every
  // quotient (Σ_n e)/b of the target's terms.
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> summed_;
  std::set<int64_t> variables_;
  std::vector<Expr> roots_;  // the maximal target terms, each once, for Z3
  int z3_rlimit_;
  bool z3_usable_ = true;  // no root deeper than kMaxZ3Depth
  mutable std::mutex mutex_;
  std::condition_variable answered_;  // a Z3 query finished
  // Answers given, in shards by the term's hash, each with its lock: the lock-free path of occurs.
  struct MemoShard {
    std::mutex mutex;
    std::unordered_map<std::string, bool> answers;
  };
  std::array<MemoShard, 64> memo_;
  std::atomic<int64_t> queries_{0}, memo_hits_{0}, index_yes_{0}, index_no_{0};
  std::set<std::string> proving_;  // terms Z3 is working on
  OracleStats stats_;
  std::vector<std::unique_ptr<Z3State>> idle_z3_;  // contexts no query is using
};

}  // namespace yirage::search
