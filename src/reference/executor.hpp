// The reference executor: the semantic oracle of yirage. It evaluates a kernel graph (customized
// operators included) in float64 on host memory with the interpreter of interpreter.hpp. Every
// other part of the system (fingerprints, generated code, every backend) is tested against it.
#pragma once

#include <vector>

#include "ir/kernel_graph.hpp"

namespace yirage::reference {

// A compact row-major float64 tensor.
using Values = std::vector<double>;

// Evaluates `graph` on `inputs` (one per graph input, in order, each with that input's element
// count) and returns one Values per graph output. Blocks of customized operators run on up to
// `threads` threads (0: the hardware's count); the result does not depend on it.
std::vector<Values> evaluate(const KernelGraph &graph, const std::vector<Values> &inputs,
                             int threads = 0);

}  // namespace yirage::reference
