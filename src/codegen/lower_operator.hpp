// Lowering one compute operator to the loop-level form: a pre-defined operator at kernel level
// (its loops shared by the grid), or a block-level operator of a µGraph on tiles (shared by the
// block's threads). Every thread computes whole output elements, so a target only has to say how
// loops are shared; reductions and norms inside a block become RowReduce statements, matmuls
// Matmul statements, for targets that reduce rows or multiply tiles cooperatively.
#pragma once

#include <vector>

#include "codegen/stmt.hpp"
#include "ir/operator.hpp"

namespace yirage::codegen {

// The code of `op` (any operator but input, customized and the µGraph-only ones) reading `in`
// and writing `out` (one TensorRef per input and output, in order; matmul operands may be views
// with strides, every other operator's tensors are compact). `sharing` is Sharing::kGrid
// at kernel level, Sharing::kThreads inside a block. Throws Error(kUnsupported) for other
// operators.
Block lower_operator(const Operator &op, const std::vector<TensorRef> &in, const std::vector<TensorRef> &out,
                     Sharing sharing);

}  // namespace yirage::codegen
