#include "verify/equivalence.hpp"

#include <chrono>

#include "reference/interpreter.hpp"
#include "util/counter_random.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"
#include "verify/field_arithmetic.hpp"

namespace yirage::verify {

namespace {

void check_same_inputs(const KernelGraph &a, const KernelGraph &b) {
  if (a.inputs().size() != b.inputs().size()) {
    invalid_argument("equivalent: the graphs have " + std::to_string(a.inputs().size()) + " and " +
                     std::to_string(b.inputs().size()) + " inputs");
  }
  for (size_t i = 0; i < a.inputs().size(); ++i) {
    const Tensor &x = a.tensor(a.inputs()[i]), &y = b.tensor(b.inputs()[i]);
    if (x.dims != y.dims || x.dtype != y.dtype) {
      invalid_argument("equivalent: input " + std::to_string(i) + " is " + to_string(x.dims) + " " +
                       dtype_name(x.dtype) + " in the first graph and " + to_string(y.dims) + " " +
                       dtype_name(y.dtype) + " in the second");
    }
  }
}

// Why the outputs cannot be equal whatever the inputs, or "" when their shapes agree.
std::string output_mismatch(const KernelGraph &a, const KernelGraph &b) {
  if (a.outputs().size() != b.outputs().size()) {
    return "the graphs have " + std::to_string(a.outputs().size()) + " and " + std::to_string(b.outputs().size()) +
           " outputs";
  }
  for (size_t i = 0; i < a.outputs().size(); ++i) {
    const Tensor &x = a.tensor(a.outputs()[i]), &y = b.tensor(b.outputs()[i]);
    if (x.dims != y.dims || x.dtype != y.dtype) {
      return "output " + std::to_string(i) + " is " + to_string(x.dims) + " " + dtype_name(x.dtype) +
             " in the first graph and " + to_string(y.dims) + " " + dtype_name(y.dtype) + " in the second";
    }
  }
  return "";
}

}  // namespace

struct FingerprintCheck::Trial {
  FieldArithmetic field;
  std::vector<reference::Buffer<FieldValue>> inputs, outputs;
};

FingerprintCheck::FingerprintCheck(const KernelGraph &reference, const EquivalenceOptions &options)
    : reference_(reference), options_(options) {
  if (options.trials < 1) invalid_argument("equivalent: trials must be at least 1");
  if (options_.threads <= 0) options_.threads = default_thread_count();
}

FingerprintCheck::~FingerprintCheck() = default;

EquivalenceResult FingerprintCheck::check(const KernelGraph &candidate, const std::function<bool()> &stop) const {
  const auto started = std::chrono::steady_clock::now();
  check_same_inputs(reference_, candidate);
  EquivalenceResult result;
  result.reason = output_mismatch(reference_, candidate);
  for (int trial = 0; result.reason.empty() && trial < options_.trials; ++trial) {
    const Trial &t = reference_trial(trial, stop);
    const reference::Interpreter<FieldArithmetic> interpreter(t.field, options_.threads, stop);
    const auto out = interpreter.run(candidate, t.inputs);
    ++result.trials;
    for (size_t o = 0; o < out.size() && result.reason.empty(); ++o) {
      for (size_t e = 0; e < out[o].size(); ++e) {
        if (!(out[o][e] == t.outputs[o][e])) {
          result.reason = "output " + std::to_string(o) + " differs at element " + std::to_string(e) + " in trial " +
                          std::to_string(trial);
          break;
        }
      }
    }
  }
  result.equivalent = result.reason.empty();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

// Trials are computed on first use (a difference in trial 0 never pays for trial 1).
const FingerprintCheck::Trial &FingerprintCheck::reference_trial(int trial, const std::function<bool()> &stop) const {
  std::lock_guard lock(mutex_);
  if (!unsupported_.empty()) throw Error(ErrorCode::kUnsupported, unsupported_);
  while (trials_.size() <= static_cast<size_t>(trial)) {
    const uint64_t trial_seed = options_.seed * 0x100000001b3ull + static_cast<uint64_t>(trials_.size());
    auto t = std::make_unique<Trial>(Trial{FieldArithmetic(trial_seed), {}, {}});
    for (size_t k = 0; k < reference_.inputs().size(); ++k) {
      const int64_t n = num_elements(reference_.tensor(reference_.inputs()[k]).dims);
      reference::Buffer<FieldValue> values(static_cast<size_t>(n));
      const uint64_t key = random_key(trial_seed, k);
      fill_in_chunks(n, options_.threads, [&](int64_t first, int64_t last) {
        for (int64_t e = first; e < last; ++e) {
          values[static_cast<size_t>(e)] = t->field.random(key, static_cast<uint64_t>(e));
        }
      });
      t->inputs.push_back(std::move(values));
    }
    const reference::Interpreter<FieldArithmetic> interpreter(t->field, options_.threads, stop);
    try {
      t->outputs = interpreter.run(reference_, t->inputs);
    } catch (const Error &e) {
      if (e.code() == ErrorCode::kUnsupported) unsupported_ = e.what();
      throw;
    }
    trials_.push_back(std::move(t));
  }
  return *trials_[static_cast<size_t>(trial)];
}

EquivalenceResult check_equivalence(const KernelGraph &a, const KernelGraph &b, const EquivalenceOptions &options) {
  const auto started = std::chrono::steady_clock::now();
  const FingerprintCheck check(a, options);
  EquivalenceResult result = check.check(b);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace yirage::verify
