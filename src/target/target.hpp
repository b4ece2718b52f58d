// What the search and the cost model know about a target device (docs/targets.md). Built-in
// descriptions are data files (targets/*.json, schemas/yirage_target.fbs) compiled into the
// library; "cpu" is detected from the host; any other description can be loaded from JSON.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.hpp"

namespace yirage::targets {

enum class TargetKind { kCpu = 1, kGpu = 2 };

struct TargetProperties {
  std::string name;
  std::string description;
  TargetKind kind = TargetKind::kGpu;
  int64_t compute_units = 0;
  int64_t max_threads_per_block = 0;
  int64_t max_blocks_per_compute_unit = 0;
  int64_t threads_per_compute_unit = 0;
  int64_t shared_memory_per_block = 0;  // bytes
  int64_t shared_memory_per_compute_unit = 0;
  int64_t warp_width = 0;
  int64_t memory_bytes = 0;
  double memory_bandwidth = 0;  // bytes/s
  int64_t l2_bytes = 0;
  double l2_bandwidth = 0;        // bytes/s
  double peak_flops_float16 = 0;  // 0: dtype unsupported
  double peak_flops_bfloat16 = 0;
  double peak_flops_float32 = 0;
  double vector_flops_float32 = 0;
  std::array<int64_t, 3> matrix_unit = {0, 0, 0};  // m, n, k; zeros if none
  double launch_overhead_seconds = 0;
  // The serial time of one for-loop iteration of a customized kernel's block; 0 = not modeled.
  double loop_iteration_seconds = 0;
  std::string sources;
  // The CUDA devices this describes (major · 10 + minor); 0: none (schemas/yirage_target.fbs).
  int cuda_compute_capability = 0;
  // The unit in which memory reaches the cores (a GPU's L1 line, a CPU's cache line), bytes; 0: the
  // kind's usual (cache_line() gives it).
  int64_t cache_line_bytes = 0;
  // The smallest transfer between device memory and the last cache level, bytes; 0: the kind's
  // usual (memory_access() gives it).
  int64_t memory_access_bytes = 0;

  // cache_line_bytes, or 128 on a GPU and 64 on a CPU where it is 0.
  int64_t cache_line() const { return cache_line_bytes > 0 ? cache_line_bytes : kind == TargetKind::kGpu ? 128 : 64; }
  // memory_access_bytes, or 64 on a GPU (HBM's and GDDR's 64-byte bursts) and the cache line on a
  // CPU where it is 0; never more than the cache line.
  int64_t memory_access() const {
    const int64_t access = memory_access_bytes > 0 ? memory_access_bytes : kind == TargetKind::kGpu ? 64 : cache_line();
    return std::min(access, cache_line());
  }
  // Matrix-unit peak for dtype (0 when unsupported).
  double peak_flops(DType dtype) const;
  bool supports(DType dtype) const { return peak_flops(dtype) > 0; }
};

// Throws invalid_argument naming the first property that is missing or implausible.
void validate(const TargetProperties &target);

// "cpu" (this host) and the names of the compiled-in descriptions.
std::vector<std::string> builtin_target_names();

// A built-in target; Error(kNotFound) listing the names for an unknown one.
TargetProperties builtin_target(const std::string &name);

// The built-in description of CUDA devices of compute capability `cc` (major · 10 + minor), if
// there is one: the figures the CUDA plugin reports for them. Where several describe chips of
// that capability (sm_90: h100, h200), the one whose memory size is nearest `memory_bytes`
// (as a ratio; the first listed where it is 0 or less).
std::optional<TargetProperties> builtin_cuda_target(int cc, int64_t memory_bytes = 0);

// A target from JSON text of schemas/yirage_target.fbs; Error(kCorruptData) when it does not
// parse, Error(kInvalidArgument) when a property is implausible.
TargetProperties target_from_json(const std::string &text);

// This machine, detected once per process: cores, caches, SIMD width and memory size from the
// OS, peak FLOP/s estimated from those and the clock. The figures that vary from one look to the
// next — the memory bandwidth (a short copy) and the clock (/proc/cpuinfo) — are measured once
// per machine and kept in util::default_cache_dir("host"), so that every process on the machine
// describes it the same way: the target is part of every search-cache key (result_cache.hpp).
const TargetProperties &host_cpu_target();

// A CPU target run on `threads` threads (the CPU plugin's count): as many compute units, its
// FLOP/s scaled to them.
TargetProperties cpu_target_on_threads(TargetProperties host, int64_t threads);

// The same, the measured figures read from `folder` when a file there has them, else measured
// and stored there ("": measured and not kept). A file that is damaged, foreign or implausible
// is measured again and replaced; one that cannot be written is not an error.
TargetProperties host_cpu_target_in(const std::string &folder);

}  // namespace yirage::targets
