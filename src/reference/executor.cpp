#include "reference/executor.hpp"

#include "reference/float64_arithmetic.hpp"
#include "reference/interpreter.hpp"

namespace yirage::reference {

std::vector<Values> evaluate(const KernelGraph &graph, const std::vector<Values> &inputs,
                             int threads) {
  const Float64Arithmetic arith;
  return Interpreter<Float64Arithmetic>(arith, threads > 0 ? threads : default_thread_count())
      .run(graph, inputs);
}

}  // namespace yirage::reference
