// The CUDA backend's code generator: CUDA C++ for one kernel program, compiled by NVRTC without
// any header (float16 and bfloat16 conversions are inline PTX, so no cuda_fp16.h is needed).
//
// The source defines one kernel, extern "C" __global__ void yirage_cuda_kernel(in0…, out0…),
// taking one pointer per program input, then per output, on compact row-major tensors; it is
// launched with the grid, block and dynamic shared memory of CudaKernel.
//
// A customized operator runs one CUDA block per µGraph block, with a thread count fixed in the
// source: every tile lives in dynamic shared memory as float32, block-level operators are loops
// shared by the block's threads (rows of reductions shared by warps) with barriers only where a
// thread reads what another wrote, the for-loop is a loop fed by a cp.async ring of raw tiles,
// and accumulators are float32 arrays in shared memory. Pre-defined operators have kernels of
// their own (split-k matmuls, a block per rms_norm row, a warp per reduction output) or are
// grid-stride loops. docs/backends/cuda.md describes them.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "serialize/kernel_program.hpp"
#include "yirage_backend.h"

namespace yirage::codegen {

inline constexpr const char *kCudaKernelSymbol = "yirage_cuda_kernel";
// Dynamic shared memory every CUDA device gives a block without opting in (more needs
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
inline constexpr int64_t kCudaDefaultSharedBytes = 48 * 1024;

struct CudaKernel {
  std::string source;
  std::array<int64_t, 3> grid = {1, 1, 1};
  int64_t block_threads = 256;
  // Whether the kernel is correct with any number of threads per block (then the plugin may use
  // fewer when the compiled kernel's registers do not allow block_threads).
  bool any_block_threads = true;
  int64_t shared_bytes = 0;  // dynamic shared memory per block
  // The kernel starts with griddepcontrol.wait (sm_90+): it may be launched as a programmatic
  // dependent of the previous kernel in the stream, whose end it waits for before touching
  // memory.
  bool waits_for_previous = false;
  // How many times a block waits for its tiles over a µGraph's for-loop, for the search's cost
  // model (yirage_backend_kernel_estimate::loop_waits): 1 where the loop is streamed (a µGraph
  // generated as weight products); UGraphPlan::loop_waits for the other µGraphs it plans (once
  // per ring of loads, plus the plain copy's waits for tiles read once); -1 where this generator
  // has nothing to add to the model's count (rows in registers, pre-defined operators).
  int64_t loop_waits = -1;
  int64_t loop_range = 1;  // the µGraph's for-loop range
  // The bytes a block moves through shared memory (UGraphPlan::shared_traffic_bytes), for the
  // search's cost model; -1: no opinion (streamed weight products, rows in registers).
  int64_t shared_traffic_bytes = -1;
  // Those bytes at the rate the generic code moves them (yirage_backend_kernel_estimate::
  // shared_memory_seconds); -1: no opinion.
  double shared_memory_seconds() const;
  // What launching it adds behind another generated kernel, on a device whose launches take
  // `launch_overhead_seconds` (yirage_backend_kernel_estimate::dependent_launch_seconds): a share
  // of that where it is a programmatic dependent (waits_for_previous), its launch overlapping the
  // kernel before it; -1 (no opinion) elsewhere.
  double dependent_launch_seconds(double launch_overhead_seconds) const;
  // The most of its blocks a multiprocessor holds at once where its registers limit them
  // (yirage_backend_kernel_estimate::max_resident_blocks): attention in registers is taken to use
  // kCudaAttentionRegisters a thread; -1 (no opinion) for other code.
  bool attention_in_registers = false;
  int64_t max_resident_blocks() const;
  // A µGraph generated as the tiled GEMM of its whole product (ugraph_gemm), which the plugin may
  // also run on cuBLASLt: its grid and loop are not the µGraph's
  // (yirage_backend_kernel_estimate::whole_product).
  bool whole_product = false;
  // All of the above as the estimate entry answers a host of plugin ABI minor `host_minor`, on a
  // device whose launches take `launch_overhead_seconds`: the one conversion the plugins, the
  // search benchmark and the cost-features tool share.
  yirage_backend_kernel_estimate estimate(double launch_overhead_seconds,
                                          uint32_t host_minor = YIRAGE_BACKEND_ABI_MINOR) const;
  // loop_waits as the estimate entry gives it to a host of plugin ABI minor `host_minor`: the waits
  // of tiles read once on top of the loop's range came with 1.5, so an older host gets at most
  // the range.
  int64_t loop_waits_for(uint32_t host_minor) const {
    return host_minor >= 5 ? loop_waits : std::min(loop_waits, loop_range);
  }
  // Device memory the kernel needs besides its operands (a weight product's k split over blocks:
  // cuda_matmul.cpp), passed as its last parameter `yr_ws`: all zeros before the kernel's first
  // launch on a stream, and each launch leaves it so; a stream's launches may share one, launches
  // on two streams at once may not. 0: no such parameter.
  int64_t workspace_bytes = 0;
  // A persistent kernel of several µGraphs (cuda_persistent.hpp): its tasks, 0 for other kernels.
  // `grid` is then one block per task; the plugin launches as many of them as are resident at once
  // (fewer blocks take more tasks each) and passes, after yr_ws, its watch record `yr_watch`
  // (host memory the device writes: WatchRecord). The workspace is left ready for the next launch
  // rather than zero.
  int64_t persistent_tasks = 0;
  int64_t persistent_widest = 0;  // the most blocks of one of its operators
  int64_t wait_timeout_ms = 0;    // its waits' timeout (CudaTarget::wait_timeout_ms)
};

// The serial time of one wait of a µGraph block for its tiles with this generator's code (tile
// loads and barriers; CudaKernel::loop_waits counts them), which the CUDA plugin reports as
// loop_iteration_seconds: a measured figure, rounded (docs/backends/cuda.md, "Why the generator
// does what it does").
inline constexpr double kCudaLoopIterationSeconds = 1e-6;
// The rate at which one multiprocessor's blocks move tiles through its shared memory with the
// µGraph code's generic operators (float tiles, one operator at a time, a barrier between): a
// figure fitted to the measured candidates of the real-model suite, a quarter of the hardware's
// 128 bytes a cycle (docs/backends/cuda.md, "Why the generator does what it does").
inline constexpr double kCudaSharedBytesPerSecond = 64e9;
// The share of a launch's overhead a programmatic dependent launch still costs behind a generated
// kernel (docs/backends/cuda.md, "Why the generator does what it does").
inline constexpr double kCudaDependentLaunchShare = 0.5;
// The registers a thread of attention in registers is taken to use: ptxas's most (the kernel is
// bounded by its thread count alone); 124 to 219 measured over the real-model suite's attention
// kernels on sm_90a. A multiprocessor has kCudaRegistersPerMultiprocessor (sm_50 and newer).
inline constexpr int64_t kCudaAttentionRegisters = 255;
inline constexpr int64_t kCudaRegistersPerMultiprocessor = 65536;

// The language the generator prints: CUDA C++ for NVRTC, or HIP C++ for hiprtc (AMD GPUs;
// docs/backends/hip.md): the same code after a HIP prelude, without NVIDIA's features.
enum class CudaDialect { kCuda, kHip };

// What the generated source may use on the device it is for.
struct CudaTarget {
  int compute_capability = 0;    // major * 10 + minor, e.g. 90 for sm_90
  int64_t max_shared_bytes = 0;  // per block, opted in; 0: no limit
  // For the load pipeline's depth (see cuda_ugraph.cpp); 0: unknown.
  int64_t multiprocessors = 0;
  int64_t shared_bytes_per_multiprocessor = 0;
  // Row chains without a for-loop kept in registers (cuda_rows.hpp); false: every µGraph gets
  // the shared-memory code (its tests, A/B comparisons).
  bool rows_in_registers = true;
  // How far above a row's offset attention in registers lets a score go before the offset
  // moves, in log2 units (cuda_attention.hpp, emit_softmax_update): exps reach 2^slack. 15, the
  // default, is float16's limit; 0 moves it whenever a row's maximum grows (a running maximum),
  // so that the rescale path runs as often as it can: the plugin takes it from
  // YIRAGE_CUDA_ATTENTION_SLACK, for tests.
  int attention_offset_slack = kDefaultAttentionOffsetSlack;
  static constexpr int kDefaultAttentionOffsetSlack = 15;
  // kHip: compute_capability must be 0 (none of NVIDIA's features: no tensor cores, cp.async,
  // dependent launch), and block sizes are whole wavefronts of `wavefront` lanes (64 on CDNA, 32
  // on RDNA and where a HIP source runs on NVIDIA).
  CudaDialect dialect = CudaDialect::kCuda;
  int wavefront = 32;
  // kHip on gfx90a: pre-defined matmuls of 16-bit data on the matrix cores (cuda_mfma.hpp).
  bool mfma = false;
  // kHip with 64-lane wavefronts (gfx90a): the tile matmuls of µGraphs of 16-bit data on the
  // matrix cores (cuda_tile_mfma.hpp).
  bool mfma_tiles = false;
  // Programmatic dependent launch (sm_90 and newer): griddepcontrol in the kernel.
  bool dependent_launch() const { return compute_capability >= 90; }
  // Weight products with k split over blocks, their sums met in a workspace (CudaKernel::
  // workspace_bytes): on CUDA, where the multiprocessors are known (their count sets the split).
  // The plugin turns it off where YIRAGE_CUDA_K_SPLIT=0 (a switch for measurements).
  bool k_split = true;
  bool k_split_blocks() const { return k_split && dialect == CudaDialect::kCuda && multiprocessors > 0; }
  // A persistent kernel's waits for the tiles it reads (cuda_persistent.hpp): the longest, in
  // milliseconds, before the launch is abandoned and reported (YIRAGE_CUDA_WAIT_TIMEOUT_MS).
  int64_t wait_timeout_ms = kDefaultWaitTimeoutMs;
  static constexpr int64_t kDefaultWaitTimeoutMs = 10000;
  // The watchdog's test (YIRAGE_CUDA_TEST_HANG=1): a persistent kernel's first wait is for a flag
  // no launch sets, so every launch of it times out.
  bool hang_for_tests = false;
  // Warpgroup mma (wgmma, sm_90a: the arch-specific features of compute capability 9.0 only).
  bool warpgroup_mma() const { return compute_capability == 90; }
};

// CudaTarget::attention_offset_slack from the text of YIRAGE_CUDA_ATTENTION_SLACK (nullptr: not
// set, the default); Error(kInvalidArgument) unless it is an integer from 0 to 15.
int attention_offset_slack_from(const char *text);
// CudaTarget::wait_timeout_ms from the text of YIRAGE_CUDA_WAIT_TIMEOUT_MS (nullptr: not set, the
// default); Error(kInvalidArgument) unless it is an integer from 1 to 3,600,000 (an hour).
int64_t wait_timeout_ms_from(const char *text);

// The NVRTC/nvcc architecture the code generated for compute capability `cc` is compiled for:
// "sm_90a" for 9.0 (wgmma exists only there, not in sm_90 nor in later architectures), else
// "sm_<cc>".
std::string cuda_arch(int cc);

// Throws Error(kUnsupported) for an operator it cannot generate, or a customized operator whose
// tiles need more than `target.max_shared_bytes` of shared memory.
CudaKernel cuda_source(const serialize::KernelProgram &program, const CudaTarget &target);

}  // namespace yirage::codegen
