#include "runtime/host_tensor.hpp"

#include <algorithm>
#include <cstdlib>

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

namespace {

bool is_host_device(DLDeviceType type) {
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
  if (!is_host_device(tensor->device.device_type)) {
    invalid_argument(role + " is on DLPack device type " +
                     std::to_string(static_cast<int>(tensor->device.device_type)) +
                     "; the reference executor needs host memory (kDLCPU, kDLCUDAHost or "
                     "kDLROCMHost)");
  }
  check_dlpack_dtype(role, tensor->dtype, expected.dtype);
  if (tensor->ndim < 0 || (tensor->ndim > 0 && tensor->shape == nullptr)) {
    invalid_argument(role + " has ndim " + std::to_string(tensor->ndim) + " and shape " +
                     (tensor->shape ? "set" : "NULL"));
  }
  const Dims dims(tensor->shape, tensor->shape + tensor->ndim);
  if (dims != expected.dims) {
    invalid_argument(role + " is " + to_string(dims) + "; the graph expects " + to_string(expected.dims));
  }
  if (tensor->data == nullptr) invalid_argument(role + " has a NULL data pointer");
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
