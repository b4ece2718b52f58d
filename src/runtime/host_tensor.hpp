// DLPack tensors in host memory: checking them against a graph tensor, and reading / writing
// them as compact float64 arrays for the reference executor.
#pragma once

#include <optional>
#include <string>

#include <dlpack/dlpack.h>

#include "ir/kernel_graph.hpp"
#include "reference/executor.hpp"

namespace yirage {

std::optional<DType> dtype_from_dlpack(DLDataType type);
// The device type as the integer the caller stored: any value, not only DLDeviceType's (loading
// an enum from an out-of-range value is undefined behaviour).
int32_t dlpack_device_type(const DLDevice &device);
DLDataType dtype_to_dlpack(DType dtype);
// Throws invalid_argument ("<role> has DLPack dtype {code 2, bits 64, lanes 1}; the graph expects
// float32") unless `type` is `expected`.
void check_dlpack_dtype(const std::string &role, DLDataType type, DType expected);

// Throws invalid_argument (message starting with `role`, e.g. "run_reference: input 1") unless
// `tensor` is a readable host tensor with `expected`'s shape and dtype; outputs must in addition
// not have overlapping elements.
void check_host_tensor(const std::string &role, const DLTensor *tensor, const Tensor &expected, bool is_output);

// Reads every element (honouring strides and byte_offset) in row-major order.
reference::Values read_host_tensor(const DLTensor &tensor, DType dtype);

// Writes `values` (row-major) into the tensor, rounding to `dtype`.
void write_host_tensor(const DLTensor &tensor, DType dtype, const reference::Values &values);

}  // namespace yirage
