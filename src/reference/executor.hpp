// The reference executor: the semantic oracle of yirage. It evaluates a kernel graph (customized
// operators included) in float64 on host memory with the interpreter of interpreter.hpp. Every
// other part of the system (fingerprints, generated code, every backend) is tested against it.
#pragma once

#include <optional>
#include <vector>

#include "ir/kernel_graph.hpp"

namespace yirage::reference {

// A compact row-major float64 tensor.
using Values = std::vector<double>;

// Evaluates `graph` on `inputs` (one per graph input, in order, each with that input's element
// count) and returns one Values per graph output. Blocks of customized operators run on up to
// `threads` threads (0: the hardware's count); the result does not depend on it. Where `largest`
// is given, it receives each tensor's largest finite magnitude, indexed by TensorId (0 for
// tensors that did not run): what first_out_of_range reads.
std::vector<Values> evaluate(const KernelGraph &graph, const std::vector<Values> &inputs, int threads = 0,
                             std::vector<double> *largest = nullptr);

// The same graph as a program that stores every kernel-level tensor in its dtype: each operator's
// outputs rounded to their dtype (to nearest, ties to even) before anything reads them, the
// arithmetic within an operator float64. Its distance from evaluate's result is the error that
// storage alone brings to the graph on these inputs: what running it operator by operator in its
// dtype (as the unfused graph does on any backend, or PyTorch eager) cannot avoid.
std::vector<Values> evaluate_stored(const KernelGraph &graph, const std::vector<Values> &inputs, int threads = 0);

// A tensor whose float64 values go beyond its dtype's largest finite value: a backend that
// stores it in that dtype (as the graph says) gets infinities there, then NaNs downstream.
struct OutOfRange {
  TensorId tensor = -1;
  size_t op = 0;         // the operator that makes it (index into operators())
  double magnitude = 0;  // its largest finite |value|
  double largest = 0;    // the dtype's largest finite value
};

// The first such tensor of `graph` in operator order, from evaluate's `largest` (nullopt: every
// tensor fits).
std::optional<OutOfRange> first_out_of_range(const KernelGraph &graph, const std::vector<double> &largest);

}  // namespace yirage::reference
