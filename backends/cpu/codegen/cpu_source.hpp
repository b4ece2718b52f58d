// The CPU backend's code generator: C++ source for a kernel program.
//
// The source defines
//   extern "C" int yirage_cpu_kernel(const void *const *inputs, void *const *outputs,
//                                    const yr_runtime *rt);
// which runs the program on compact row-major host tensors (float16 as _Float16 bits, bfloat16
// as its 16 high float bits, float32) on the threads `rt` lends (the plugin's pool,
// backends/cpu/thread_pool.hpp; NULL: the calling thread alone), returning 0, or 1 when a thread
// could not allocate its tile memory. Everything computes in float32.
//
// A customized operator's blocks are the iterations of a parallel loop; each chunk of blocks has
// an arena holding every tile of a block (the "shared memory"), sized for the µGraph and reused
// block after block, so tiles stay cache-resident. The for-loop is a loop; matmuls (tiles and
// pre-defined ops alike) use one register-blocked micro-kernel whose inner loop runs along
// contiguous columns so the compiler vectorizes it. Pre-defined operators are parallel loops
// over their outputs. A program of several operators (plugin ABI 1.4) runs them in order in one
// parallel region (backends/cpu/parallel_region.hpp), the tensors only they read in memory the
// plugin passes after the outputs (program_own_tensors).
#pragma once

#include <string>
#include <vector>

#include "serialize/kernel_program.hpp"

namespace yirage::codegen {

inline constexpr const char *kCpuKernelSymbol = "yirage_cpu_kernel";

// Throws Error(kUnsupported) for an operator it cannot generate.
std::string cpu_source(const serialize::KernelProgram &program);

// A program of several operators: the tensors its operators write that the host does not read
// (not outputs), in order. The kernel finds their memory, which the plugin provides, in
// `outputs` after the program's outputs, in this order, each a tensor's compact bytes.
std::vector<TensorId> program_own_tensors(const KernelGraph &program_graph);

}  // namespace yirage::codegen
