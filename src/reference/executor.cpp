#include "reference/executor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/float64_arithmetic.hpp"
#include "reference/interpreter.hpp"

namespace yirage::reference {

std::vector<Values> evaluate(const KernelGraph &graph, const std::vector<Values> &inputs,
                             int threads) {
  const Float64Arithmetic arith;
  return Interpreter<Float64Arithmetic>(arith, threads > 0 ? threads : default_thread_count())
      .run(graph, inputs);
}

std::optional<OutOfRange> first_out_of_range(const KernelGraph &graph, const std::vector<Values> &inputs,
                                             int threads) {
  // The same graph with every operator's tensors among its outputs.
  KernelGraph every = graph;
  struct Kept {
    TensorId tensor;
    size_t op, value;  // its operator; its index among `every`'s outputs
  };
  auto output_index = [&](TensorId t) {
    const std::vector<TensorId> &outs = every.outputs();
    return static_cast<size_t>(std::find(outs.begin(), outs.end(), t) - outs.begin());
  };
  std::vector<Kept> kept;
  for (size_t i = 0; i < graph.operators().size(); ++i) {
    const Operator &op = graph.operators()[i];
    if (op.kind == OpKind::kInput) continue;
    for (TensorId t : op.outputs) {
      if (output_index(t) == every.outputs().size()) every.mark_output(t);
      kept.push_back({t, i, output_index(t)});
    }
  }
  const std::vector<Values> values = evaluate(every, inputs, threads);
  for (const Kept &k : kept) {
    const DType dtype = graph.tensor(k.tensor).dtype;
    const double largest = dtype == DType::kFloat16    ? float16_to_double(0x7bff)
                           : dtype == DType::kBFloat16 ? bfloat16_to_double(0x7f7f)
                                                       : static_cast<double>(std::numeric_limits<float>::max());
    double magnitude = 0;
    for (double v : values.at(k.value)) {
      if (std::isfinite(v)) magnitude = std::max(magnitude, std::fabs(v));
    }
    if (magnitude > largest) return OutOfRange{k.tensor, k.op, magnitude, largest};
  }
  return std::nullopt;
}

}  // namespace yirage::reference
