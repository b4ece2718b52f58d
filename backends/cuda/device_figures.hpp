// What a CUDA device's description needs that the driver does not report: memory and L2
// bandwidth, peak FLOP/s per dtype and the launch overhead. They come from the built-in target
// description of the device's compute capability (targets/*.json with cuda_compute_capability:
// the same figures the search uses for `--target h100`; of several for one capability, the one
// whose memory size is nearest the device's: an H200 is not an H100), scaled by the device's SM
// count; other devices get an estimate from the SM count (docs/backends/cuda.md).
#pragma once

#include <cstdint>
#include <string>

namespace yirage::cuda {

struct DeviceFigures {
  double memory_bandwidth = 0, l2_bandwidth = 0;  // bytes/s
  double flops_float16 = 0, flops_bfloat16 = 0, flops_float32 = 0, vector_flops_float32 = 0;
  double launch_overhead_seconds = 0;
  std::string source;  // the description they come from, or "estimated from the SM count"
};

// cc: major · 10 + minor; sms: the device's multiprocessors; memory_bytes: its memory.
DeviceFigures device_figures(int cc, int sms, int64_t memory_bytes);

}  // namespace yirage::cuda
