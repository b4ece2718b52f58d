// The kernel graph: the user's program, a DAG of kernel-level operators over device tensors.
// Besides the compute operators of OperatorGraph it has graph inputs, marked outputs and
// customized operators, each running a thread-block graph (a µGraph) as one fused kernel.
#pragma once

#include <memory>
#include <vector>

#include "ir/operator_graph.hpp"

namespace yirage {

class BlockGraph;

class KernelGraph : public OperatorGraph {
 public:
  TensorId new_input(const Dims &dims, DType dtype);
  // A fused kernel reading `inputs` (one per input iterator of the block graph, in order, with
  // the dims and dtype it was built for) and producing one tensor per output saver.
  std::vector<TensorId> customized(const std::vector<TensorId> &inputs, std::shared_ptr<const BlockGraph> block_graph);
  void mark_output(TensorId x);
  // Marks operator `op` (not an input) to run in one program with the next live operator that
  // is not an input (OpAttributes::launch_with_next): what the search sets where that form
  // measured faster.
  void set_launch_with_next(size_t op, bool with_next);

  // Views. Kernel tensors are compact row-major, so each is computed as a compact tensor (a copy
  // where a backend cannot alias it). reshape: the same elements in row-major order under new
  // dims; one dim may be -1 (inferred). permute: output dim i is X's dim dims[i] (a dim may be
  // negative). transpose: the permute swapping dim0 and dim1.
  TensorId reshape(TensorId x, const Dims &dims);
  TensorId permute(TensorId x, const Dims &dims);
  TensorId transpose(TensorId x, int64_t dim0, int64_t dim1);
};

// Whether `op` is a reshape whose result is not a graph output: its bytes are its compact
// input's, so the runtime lets it alias its input (no kernel) and the cost model charges nothing.
bool aliases_its_input(const KernelGraph &graph, const Operator &op);

// For each operator (by index), whether some graph output depends on it.
std::vector<bool> live_operators(const KernelGraph &graph);

}  // namespace yirage
