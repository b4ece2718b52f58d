#include "runtime/host_tensor.hpp"

#include <gtest/gtest.h>

#include "util/error.hpp"

namespace yirage {
namespace {

DLTensor host_tensor(void *data, int64_t *shape, int ndim, DLDataType dtype, int64_t *strides = nullptr) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = ndim;
  t.shape = shape;
  t.strides = strides;
  t.dtype = dtype;
  return t;
}

TEST(HostTensor, DTypeMapping) {
  EXPECT_EQ(dtype_from_dlpack({kDLFloat, 16, 1}), DType::kFloat16);
  EXPECT_EQ(dtype_from_dlpack({kDLBfloat, 16, 1}), DType::kBFloat16);
  EXPECT_EQ(dtype_from_dlpack({kDLFloat, 32, 1}), DType::kFloat32);
  EXPECT_FALSE(dtype_from_dlpack({kDLFloat, 32, 4}));
  EXPECT_FALSE(dtype_from_dlpack({kDLInt, 32, 1}));
  for (DType d : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    EXPECT_EQ(dtype_from_dlpack(dtype_to_dlpack(d)), d);
  }
}

TEST(HostTensor, ReadsNegativeStridesAndByteOffset) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[1] = {3};
  int64_t strides[1] = {-2};
  DLTensor t = host_tensor(data, shape, 1, {kDLFloat, 32, 1}, strides);
  t.byte_offset = 5 * sizeof(float);  // start at data[5], walk backwards by 2
  EXPECT_EQ(read_host_tensor(t, DType::kFloat32), (reference::Values{5, 3, 1}));
}

TEST(HostTensor, ReadsBroadcastZeroStrides) {
  float data[2] = {7, 8};
  int64_t shape[2] = {3, 2};
  int64_t strides[2] = {0, 1};
  const DLTensor t = host_tensor(data, shape, 2, {kDLFloat, 32, 1}, strides);
  EXPECT_EQ(read_host_tensor(t, DType::kFloat32), (reference::Values{7, 8, 7, 8, 7, 8}));
  Tensor expected{{3, 2}, DType::kFloat32, 0};
  EXPECT_NO_THROW(check_host_tensor("input", &t, expected, false));
  EXPECT_THROW(check_host_tensor("output", &t, expected, true), Error);
}

TEST(HostTensor, WritesStridedOutputsAndRounds) {
  uint16_t data[4] = {0xdead, 0xdead, 0xdead, 0xdead};
  int64_t shape[2] = {2, 2};
  int64_t strides[2] = {1, 2};  // column-major
  const DLTensor t = host_tensor(data, shape, 2, {kDLFloat, 16, 1}, strides);
  write_host_tensor(t, DType::kFloat16, {1, 2, 3, 1.0 + 1.0 / 4096});
  EXPECT_EQ(data[0], 0x3c00);  // (0,0) = 1
  EXPECT_EQ(data[2], 0x4000);  // (0,1) = 2
  EXPECT_EQ(data[1], 0x4200);  // (1,0) = 3
  EXPECT_EQ(data[3], 0x3c00);  // 1 + 2^-12 rounds to 1 (tie to even)
}

TEST(HostTensor, OverlapDetection) {
  uint16_t data[16] = {};
  int64_t shape[2] = {2, 3};
  Tensor expected{{2, 3}, DType::kFloat16, 0};
  auto check = [&](int64_t s0, int64_t s1) {
    int64_t strides[2] = {s0, s1};
    const DLTensor t = host_tensor(data, shape, 2, {kDLFloat, 16, 1}, strides);
    check_host_tensor("output 0", &t, expected, true);
  };
  EXPECT_NO_THROW(check(3, 1));
  EXPECT_NO_THROW(check(1, 2));
  EXPECT_NO_THROW(check(5, 1));  // padded rows
  EXPECT_NO_THROW(check(-3, -1));
  EXPECT_THROW(check(2, 1), Error);  // row 1 starts inside row 0
  EXPECT_THROW(check(1, 1), Error);
  EXPECT_THROW(check(0, 1), Error);
}

TEST(HostTensor, CheckMessages) {
  float data[4] = {};
  int64_t shape[2] = {2, 2};
  Tensor expected{{2, 2}, DType::kFloat32, 0};
  DLTensor t = host_tensor(data, shape, 2, {kDLFloat, 32, 1});
  t.device.device_type = kDLVulkan;
  try {
    check_host_tensor("run: input 3", &t, expected, false);
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "run: input 3 is on DLPack device type 7; the reference executor needs host "
                 "memory (kDLCPU, kDLCUDAHost or kDLROCMHost)");
  }
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  EXPECT_THROW(check_host_tensor("x", &t, expected, false), Error);
  t.ndim = 2;
  t.shape = nullptr;
  EXPECT_THROW(check_host_tensor("x", &t, expected, false), Error);
}

}  // namespace
}  // namespace yirage
