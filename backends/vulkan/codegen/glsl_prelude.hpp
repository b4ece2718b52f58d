#pragma once

namespace yirage::codegen::vulkan {

// What every generated compute shader defines after its layout lines: NAN and INFINITY (GLSL has
// neither), the math helpers of the loop-level form (codegen/expr.hpp), and the 16-bit
// conversions of both storage paths (glsl_printer.hpp).
extern const char *const kGlslPrelude;

}  // namespace yirage::codegen::vulkan
