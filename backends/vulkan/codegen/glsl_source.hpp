// The Vulkan backend's code generator: one GLSL 450 compute shader per kernel program, through the
// shared lowering (src/codegen) and GlslPrinter, compiled to SPIR-V by the plugin (shaderc).
//
// The shader's storage buffers are the program's inputs, then its outputs (set 0, bindings 0…,
// compact row-major tensors); its push constants (GlslPushConstants) say which part of a
// dispatch split along x this is. A customized operator runs one work-group per µGraph block
// (bx, by, bz), its tiles in a `shared float` arena; a pre-defined operator is loops strided over
// the dispatch's invocations, rows of reductions and rms_norm spread over the work-groups.
// docs/backends/vulkan.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "serialize/kernel_program.hpp"

namespace yirage::codegen {

// What the generated source may use on its device.
struct VulkanTarget {
  int64_t max_shared_bytes = 0;   // maxComputeSharedMemorySize; 0: no limit
  int64_t max_work_group = 256;   // the largest work-group (maxComputeWorkGroupInvocations and size[0])
  int64_t compute_units = 1;      // an estimate: work-groups that run at once
  int64_t max_groups_yz = 65535;  // maxComputeWorkGroupCount[1] and [2]
  int64_t max_buffer_bytes = 0;   // maxStorageBufferRange: the most a shader may see of a buffer; 0: no limit
  bool storage16 = false;         // storageBuffer16BitAccess: 16-bit elements, else packed words
  bool cpu = false;               // a CPU device (lavapipe): fewer, smaller work-groups
};

// The push constants every shader declares: the dispatch's first work-group along x and the
// whole grid's work-groups along x (a grid wider than maxComputeWorkGroupCount[0] is dispatched
// in parts).
struct GlslPushConstants {
  int32_t group_base = 0;
  int32_t groups_x = 1;
};

struct VulkanKernel {
  std::string source;
  std::array<int64_t, 3> groups = {1, 1, 1};  // work-groups per dimension
  int64_t local_size = 1;                     // invocations per work-group (x only)
  int64_t buffers = 0;                        // storage-buffer bindings: inputs, then outputs
};

// Throws Error(kUnsupported) for an operator it cannot generate: a customized operator whose
// tiles need more than target.max_shared_bytes or whose grid exceeds max_groups_yz, or tensors
// too large for 32-bit indices or for max_buffer_bytes.
VulkanKernel glsl_source(const serialize::KernelProgram &program, const VulkanTarget &target);

}  // namespace yirage::codegen
