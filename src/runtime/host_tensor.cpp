#include "runtime/host_tensor.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "util/error.hpp"

namespace yirage {

std::optional<DType> dtype_from_dlpack(DLDataType type) {
  if (type.lanes != 1) return std::nullopt;
  if (type.code == kDLFloat && type.bits == 16) return DType::kFloat16;
  if (type.code == kDLBfloat && type.bits == 16) return DType::kBFloat16;
  if (type.code == kDLFloat && type.bits == 32) return DType::kFloat32;
  return std::nullopt;
}

DLDataType dtype_to_dlpack(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return {kDLFloat, 16, 1};
    case DType::kBFloat16: return {kDLBfloat, 16, 1};
    case DType::kFloat32: return {kDLFloat, 32, 1};
  }
  return {kDLFloat, 0, 0};
}

void check_dlpack_dtype(const std::string &role, DLDataType type, DType expected) {
  const std::optional<DType> dtype = dtype_from_dlpack(type);
  if (!dtype || *dtype != expected) {
    invalid_argument(role + " has DLPack dtype {code " + std::to_string(type.code) + ", bits " +
                     std::to_string(type.bits) + ", lanes " + std::to_string(type.lanes) + "}" +
                     (dtype ? std::string(" (") + dtype_name(*dtype) + ")" : std::string()) + "; the graph expects " +
                     dtype_name(expected));
  }
}

int32_t dlpack_device_type(const DLDevice &device) {
  int32_t raw = 0;
  static_assert(sizeof raw == sizeof device.device_type);
  std::memcpy(&raw, &device.device_type, sizeof raw);
  return raw;
}

namespace {

bool is_host_device(int32_t type) {
  return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost;
}

Dims strides_of(const DLTensor &tensor) {
  const Dims dims(tensor.shape, tensor.shape + tensor.ndim);
  if (tensor.strides == nullptr) return row_major_strides(dims);
  return Dims(tensor.strides, tensor.strides + tensor.ndim);
}

// True when no two in-bounds indices map to the same element: sorted by stride magnitude, each
// stride must step past everything the smaller ones can reach.
bool elements_disjoint(const Dims &dims, const Dims &strides) {
  std::vector<std::pair<int64_t, int64_t>> axes;  // (|stride|, size) for dims of size > 1
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] > 1) axes.emplace_back(std::llabs(strides[i]), dims[i]);
  }
  std::sort(axes.begin(), axes.end());
  int64_t reach = 0;  // largest offset reachable with the axes seen so far
  for (const auto &[stride, size] : axes) {
    if (stride <= reach) return false;
    reach += stride * (size - 1);
  }
  return true;
}

// Whether every element's byte offset from the first, |stride| * (dim - 1) summed over the dims
// times the element size, fits in an int64 (the walks below add strides without checks).
bool offsets_in_range(const Dims &dims, const Dims &strides, int64_t element_size) {
  int64_t reach = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 1) continue;
    if (strides[i] == std::numeric_limits<int64_t>::min()) return false;
    int64_t extent = 0;
    if (__builtin_mul_overflow(std::llabs(strides[i]), dims[i] - 1, &extent) ||
        __builtin_add_overflow(reach, extent, &reach)) {
      return false;
    }
  }
  int64_t bytes = 0;
  return !__builtin_mul_overflow(reach + 1, element_size, &bytes);
}

// Calls visit(row_major_index, element_address) for every element.
template <class Visit>
void for_each_element(const DLTensor &tensor, DType dtype, Visit visit) {
  const Dims dims(tensor.shape, tensor.shape + tensor.ndim);
  const Dims strides = strides_of(tensor);
  const auto element_size = static_cast<int64_t>(dtype_size(dtype));
  char *base = static_cast<char *>(tensor.data) + tensor.byte_offset;
  std::vector<int64_t> index(dims.size(), 0);
  int64_t offset = 0;
  const int64_t total = num_elements(dims);
  for (int64_t i = 0; i < total; ++i) {
    visit(static_cast<size_t>(i), base + offset * element_size);
    for (size_t d = dims.size(); d-- > 0;) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace

void check_host_tensor(const std::string &role, const DLTensor *tensor, const Tensor &expected, bool is_output) {
  if (tensor == nullptr) invalid_argument(role + " is NULL");
  if (!is_host_device(dlpack_device_type(tensor->device))) {
    invalid_argument(role + " is on DLPack device type " + std::to_string(dlpack_device_type(tensor->device)) +
                     "; the reference executor needs host memory (kDLCPU, kDLCUDAHost or "
                     "kDLROCMHost)");
  }
  check_dlpack_dtype(role, tensor->dtype, expected.dtype);
  if (tensor->ndim < 0 || (tensor->ndim > 0 && tensor->shape == nullptr)) {
    invalid_argument(role + " has ndim " + std::to_string(tensor->ndim) + " and shape " +
                     (tensor->shape ? "set" : "NULL"));
  }
  // The rank first: shape and strides are read only as far as the graph's rank.
  if (static_cast<size_t>(tensor->ndim) != expected.dims.size()) {
    invalid_argument(role + " has " + std::to_string(tensor->ndim) + " dims; the graph expects " +
                     std::to_string(expected.dims.size()) + " (" + to_string(expected.dims) + ")");
  }
  const Dims dims(tensor->shape, tensor->shape + tensor->ndim);
  if (dims != expected.dims) {
    invalid_argument(role + " is " + to_string(dims) + "; the graph expects " + to_string(expected.dims));
  }
  if (tensor->data == nullptr) invalid_argument(role + " has a NULL data pointer");
  if (!offsets_in_range(dims, strides_of(*tensor), static_cast<int64_t>(dtype_size(expected.dtype)))) {
    invalid_argument(role + " has strides " + to_string(strides_of(*tensor)) +
                     " that reach beyond any address (|stride| x (dim - 1) overflows 64 bits)");
  }
  if (is_output && !elements_disjoint(dims, strides_of(*tensor))) {
    invalid_argument(role + " has strides " + to_string(strides_of(*tensor)) +
                     " under which elements overlap; outputs need distinct elements");
  }
}

reference::Values read_host_tensor(const DLTensor &tensor, DType dtype) {
  reference::Values values(static_cast<size_t>(num_elements(Dims(tensor.shape, tensor.shape + tensor.ndim))));
  for_each_element(tensor, dtype, [&](size_t i, const char *address) { values[i] = load_element(dtype, address); });
  return values;
}

void write_host_tensor(const DLTensor &tensor, DType dtype, const reference::Values &values) {
  for_each_element(tensor, dtype, [&](size_t i, char *address) { store_element(dtype, address, values[i]); });
}

}  // namespace yirage
