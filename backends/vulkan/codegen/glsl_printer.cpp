#include "vulkan/codegen/glsl_printer.hpp"

namespace yirage::codegen::vulkan {

const char *element_type(DType dtype, bool storage16) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: return storage16 ? "uint16_t" : "uint";
    case DType::kFloat32: break;
  }
  return "float";
}

std::string GlslPrinter::pointer(const BufferRef &buffer) const {
  // Only ever indexed (load_text, print_store): GLSL has no pointers.
  if (buffer.space == MemorySpace::kShared) return "arena";
  return buffer.name;
}

std::string GlslPrinter::load_text(const BufferRef &buffer, const std::string &index) const {
  switch (buffer.space) {
    case MemorySpace::kShared: return "arena[" + std::to_string(buffer.offset) + " + " + index + "]";
    case MemorySpace::kRegisters: return buffer.name + "[" + index + "]";
    case MemorySpace::kGlobal: break;
  }
  const std::string element = buffer.name + ".data[" + index + "]";
  const std::string word = buffer.name + ".data[(" + index + ") >> 1]";
  switch (buffer.element) {
    case DType::kFloat16:
      return storage16_ ? "unpackHalf2x16(uint(" + element + ")).x" : "yr_half_of(" + word + ", " + index + ")";
    case DType::kBFloat16:
      return storage16_ ? "uintBitsToFloat(uint(" + element + ") << 16)" : "yr_bf16_of(" + word + ", " + index + ")";
    case DType::kFloat32: break;
  }
  return element;
}

void GlslPrinter::print_store(const BufferRef &buffer, const std::string &index, const std::string &value) {
  if (buffer.space != MemorySpace::kGlobal) {
    p_.line(load_text(buffer, index) + " = " + value + ";");
    return;
  }
  const std::string element = buffer.name + ".data[" + index + "]";
  if (buffer.element == DType::kFloat32) {
    p_.line(element + " = " + value + ";");
    return;
  }
  const bool half = buffer.element == DType::kFloat16;
  if (storage16_) {
    p_.line(element + " = uint16_t(" + (half ? "yr_f16_bits(" : "yr_bf16_bits(") + value + "));");
    return;
  }
  // The element's half of its word, cleared then set: the other half may be another invocation's.
  p_.open("");
  p_.line("const int yr_i = " + index + ";");
  p_.line("const uint yr_shift = uint(yr_i & 1) * 16u;");
  p_.line("atomicAnd(" + buffer.name + ".data[yr_i >> 1], ~(0xffffu << yr_shift));");
  p_.line("atomicOr(" + buffer.name + ".data[yr_i >> 1], " + (half ? "yr_f16_bits(" : "yr_bf16_bits(") + value +
          ") << yr_shift);");
  p_.close();
}

}  // namespace yirage::codegen::vulkan
