#include "ir/shape.hpp"

#include "util/error.hpp"

namespace yirage {

AxisView axis_view(const Dims &dims, size_t dim) {
  return {num_elements(Dims(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(dim))), dims[dim],
          num_elements(Dims(dims.begin() + static_cast<std::ptrdiff_t>(dim) + 1, dims.end()))};
}

int64_t num_elements(const Dims &dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

Dims row_major_strides(const Dims &dims) {
  Dims strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

std::string to_string(const Dims &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

int normalize_dim(const char *op, int64_t dim, int rank) {
  if (dim < -rank || dim >= rank) {
    invalid_argument(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for a tensor of rank " +
                     std::to_string(rank) + " (valid: " + std::to_string(-rank) + " to " + std::to_string(rank - 1) +
                     ")");
  }
  return static_cast<int>(dim < 0 ? dim + rank : dim);
}

// No tensor may hold more than 2^56 elements, so that element counts and byte sizes of every
// dtype fit comfortably in int64_t.
constexpr int64_t kMaxElements = int64_t{1} << 56;

void check_dims(const char *op, const Dims &dims) {
  if (dims.empty() || dims.size() > static_cast<size_t>(kMaxRank)) {
    invalid_argument(std::string(op) + ": rank " + std::to_string(dims.size()) + " is outside 1.." +
                     std::to_string(kMaxRank));
  }
  int64_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 1) {
      invalid_argument(std::string(op) + ": dims " + to_string(dims) + ": dim " + std::to_string(i) + " is " +
                       std::to_string(dims[i]) + " (every dim must be at least 1)");
    }
    if (dims[i] > kMaxElements / count) {
      invalid_argument(std::string(op) + ": dims " + to_string(dims) + " hold more than 2^56 elements");
    }
    count *= dims[i];
  }
}

Dims broadcast_dims(const char *op, const Dims &a, const Dims &b) {
  if (a.size() != b.size()) {
    invalid_argument(std::string(op) + ": A is " + to_string(a) + ", B is " + to_string(b) + ": ranks " +
                     std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                     " differ (elementwise operators need equal ranks)");
  }
  Dims out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) {
      invalid_argument(std::string(op) + ": A is " + to_string(a) + ", B is " + to_string(b) + ": dim " +
                       std::to_string(i) + " sizes " + std::to_string(a[i]) + " and " + std::to_string(b[i]) +
                       " are neither equal nor 1");
    }
    out[i] = a[i] == 1 ? b[i] : a[i];
  }
  return out;
}

}  // namespace yirage
