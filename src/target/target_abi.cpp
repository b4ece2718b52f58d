#include "target/target_abi.hpp"

#include <algorithm>
#include <cstring>

namespace yirage::targets {
namespace {

// The struct as of ABI 1.2, which appended loop_iteration_seconds.
constexpr size_t kTargetSizeV1_2 = offsetof(yirage_target_properties, loop_iteration_seconds) + sizeof(double);

}  // namespace

void target_to_c(const TargetProperties &t, yirage_target_properties &out) {
  const size_t n = std::min(t.name.size(), sizeof out.name - 1);
  std::memcpy(out.name, t.name.data(), n);
  out.name[n] = '\0';
  out.kind = static_cast<yirage_target_kind>(t.kind);
  out.compute_units = t.compute_units;
  out.max_threads_per_block = t.max_threads_per_block;
  out.max_blocks_per_compute_unit = t.max_blocks_per_compute_unit;
  out.threads_per_compute_unit = t.threads_per_compute_unit;
  out.shared_memory_per_block = t.shared_memory_per_block;
  out.shared_memory_per_compute_unit = t.shared_memory_per_compute_unit;
  out.warp_width = t.warp_width;
  out.memory_bytes = t.memory_bytes;
  out.memory_bandwidth = t.memory_bandwidth;
  out.l2_bytes = t.l2_bytes;
  out.l2_bandwidth = t.l2_bandwidth;
  out.peak_flops_float16 = t.peak_flops_float16;
  out.peak_flops_bfloat16 = t.peak_flops_bfloat16;
  out.peak_flops_float32 = t.peak_flops_float32;
  out.vector_flops_float32 = t.vector_flops_float32;
  for (size_t i = 0; i < 3; ++i) out.matrix_unit[i] = t.matrix_unit[i];
  out.launch_overhead_seconds = t.launch_overhead_seconds;
  if (out.struct_size >= kTargetSizeV1_2) out.loop_iteration_seconds = t.loop_iteration_seconds;
}

TargetProperties target_from_c(const yirage_target_properties &in) {
  TargetProperties t;
  t.name.assign(in.name, strnlen(in.name, sizeof in.name));
  t.kind = static_cast<TargetKind>(in.kind);
  t.compute_units = in.compute_units;
  t.max_threads_per_block = in.max_threads_per_block;
  t.max_blocks_per_compute_unit = in.max_blocks_per_compute_unit;
  t.threads_per_compute_unit = in.threads_per_compute_unit;
  t.shared_memory_per_block = in.shared_memory_per_block;
  t.shared_memory_per_compute_unit = in.shared_memory_per_compute_unit;
  t.warp_width = in.warp_width;
  t.memory_bytes = in.memory_bytes;
  t.memory_bandwidth = in.memory_bandwidth;
  t.l2_bytes = in.l2_bytes;
  t.l2_bandwidth = in.l2_bandwidth;
  t.peak_flops_float16 = in.peak_flops_float16;
  t.peak_flops_bfloat16 = in.peak_flops_bfloat16;
  t.peak_flops_float32 = in.peak_flops_float32;
  t.vector_flops_float32 = in.vector_flops_float32;
  for (size_t i = 0; i < 3; ++i) t.matrix_unit[i] = in.matrix_unit[i];
  t.launch_overhead_seconds = in.launch_overhead_seconds;
  if (in.struct_size >= kTargetSizeV1_2) t.loop_iteration_seconds = in.loop_iteration_seconds;
  return t;
}

}  // namespace yirage::targets
