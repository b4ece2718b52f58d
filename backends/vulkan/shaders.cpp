#include "shaders.hpp"

#include <shaderc/shaderc.h>
#include <spirv-tools/libspirv.h>

#include <memory>

#include "util/file_cache.hpp"
#include "vulkan/codegen/glsl_source.hpp"

namespace yirage::vulkan {
namespace {

// Longest compiler log kept in an error (the error channel holds 4 KiB).
constexpr size_t kMaxLogBytes = 3000;

std::string shorter(std::string text) {
  if (text.size() > kMaxLogBytes) text = text.substr(0, kMaxLogBytes) + "\n[log truncated]";
  return text;
}

const char *status_name(shaderc_compilation_status status) {
  switch (status) {
    case shaderc_compilation_status_success: return "success";
    case shaderc_compilation_status_invalid_stage: return "invalid stage";
    case shaderc_compilation_status_compilation_error: return "compilation error";
    case shaderc_compilation_status_internal_error: return "internal error";
    case shaderc_compilation_status_null_result_object: return "null result";
    case shaderc_compilation_status_invalid_assembly: return "invalid assembly";
    case shaderc_compilation_status_validation_error: return "validation error";
    case shaderc_compilation_status_transformation_error: return "transformation error";
    case shaderc_compilation_status_configuration_error: return "configuration error";
  }
  return "unknown status";
}

// What distinguishes the compiler's output besides the source: its SPIR-V version and options.
std::string compiler_id(int optimization_level) {
  unsigned int version = 0, revision = 0;
  shaderc_get_spv_version(&version, &revision);
  return "shaderc spv " + std::to_string(version) + "." + std::to_string(revision) + " vulkan1.1 O" +
         (optimization_level == 0 ? "0" : "performance");
}

// One compiler for the process, never released: glslang parses its built-in declarations again
// after the last compiler is released (about 0.1 s a shader), and shaderc_compile_into_spv may be
// called on one compiler from several threads.
shaderc_compiler_t process_compiler() {
  static const shaderc_compiler_t compiler = shaderc_compiler_initialize();
  return compiler;
}

std::vector<uint32_t> words_of(const std::string &bytes) {
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

}  // namespace

std::vector<uint32_t> compile_glsl(const std::string &source, int optimization_level) {
  const shaderc_compiler_t compiler = process_compiler();
  const std::unique_ptr<shaderc_compile_options, decltype(&shaderc_compile_options_release)> options(
      shaderc_compile_options_initialize(), shaderc_compile_options_release);
  if (compiler == nullptr || !options) throw Error(ErrorCode::kOutOfMemory, "vulkan: shaderc could not start");
  shaderc_compile_options_set_target_env(options.get(), shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
  shaderc_compile_options_set_optimization_level(options.get(), optimization_level == 0
                                                                    ? shaderc_optimization_level_zero
                                                                    : shaderc_optimization_level_performance);
  const std::unique_ptr<shaderc_compilation_result, decltype(&shaderc_result_release)> result(
      shaderc_compile_into_spv(compiler, source.data(), source.size(), shaderc_compute_shader, "yirage.comp", "main",
                               options.get()),
      shaderc_result_release);
  if (!result) throw Error(ErrorCode::kOutOfMemory, "vulkan: shaderc gave no result");
  const shaderc_compilation_status status = shaderc_result_get_compilation_status(result.get());
  if (status != shaderc_compilation_status_success) {
    const char *message = shaderc_result_get_error_message(result.get());
    throw backend::NativeError(ErrorCode::kBackend,
                               std::string("vulkan: the GLSL compiler (shaderc) failed: ") + status_name(status) +
                                   ":\n" + shorter(message != nullptr ? message : ""),
                               status);
  }
  const std::string bytes(shaderc_result_get_bytes(result.get()), shaderc_result_get_length(result.get()));
  std::vector<uint32_t> spirv = words_of(bytes);
  const std::string invalid = validate_spirv(spirv);
  if (!invalid.empty()) {
    throw backend::NativeError(ErrorCode::kBackend,
                               "vulkan: the compiler's SPIR-V is invalid (spirv-val): " + shorter(invalid),
                               shaderc_compilation_status_validation_error);
  }
  return spirv;
}

std::string validate_spirv(const std::vector<uint32_t> &spirv) {
  const std::unique_ptr<spv_context_t, decltype(&spvContextDestroy)> context(spvContextCreate(SPV_ENV_VULKAN_1_1),
                                                                             spvContextDestroy);
  spv_diagnostic diagnostic = nullptr;
  spv_const_binary_t binary{spirv.data(), spirv.size()};
  const spv_result_t result = spvValidate(context.get(), &binary, &diagnostic);
  std::string message;
  if (result != SPV_SUCCESS) {
    message = diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error
                                                                    : "spv_result_t " + std::to_string(result);
  }
  spvDiagnosticDestroy(diagnostic);
  return message;
}

std::vector<uint32_t> cached_spirv(const std::string &source, int optimization_level, const std::string &cache_dir,
                                   const BuildLog &log) {
  const std::string key = util::hash_hex(source + '\0' + compiler_id(optimization_level));
  const std::string path = cache_dir + "/" + key + ".spv";
  std::string why;
  if (auto cached = util::read_cached(path, &why)) {
    if (cached->size() % 4 == 0 && !cached->empty()) return words_of(*cached);
    why = "not whole SPIR-V words";
  }
  if (!why.empty()) log(BuildWarning::kRebuilt, "vulkan: rebuilding " + path + ": " + why);
  std::vector<uint32_t> spirv = compile_glsl(source, optimization_level);
  try {
    util::store_cached(cache_dir + "/" + key + ".comp", source);
    util::store_cached(path, std::string(reinterpret_cast<const char *>(spirv.data()), spirv.size() * 4));
  } catch (const Error &e) {
    log(BuildWarning::kCacheUnwritable, "vulkan: the kernel cache " + cache_dir + " cannot be written (" + e.what() +
                                            "): shaders are compiled and used without being kept");
  }
  return spirv;
}

Pipeline create_pipeline(const Api &api, const Device &d, const std::vector<uint32_t> &spirv, uint32_t buffers) {
  Pipeline p;
  p.buffers = buffers;
  try {
    auto module = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    module.codeSize = spirv.size() * 4;
    module.pCode = spirv.data();
    check(api.vkCreateShaderModule(d.device, &module, nullptr, &p.module), "vkCreateShaderModule");
    std::vector<VkDescriptorSetLayoutBinding> bindings(buffers);
    for (uint32_t i = 0; i < buffers; ++i) {
      bindings[i].binding = i;
      bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      bindings[i].descriptorCount = 1;
      bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    auto set = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    set.bindingCount = buffers;
    set.pBindings = bindings.data();
    check(api.vkCreateDescriptorSetLayout(d.device, &set, nullptr, &p.set_layout), "vkCreateDescriptorSetLayout");
    const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(codegen::GlslPushConstants)};
    auto layout = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &p.set_layout;
    layout.pushConstantRangeCount = 1;
    layout.pPushConstantRanges = &push;
    check(api.vkCreatePipelineLayout(d.device, &layout, nullptr, &p.layout), "vkCreatePipelineLayout");
    auto create = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    create.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create.stage.module = p.module;
    create.stage.pName = "main";
    create.layout = p.layout;
    check(api.vkCreateComputePipelines(d.device, d.pipeline_cache, 1, &create, nullptr, &p.pipeline),
          "vkCreateComputePipelines");
  } catch (...) {
    release_pipeline(api, d, p);
    throw;
  }
  return p;
}

void release_pipeline(const Api &api, const Device &d, Pipeline &p) {
  if (p.pipeline != VK_NULL_HANDLE) api.vkDestroyPipeline(d.device, p.pipeline, nullptr);
  if (p.layout != VK_NULL_HANDLE) api.vkDestroyPipelineLayout(d.device, p.layout, nullptr);
  if (p.set_layout != VK_NULL_HANDLE) api.vkDestroyDescriptorSetLayout(d.device, p.set_layout, nullptr);
  if (p.module != VK_NULL_HANDLE) api.vkDestroyShaderModule(d.device, p.module, nullptr);
  p = Pipeline{};
}

}  // namespace yirage::vulkan
