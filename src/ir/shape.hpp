// Tensor shapes: a list of dims, row-major. Kept as a small value type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace yirage {

inline constexpr int kMaxRank = 6;  // YIRAGE_MAX_RANK

using Dims = std::vector<int64_t>;

// Number of elements; 1 for a rank-0 list.
int64_t num_elements(const Dims &dims);

// Row-major strides (in elements) of a compact tensor of these dims.
Dims row_major_strides(const Dims &dims);

// `dims` around `dim` as (outer, extent, inner) element counts: the dims before it, it, after it.
struct AxisView {
  int64_t outer = 1, extent = 1, inner = 1;
};
AxisView axis_view(const Dims &dims, size_t dim);

// "[16,4096]"
std::string to_string(const Dims &dims);

// Resolves a possibly negative dim index against `rank`, or throws invalid_argument naming `op`.
int normalize_dim(const char *op, int64_t dim, int rank);

// Throws invalid_argument naming `op` unless 1 <= rank <= kMaxRank, every dim >= 1 and the
// element count is at most 2^56.
void check_dims(const char *op, const Dims &dims);

// The size-1-broadcast shape of two equal-rank shapes, or throws naming `op`.
Dims broadcast_dims(const char *op, const Dims &a, const Dims &b);

}  // namespace yirage
