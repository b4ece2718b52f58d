#include "verify/equivalence.hpp"

#include <chrono>
#include <random>

#include "reference/interpreter.hpp"
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
    return "the graphs have " + std::to_string(a.outputs().size()) + " and " +
           std::to_string(b.outputs().size()) + " outputs";
  }
  for (size_t i = 0; i < a.outputs().size(); ++i) {
    const Tensor &x = a.tensor(a.outputs()[i]), &y = b.tensor(b.outputs()[i]);
    if (x.dims != y.dims || x.dtype != y.dtype) {
      return "output " + std::to_string(i) + " is " + to_string(x.dims) + " " +
             dtype_name(x.dtype) + " in the first graph and " + to_string(y.dims) + " " +
             dtype_name(y.dtype) + " in the second";
    }
  }
  return "";
}

}  // namespace

EquivalenceResult check_equivalence(const KernelGraph &a, const KernelGraph &b,
                                    const EquivalenceOptions &options) {
  const auto started = std::chrono::steady_clock::now();
  if (options.trials < 1) invalid_argument("equivalent: trials must be at least 1");
  check_same_inputs(a, b);
  EquivalenceResult result;
  result.reason = output_mismatch(a, b);
  const int threads = options.threads > 0 ? options.threads : default_thread_count();
  for (int trial = 0; result.reason.empty() && trial < options.trials; ++trial) {
    const uint64_t trial_seed = options.seed * 0x100000001b3ull + static_cast<uint64_t>(trial);
    const FieldArithmetic field(trial_seed);
    std::mt19937_64 rng(trial_seed);
    std::vector<reference::Buffer<FieldValue>> inputs;
    for (TensorId id : a.inputs()) {
      reference::Buffer<FieldValue> values(static_cast<size_t>(num_elements(a.tensor(id).dims)));
      for (FieldValue &v : values) v = field.random(rng);
      inputs.push_back(std::move(values));
    }
    const reference::Interpreter<FieldArithmetic> interpreter(field, threads);
    const auto out_a = interpreter.run(a, inputs);
    const auto out_b = interpreter.run(b, inputs);
    ++result.trials;
    for (size_t o = 0; o < out_a.size() && result.reason.empty(); ++o) {
      for (size_t e = 0; e < out_a[o].size(); ++e) {
        if (!(out_a[o][e] == out_b[o][e])) {
          result.reason = "output " + std::to_string(o) + " differs at element " +
                          std::to_string(e) + " in trial " + std::to_string(trial);
          break;
        }
      }
    }
  }
  result.equivalent = result.reason.empty();
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace yirage::verify
