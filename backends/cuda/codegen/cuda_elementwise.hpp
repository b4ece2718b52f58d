// Flat elementwise operators (a unary operator, or a binary one) on 16-byte vectors: each thread
// loads 16 bytes of every operand into registers, computes those elements with the lowering's own
// expression and stores 16 bytes. One 2- or 4-byte access per thread leaves most of a GPU's
// bandwidth unused. An operand broadcast along its last dim (a row's sum that a softmax divides
// by) gives each vector one element, repeated; one broadcast along other dims only gives vectors
// of its own rows. Where a pointer is not 16-byte aligned (a caller's view into a larger tensor),
// the kernel checks that at run time and runs the lowering's one-element-per-thread loop instead.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/c_text.hpp"
#include "codegen/stmt.hpp"
#include "ir/operator.hpp"

namespace yirage::codegen::cuda {

// Prints the kernel body of `op` (operands `in`, result `out`, named by their global buffers)
// and returns its block count; 0, printing nothing, where the operator does not qualify (not
// elementwise, mixed element sizes, a size that is no multiple of a vector, or a broadcast operand
// whose output rows are not whole vectors).
int64_t vector_elementwise_kernel(Printer &p, const Operator &op, const std::vector<TensorRef> &in,
                                  const TensorRef &out, const std::vector<DType> &dtypes);

}  // namespace yirage::codegen::cuda
