// Device tests: the count and its reason, and properties present and plausible.
#include <cmath>
#include <cstring>

#include "suite.hpp"

namespace yirage::conformance {
namespace {

void count_and_reason(Session &s) {
  const yirage_backend_api &api = s.api();
  int32_t count = -1;
  yirage_backend_error error = new_error();
  expect_ok(api.device_count(s.instance(), &count, &error), error, "device_count");
  expect(count >= 0, "negative device count " + std::to_string(count));
  if (count == 0) {
    const char *reason = api.unavailable_reason(s.instance());
    expect(reason != nullptr && reason[0] != '\0', "zero devices but no unavailable_reason");
  }
}

// A check of one numeric property: present (above `low`) and plausible (at most `high`).
template <class T>
void in_range(const char *name, T value, double low, double high) {
  expect(static_cast<double>(value) >= low && static_cast<double>(value) <= high,
         std::string(name) + " = " + std::to_string(value) + " is outside [" + std::to_string(low) + ", " +
             std::to_string(high) + "]");
}

void properties(Session &s) {
  const runtime::DeviceInfo &d = s.device_info();
  const yirage_backend_device_info &raw = d.raw;
  expect(std::memchr(raw.name, '\0', sizeof raw.name) != nullptr, "name is not NUL-terminated");
  expect(raw.name[0] != '\0', "empty device name");
  const yirage_target_properties &t = raw.target;
  expect(std::memchr(t.name, '\0', sizeof t.name) != nullptr, "target.name is not NUL-terminated");
  in_range("compute_units", t.compute_units, 1, 1e6);
  in_range("max_threads_per_block", t.max_threads_per_block, 1, 1e5);
  in_range("max_blocks_per_compute_unit", t.max_blocks_per_compute_unit, 1, 1e4);
  in_range("threads_per_compute_unit", t.threads_per_compute_unit, 1, 1e6);
  in_range("shared_memory_per_block", t.shared_memory_per_block, 1024, 1e10);
  in_range("shared_memory_per_compute_unit", t.shared_memory_per_compute_unit,
           static_cast<double>(t.shared_memory_per_block), 1e11);
  in_range("warp_width", t.warp_width, 1, 1024);
  in_range("memory_bytes", t.memory_bytes, 64.0 * (1 << 20), 1e15);
  in_range("memory_bandwidth (bytes/s)", t.memory_bandwidth, 1e8, 1e14);
  in_range("l2_bytes", t.l2_bytes, 0, 1e10);
  in_range("l2_bandwidth (bytes/s)", t.l2_bandwidth, 0, 1e15);
  in_range("peak_flops_float32", t.peak_flops_float32, 1e8, 1e17);
  in_range("vector_flops_float32", t.vector_flops_float32, 1e8, 1e17);
  in_range("launch_overhead_seconds", t.launch_overhead_seconds, 0, 1e-2);
  in_range("loop_iteration_seconds", t.loop_iteration_seconds, 0, 1e-3);
  for (int64_t m : t.matrix_unit) in_range("matrix_unit", m, 0, 1024);

  const uint32_t known = (1u << YIRAGE_FLOAT16) | (1u << YIRAGE_BFLOAT16) | (1u << YIRAGE_FLOAT32);
  expect((raw.dtypes & ~known) == 0, "dtypes has unknown bits: " + std::to_string(raw.dtypes));
  expect((raw.dtypes & (1u << YIRAGE_FLOAT32)) != 0, "the device does not claim float32");
  if (raw.dtypes & (1u << YIRAGE_FLOAT16)) in_range("peak_flops_float16", t.peak_flops_float16, 1e8, 1e18);
  if (raw.dtypes & (1u << YIRAGE_BFLOAT16)) {
    in_range("peak_flops_bfloat16", t.peak_flops_bfloat16, 1e8, 1e18);
  }
  const int32_t known_devices[] = {kDLCPU,
                                   kDLCUDA,
                                   kDLCUDAHost,
                                   kDLOpenCL,
                                   kDLVulkan,
                                   kDLMetal,
                                   kDLVPI,
                                   kDLROCM,
                                   kDLROCMHost,
                                   kDLExtDev,
                                   kDLCUDAManaged,
                                   14 /* kDLOneAPI in DLPack 1.x */,
                                   15 /* kDLWebGPU */,
                                   16 /* kDLHexagon */};
  bool known_device = false;
  for (int32_t k : known_devices) known_device = known_device || raw.dlpack_device_type == k;
  expect(known_device, "unknown dlpack_device_type " + std::to_string(raw.dlpack_device_type));
  expect(raw.dlpack_device_id >= 0, "negative dlpack_device_id");
}

// Two calls describe the device identically.
void stable(Session &s) {
  const yirage_backend_api &api = s.api();
  yirage_backend_device_info a, b;
  for (yirage_backend_device_info *info : {&a, &b}) {
    std::memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
    info->target.struct_size = sizeof info->target;
    yirage_backend_error error = new_error();
    expect_ok(api.device_info(s.instance(), s.device(), info, &error), error, "device_info");
  }
  expect(std::memcmp(&a, &b, sizeof a) == 0, "two device_info calls disagree");
}

}  // namespace

void add_device_tests(std::vector<TestCase> &tests) {
  tests.push_back({"devices.count_and_reason", count_and_reason});
  tests.push_back({"devices.properties", properties});
  tests.push_back({"devices.info_is_stable", stable});
}

}  // namespace yirage::conformance
