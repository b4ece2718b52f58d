// The skeleton's code generator, built on yirage's code-generation kit (pkg-config
// yirage-codegen, docs/plugin-guide.md): a kernel program's bytes are read, lowered to the
// loop-level form and printed as C for one thread by a printer of a few dozen lines. A real
// backend prints its own language instead: how its threads share loops, how it reads and writes
// its buffers, its barriers, and its fast paths (a matrix unit for Matmul statements).
#pragma once

#include <cstddef>
#include <string>

namespace skeleton {

// The C source of `program` (`size` bytes of a kernel program): one function
//   void skeleton_kernel(const float *const *inputs, float *const *outputs)
// preceded by the helpers it uses. Throws yirage::Error: kCorruptData for malformed bytes,
// kUnsupported for tensors other than float32 (this generator's limit).
std::string c_source(const void *program, size_t size);

}  // namespace skeleton
