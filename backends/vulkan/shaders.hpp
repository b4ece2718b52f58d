// Generated GLSL to a compute pipeline: compiled in the process by shaderc (linked statically:
// Debian's shared libshaderc is broken), the SPIR-V checked by SPIRV-Tools' validator and kept in
// the checksummed kernel cache (util/file_cache.hpp) as `<key>.spv` with its `<key>.comp` beside
// it, keyed by the source and the compiler's options; pipelines go through the device's
// VkPipelineCache (devices.hpp), which is kept on disk too.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "devices.hpp"

namespace yirage::vulkan {

// The SPIR-V of a compute shader (`source`, GLSL 450) for Vulkan 1.1, optimized for speed unless
// `optimization_level` is 0. A failed compile throws NativeError(kBackend) carrying shaderc's
// status and the compiler's messages; SPIR-V the validator refuses throws the same with its
// message (a compiler bug: nothing invalid reaches a driver).
std::vector<uint32_t> compile_glsl(const std::string &source, int optimization_level);

// The validator's complaint about `spirv` for Vulkan 1.1, or "" when it is valid.
std::string validate_spirv(const std::vector<uint32_t> &spirv);

// Warnings: a damaged entry rebuilt, or a cache that cannot be written (a caller may give that one
// once).
enum class BuildWarning { kRebuilt, kCacheUnwritable };
using BuildLog = std::function<void(BuildWarning, const std::string &)>;

// compile_glsl's result from the cache where an intact entry is kept, else compiled and kept.
std::vector<uint32_t> cached_spirv(const std::string &source, int optimization_level, const std::string &cache_dir,
                                   const BuildLog &log);

// A compute pipeline taking `buffers` storage buffers (set 0, bindings 0…) and the push
// constants of codegen::GlslPushConstants.
struct Pipeline {
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t buffers = 0;
};
// Failures throw NativeError with the VkResult; nothing is left behind.
Pipeline create_pipeline(const Api &api, const Device &d, const std::vector<uint32_t> &spirv, uint32_t buffers);
void release_pipeline(const Api &api, const Device &d, Pipeline &pipeline);

}  // namespace yirage::vulkan
