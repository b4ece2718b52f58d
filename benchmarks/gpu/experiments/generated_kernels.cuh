// What attention_split.cu and attention_variants.cu share: loading a kernel yirage generated
// (`yirage_cuda_kernel` of NAME_PART.cubin) through the driver API.
#pragma once
#include <cuda.h>
#include <cstdio>
#include <cstdlib>

#define CK(x)                    \
  do {                           \
    CUresult r = (x);            \
    if (r != CUDA_SUCCESS) {     \
      const char *s;             \
      cuGetErrorString(r, &s);   \
      printf("%s: %s\n", #x, s); \
      exit(1);                   \
    }                            \
  } while (0)

// The kernel of NAME_PART.cubin, allowed `smem` bytes of dynamic shared memory; its module in
// *module where that is given.
static CUfunction load_generated(const char *name, const char *part, unsigned smem, CUmodule *module = nullptr) {
  char path[256];
  snprintf(path, sizeof path, "%s_%s.cubin", name, part);
  CUmodule m;
  CUfunction f;
  CK(cuModuleLoad(&m, path));
  CK(cuModuleGetFunction(&f, m, "yirage_cuda_kernel"));
  CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
  if (module != nullptr) *module = m;
  return f;
}
