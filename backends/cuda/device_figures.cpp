#include "device_figures.hpp"

#include "target/target.hpp"

namespace yirage::cuda {

DeviceFigures device_figures(int cc, int sms, int64_t memory_bytes) {
  DeviceFigures f;
  if (const std::optional<targets::TargetProperties> chip = targets::builtin_cuda_target(cc, memory_bytes)) {
    const double scale = static_cast<double>(sms) / static_cast<double>(chip->compute_units);
    f.memory_bandwidth = chip->memory_bandwidth;
    f.l2_bandwidth = chip->l2_bandwidth;
    f.flops_float16 = chip->peak_flops_float16 * scale;
    f.flops_bfloat16 = chip->peak_flops_bfloat16 * scale;
    f.flops_float32 = chip->peak_flops_float32 * scale;
    f.vector_flops_float32 = chip->vector_flops_float32 * scale;
    f.launch_overhead_seconds = chip->launch_overhead_seconds;
    f.source = "targets/" + chip->name + ".json";
    return f;
  }
  // Per SM and cycle: 2048 float16 matrix FLOP and 256 float32 FLOP at 1.5 GHz; 10 GB/s of
  // memory bandwidth per SM, L2 three times that.
  f.memory_bandwidth = 1.0e10 * sms;
  f.l2_bandwidth = 3 * f.memory_bandwidth;
  f.flops_float16 = 2048.0 * 1.5e9 * sms;
  f.flops_bfloat16 = cc >= 80 ? f.flops_float16 : 0;
  f.flops_float32 = f.vector_flops_float32 = 256.0 * 1.5e9 * sms;
  f.launch_overhead_seconds = 3e-6;
  f.source = "estimated from the SM count";
  return f;
}

}  // namespace yirage::cuda
