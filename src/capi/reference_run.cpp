// yirage.h: yirage_graph_run_reference, the reference executor over DLPack host tensors.
#include <string>

#include "capi/handles.hpp"
#include "capi/status.hpp"
#include "runtime/host_tensor.hpp"

extern "C" yirage_status yirage_graph_run_reference(const yirage_graph *graph, const DLTensor *const *inputs,
                                                    size_t n_inputs, DLTensor *const *outputs, size_t n_outputs) {
  const char *function = "yirage_graph_run_reference";
  return yirage::capi::guard([&] {
    const yirage::KernelGraph &g = yirage::capi::checked_graph(function, graph).graph;
    const std::string prefix = std::string(function) + ": ";
    if (n_inputs != g.inputs().size() || n_outputs != g.outputs().size()) {
      yirage::invalid_argument(prefix + "the graph has " + std::to_string(g.inputs().size()) + " inputs and " +
                               std::to_string(g.outputs().size()) + " outputs; " + std::to_string(n_inputs) + " and " +
                               std::to_string(n_outputs) + " were given");
    }
    if (g.outputs().empty()) yirage::invalid_argument(prefix + "the graph has no outputs");
    if (n_inputs > 0) yirage::capi::require_non_null(function, "inputs", inputs);
    yirage::capi::require_non_null(function, "outputs", outputs);

    // Check everything before evaluating, and evaluate everything before writing, so that a
    // failed call writes nothing and outputs may alias inputs.
    for (size_t i = 0; i < n_inputs; ++i) {
      yirage::check_host_tensor(prefix + "input " + std::to_string(i), inputs[i], g.tensor(g.inputs()[i]), false);
    }
    for (size_t i = 0; i < n_outputs; ++i) {
      yirage::check_host_tensor(prefix + "output " + std::to_string(i), outputs[i], g.tensor(g.outputs()[i]), true);
    }
    std::vector<yirage::reference::Values> values;
    values.reserve(n_inputs);
    for (size_t i = 0; i < n_inputs; ++i) {
      values.push_back(yirage::read_host_tensor(*inputs[i], g.tensor(g.inputs()[i]).dtype));
    }
    const std::vector<yirage::reference::Values> results = yirage::reference::evaluate(g, values);
    for (size_t i = 0; i < n_outputs; ++i) {
      yirage::write_host_tensor(*outputs[i], g.tensor(g.outputs()[i]).dtype, results[i]);
    }
  });
}
