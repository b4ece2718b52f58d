// Fingerprint equivalence of two kernel graphs over the same inputs (ARCHITECTURE.md §4): both
// run through the reference interpreter in FieldArithmetic on the same random inputs; they are
// declared equivalent when every output agrees in every trial. docs/verification.md derives the
// probability that different graphs agree.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ir/kernel_graph.hpp"

namespace yirage::verify {

struct EquivalenceOptions {
  int trials = 3;     // independent trials, each with fresh inputs and random functions
  uint64_t seed = 1;  // everything random derives from it: results are reproducible
  int threads = 0;    // for the blocks of customized operators; 0: the hardware's count
};

struct EquivalenceResult {
  bool equivalent = false;
  int trials = 0;      // trials run (a difference stops the check early)
  double seconds = 0;  // wall time of the whole check
  std::string reason;  // why not equivalent; empty when equivalent
};

// Throws invalid_argument unless both graphs have the same inputs (count, dims, dtypes, order);
// Error(kUnsupported) when a graph cannot be fingerprinted (exp of an exp). Different output
// counts, shapes or dtypes make the graphs not equivalent, with the reason.
EquivalenceResult check_equivalence(const KernelGraph &a, const KernelGraph &b, const EquivalenceOptions &options);

// The same check against one reference graph many times: the reference's inputs and outputs
// of every trial are computed once, so each candidate costs one evaluation of itself.
class FingerprintCheck {
 public:
  FingerprintCheck(const KernelGraph &reference, const EquivalenceOptions &options);
  ~FingerprintCheck();
  FingerprintCheck(const FingerprintCheck &) = delete;
  FingerprintCheck &operator=(const FingerprintCheck &) = delete;

  // Throws what check_equivalence throws. Safe to call from several threads. `stop` (may be
  // null) is asked before every operator and block of the evaluations; true ends the check with
  // Error(kTimeout).
  EquivalenceResult check(const KernelGraph &candidate, const std::function<bool()> &stop = nullptr) const;

 private:
  struct Trial;
  const Trial &reference_trial(int trial, const std::function<bool()> &stop) const;

  const KernelGraph &reference_;
  EquivalenceOptions options_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Trial>> trials_;
  // Why a trial of the reference could not be evaluated (UNSUPPORTED), thrown again at once.
  mutable std::string unsupported_;
};

}  // namespace yirage::verify
