/* A fake HIP runtime with hiprtc and the code object manager's ISA list, for the HIP plugin's
 * host-code tests (YIRAGE_HIP_LIBRARY points the plugin at it; it is never installed). Memory is
 * host malloc; copies happen at once; kernels never run: a launch is recorded. Set through the
 * environment, read at each call:
 *   FAKE_HIP_DEVICES        how many devices (default 2); 0: hipGetDeviceCount says hipErrorNoDevice
 *   FAKE_HIP_ARCH           their gcnArchName (default gfx90a:sramecc+:xnack-), FAKE_HIP_WAVEFRONT (64)
 *   FAKE_HIP_MEMORY_LIMIT   the largest allocation that succeeds (default 256 MiB; larger:
 *                           hipErrorOutOfMemory), though each device reports 64 GiB
 *   FAKE_HIP_COMPILE_ERROR  set: hiprtc fails every compile with a log naming the first line
 *   FAKE_HIP_MFMA_WRONG     set: the matrix cores' self-test gets A·Bᵀ (a wrong layout), not A·B
 * The code object is the text "FAKE-CODE-OBJECT <arch>\n" and the source; hipModuleLoadData takes
 * nothing else, hipModuleGetFunction finds a kernel named in it. The one kernel that runs is the
 * plugin's MFMA self-test (mfma_probe.hpp): its three 16 x 16 products are computed here, as a
 * device whose matrix cores work would (counted in mfma_probes, not launches). fake_hip_stats()
 * tells the tests what happened. */
#define _POSIX_C_SOURCE 200809L
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

struct fake_hip_stats {
  int compiles, modules_loaded, modules_unloaded, launches, allocations, frees;
  unsigned grid[3], block, shared_bytes;
  void *last_stream;
  int current_device;
  int mfma_probes;
};
static struct fake_hip_stats stats;

FAKE_EXPORT struct fake_hip_stats *fake_hip_stats(void) {
  return &stats;
}

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  return v != NULL && *v != '\0' ? strtol(v, NULL, 10) : fallback;
}
static const char *env_text(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return v != NULL && *v != '\0' ? v : fallback;
}

