// The reference executor: the semantic oracle of yirage. It evaluates a kernel graph in float64
// on host memory, one operator at a time, with straightforward loops. Every other part of the
// system (fingerprints, generated code, every backend) is tested against it, so it favours
// obviousness over speed.
#pragma once

#include <vector>

#include "ir/kernel_graph.hpp"

namespace yirage::reference {

// A compact row-major float64 tensor.
using Values = std::vector<double>;

// Evaluates `graph` on `inputs` (one per graph input, in order, each with that input's element
// count) and returns one Values per graph output. Only operators that feed an output run.
std::vector<Values> evaluate(const KernelGraph &graph, const std::vector<Values> &inputs);

}  // namespace yirage::reference
