#include "reference/executor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/float64_arithmetic.hpp"
#include "reference/interpreter.hpp"

namespace yirage::reference {

std::vector<Values> evaluate(const KernelGraph &graph, const std::vector<Values> &inputs, int threads,
                             std::vector<double> *largest) {
  const Float64Arithmetic arith;
  const Interpreter<Float64Arithmetic> interpreter(arith, threads > 0 ? threads : default_thread_count());
  if (!largest) return interpreter.run(graph, inputs);
  std::vector<Values> every;
  std::vector<Values> outputs = interpreter.run(graph, inputs, &every);
  largest->assign(every.size(), 0.0);
  for (size_t t = 0; t < every.size(); ++t) {
    for (double v : every[t]) {
      if (std::isfinite(v)) (*largest)[t] = std::max((*largest)[t], std::fabs(v));
    }
  }
  return outputs;
}

std::vector<Values> evaluate_stored(const KernelGraph &graph, const std::vector<Values> &inputs, int threads) {
  const Float64Arithmetic arith;
  const Interpreter<Float64Arithmetic> interpreter(arith, threads > 0 ? threads : default_thread_count());
  const auto round = [](const Tensor &t, Values &values) {
    unsigned char element[4];
    for (double &v : values) {
      store_element(t.dtype, element, v);
      v = load_element(t.dtype, element);
    }
  };
  return interpreter.run(graph, inputs, nullptr, round);
}

std::optional<OutOfRange> first_out_of_range(const KernelGraph &graph, const std::vector<double> &largest) {
  for (size_t i = 0; i < graph.operators().size(); ++i) {
    const Operator &op = graph.operators()[i];
    if (op.kind == OpKind::kInput) continue;
    for (TensorId t : op.outputs) {
      const DType dtype = graph.tensor(t).dtype;
      const double limit = dtype == DType::kFloat16    ? float16_to_double(0x7bff)
                           : dtype == DType::kBFloat16 ? bfloat16_to_double(0x7f7f)
                                                       : static_cast<double>(std::numeric_limits<float>::max());
      const double magnitude = largest.at(static_cast<size_t>(t));
      if (magnitude > limit) return OutOfRange{t, i, magnitude, limit};
    }
  }
  return std::nullopt;
}

}  // namespace yirage::reference
