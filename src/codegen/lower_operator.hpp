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

// The arithmetic of rms_norm and the rms accumulator that keeps float32 rows in range, for every
// target (docs/codegen.md, "Rows near float32's limits"). Squares span twice float32's exponent
// range: the sum of squares of a row of 1e19s overflows and that of 1e-23s underflows. Such a row
// is multiplied by rms_scale(peak), peak its largest magnitude, before it is squared, and
// x / sqrt(mean(x²) + eps) is then (x · scale) / sqrt(mean((x · scale)²) + eps · scale²): the
// scaled value first, since 1 / rms itself may exceed float32 (a row of 1e-39s). The lowering
// scales only the rows whose plain mean of squares is out of range (rms_mean_in_range), in a
// second pass; a target's own kernels may scale every row.
//
// |v|, NaN for NaN.
Expr magnitude(const Expr &v);
// float32's smallest normal, 2^-126: the least peak rms_scale divides by.
inline constexpr double kRmsPeakFloor = 0x1p-126;
// `peak` held within [max(2^-126, sqrt(eps)), 2^126]; NaN stays NaN.
Expr rms_peak(const Expr &peak, double eps);
// 1 / rms_peak(peak, eps): the scaled row's largest magnitude is at most 1 (4 above 2^126), the
// scale and eps · scale² are normal floats, and where eps outweighs the row the scaled eps does too.
Expr rms_scale(const Expr &peak, double eps);
// squares / count + eps · scale², `squares` the sum of the `count` scaled squares: the mean square
// plus eps, both times scale².
Expr rms_scaled_mean(const Expr &squares, int64_t count, double eps, const Expr &scale);
// 1 / sqrt(rms_scaled_mean(…)).
Expr rms_scaled_inverse(const Expr &squares, int64_t count, double eps, const Expr &scale);
// Whether a mean of squares (plus eps) computed in float32 is right to float32's precision: at
// least 2^-102 (squares below 2^-126 lose bits; the sum's absolute error stays below 2^-24 of it)
// and finite (no square or partial sum overflowed). False for NaN.
Expr rms_mean_in_range(const Expr &mean);

}  // namespace yirage::codegen