FAKE_EXPORT const char *hipGetErrorName(hipError_t e) {
  switch (e) {
    case hipSuccess: return "hipSuccess";
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
    case hipErrorNoDevice: return "hipErrorNoDevice";
    case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
    case hipErrorInvalidImage: return "hipErrorInvalidImage";
    case hipErrorNotFound: return "hipErrorNotFound";
    default: return "hipErrorUnknown";
  }
}
FAKE_EXPORT const char *hipGetErrorString(hipError_t e) {
  switch (e) {
    case hipErrorOutOfMemory: return "out of memory";
    case hipErrorNoDevice: return "no ROCm-capable device is detected";
    default: return hipGetErrorName(e);
  }
}
FAKE_EXPORT hipError_t hipRuntimeGetVersion(int *v) {
  *v = 50221153;
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipGetDeviceCount(int *count) {
  *count = (int)env_long("FAKE_HIP_DEVICES", 2);
  return *count > 0 ? hipSuccess : hipErrorNoDevice;
}
FAKE_EXPORT hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int device) {
  if (device < 0 || device >= env_long("FAKE_HIP_DEVICES", 2)) return hipErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "Fake Instinct MI210");
  snprintf(p->gcnArchName, sizeof p->gcnArchName, "%s", env_text("FAKE_HIP_ARCH", "gfx90a:sramecc+:xnack-"));
  p->totalGlobalMem = (size_t)64 << 30;
  p->sharedMemPerBlock = 64 * 1024;
  p->maxSharedMemoryPerMultiProcessor = 64 * 1024;
  p->warpSize = (int)env_long("FAKE_HIP_WAVEFRONT", 64);
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsPerMultiProcessor = 2560;
  p->multiProcessorCount = 104;
  p->clockRate = 1700000;
  p->memoryClockRate = 1600000;
  p->memoryBusWidth = 4096;
  p->l2CacheSize = 8 << 20;
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipSetDevice(int device) {
  if (device < 0 || device >= env_long("FAKE_HIP_DEVICES", 2)) return hipErrorInvalidDevice;
  stats.current_device = device;
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipDeviceSynchronize(void) {
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipStreamSynchronize(hipStream_t stream) {
  (void)stream;
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipMalloc(void **p, size_t bytes) {
  if ((long)bytes > env_long("FAKE_HIP_MEMORY_LIMIT", 256L << 20)) return hipErrorOutOfMemory;
  *p = malloc(bytes);
  if (*p == NULL) return hipErrorOutOfMemory;
  ++stats.allocations;
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipFree(void *p) {
  if (p != NULL) ++stats.frees;
  free(p);
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t bytes) {
  memcpy(dst, src, bytes);
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t bytes) {
  memcpy(dst, src, bytes);
  return hipSuccess;
}

static const char kMagic[] = "FAKE-CODE-OBJECT ";
struct fake_module {
  char *code;
};
FAKE_EXPORT hipError_t hipModuleLoadData(hipModule_t *module, const void *image) {
  if (strncmp((const char *)image, kMagic, sizeof kMagic - 1) != 0) return hipErrorInvalidImage;
  struct fake_module *m = malloc(sizeof *m);
  m->code = strdup((const char *)image);
  *module = (hipModule_t)m;
  ++stats.modules_loaded;
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipModuleUnload(hipModule_t module) {
  struct fake_module *m = (struct fake_module *)module;
  free(m->code);
  free(m);
  ++stats.modules_unloaded;
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *name) {
  struct fake_module *m = (struct fake_module *)module;
  if (strstr(m->code, name) == NULL) return hipErrorNotFound;
  *function = (hipFunction_t)m;
  return hipSuccess;
}
/* The MFMA self-test's O = A·B (A·Bᵀ with FAKE_HIP_MFMA_WRONG): three 16 x 16 products, row-major. */
static void run_mfma_probe(void **args) {
  const float *a = *(const float **)args[0], *b = *(const float **)args[1];
  float *o = *(float **)args[2];
  const int wrong = getenv("FAKE_HIP_MFMA_WRONG") != NULL;
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 16; ++i) {
      for (int j = 0; j < 16; ++j) {
        float sum = 0;
        for (int k = 0; k < 16; ++k) sum += a[c * 256 + i * 16 + k] * b[c * 256 + (wrong ? j * 16 + k : k * 16 + j)];
        o[c * 256 + i * 16 + j] = sum;
      }
    }
  }
  ++stats.mfma_probes;
}

FAKE_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                             unsigned by, unsigned bz, unsigned shared, hipStream_t stream, void **args,
                                             void **extra) {
  (void)extra;
  if (bx * by * bz > 1024 || shared > 64 * 1024) return hipErrorInvalidValue;
  if (strstr(((struct fake_module *)f)->code, "void __launch_bounds__(64) yirage_mfma_probe(") != NULL) {
    run_mfma_probe(args);
    return hipSuccess;
  }
  ++stats.launches;
  stats.grid[0] = gx;
  stats.grid[1] = gy;
  stats.grid[2] = gz;
  stats.block = bx;
  stats.shared_bytes = shared;
  stats.last_stream = stream;
  return hipSuccess;
}

/* Events: a tick per record, half a millisecond apart. */
static long ticks;
FAKE_EXPORT hipError_t hipEventCreate(hipEvent_t *event) {
  *event = (hipEvent_t)calloc(1, sizeof(long));
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipEventDestroy(hipEvent_t event) {
  free(event);
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  (void)stream;
  *(long *)event = ++ticks;
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipEventSynchronize(hipEvent_t event) {
  (void)event;
  return hipSuccess;
}
FAKE_EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop) {
  *ms = 0.5f * (float)(*(long *)stop - *(long *)start);
  return hipSuccess;
}

/* hiprtc */
struct fake_program {
  char *source, *code, *log;
};
FAKE_EXPORT hiprtcResult hiprtcVersion(int *major, int *minor) {
  *major = 5;
  *minor = 2;
  return HIPRTC_SUCCESS;
}
FAKE_EXPORT const char *hiprtcGetErrorString(hiprtcResult r) {
  return r == HIPRTC_ERROR_COMPILATION ? "HIPRTC_ERROR_COMPILATION"
         : r == HIPRTC_SUCCESS         ? "HIPRTC_SUCCESS"
                                       : "HIPRTC_ERROR";
}
FAKE_EXPORT hiprtcResult hiprtcCreateProgram(hiprtcProgram *program, const char *source, const char *name, int n,
                                             const char **headers, const char **names) {
  (void)name;
  (void)n;
  (void)headers;
  (void)names;
  struct fake_program *p = calloc(1, sizeof *p);
  p->source = strdup(source);
  *program = (hiprtcProgram)p;
  return HIPRTC_SUCCESS;
}
FAKE_EXPORT hiprtcResult hiprtcDestroyProgram(hiprtcProgram *program) {
  struct fake_program *p = (struct fake_program *)*program;
  free(p->source);
  free(p->code);
  free(p->log);
  free(p);
  *program = NULL;
  return HIPRTC_SUCCESS;
}
FAKE_EXPORT hiprtcResult hiprtcCompileProgram(hiprtcProgram program, int n, const char **options) {
  struct fake_program *p = (struct fake_program *)program;
  const char *arch = "";
  for (int i = 0; i < n; ++i) {
    if (strncmp(options[i], "--offload-arch=", 15) == 0) arch = options[i] + 15;
  }
  ++stats.compiles;
  if (getenv("FAKE_HIP_COMPILE_ERROR") != NULL) {
    p->log = strdup("fake hiprtc: yirage_kernel.hip:1:1: error: FAKE_HIP_COMPILE_ERROR is set");
    return HIPRTC_ERROR_COMPILATION;
  }
  p->code = malloc(strlen(kMagic) + strlen(arch) + 1 + strlen(p->source) + 1);
  sprintf(p->code, "%s%s\n%s", kMagic, arch, p->source);
  return HIPRTC_SUCCESS;
}
FAKE_EXPORT hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram program, size_t *size) {
  struct fake_program *p = (struct fake_program *)program;
  *size = p->log != NULL ? strlen(p->log) + 1 : 1;
  return HIPRTC_SUCCESS;
}
FAKE_EXPORT hiprtcResult hiprtcGetProgramLog(hiprtcProgram program, char *log) {
  struct fake_program *p = (struct fake_program *)program;
  strcpy(log, p->log != NULL ? p->log : "");
  return HIPRTC_SUCCESS;
}
FAKE_EXPORT hiprtcResult hiprtcGetCodeSize(hiprtcProgram program, size_t *size) {
  struct fake_program *p = (struct fake_program *)program;
  *size = strlen(p->code) + 1;
  return HIPRTC_SUCCESS;
}
FAKE_EXPORT hiprtcResult hiprtcGetCode(hiprtcProgram program, char *code) {
  struct fake_program *p = (struct fake_program *)program;
  strcpy(code, p->code);
  return HIPRTC_SUCCESS;
}

/* The code object manager's ISA list: what Debian's ROCm 5.2 compiles for, abridged. */
static const char *const kIsas[] = {"amdgcn-amd-amdhsa--gfx908", "amdgcn-amd-amdhsa--gfx90a",
                                    "amdgcn-amd-amdhsa--gfx1030"};
FAKE_EXPORT int amd_comgr_get_isa_count(size_t *count) {
  *count = sizeof kIsas / sizeof kIsas[0];
  return 0;
}
FAKE_EXPORT int amd_comgr_get_isa_name(size_t index, const char **name) {
  if (index >= sizeof kIsas / sizeof kIsas[0]) return 1;
  *name = kIsas[index];
  return 0;
}
