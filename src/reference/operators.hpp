// Float64 implementations of each kernel-level operator on compact row-major buffers.
#pragma once

#include "ir/operator.hpp"
#include "reference/executor.hpp"

namespace yirage::reference {

double apply_unary(OpKind kind, const OpAttributes &attributes, double x);
double apply_binary(OpKind kind, double a, double b);

// out[i] = op(a[bcast i], b[bcast i]) for the broadcast shape out_dims.
Values broadcast_binary(OpKind kind, const Values &a, const Dims &a_dims, const Values &b,
                        const Dims &b_dims, const Dims &out_dims);
Values matmul(const Values &a, const Dims &a_dims, const Values &b, const Dims &b_dims,
              const Dims &out_dims);
// Sum or max over `dim`.
Values reduce(OpKind kind, const Values &x, const Dims &dims, int dim);
// weight may be null.
Values rms_norm(const Values &x, const Dims &dims, size_t n_normalized, double eps,
                const Values *weight);
Values concat(const Values &a, const Dims &a_dims, const Values &b, const Dims &b_dims, int dim);
std::vector<Values> split(const Values &x, const Dims &dims, int dim, const Dims &sizes);

}  // namespace yirage::reference
