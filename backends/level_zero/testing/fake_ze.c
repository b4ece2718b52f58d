/* A fake Level Zero loader for the plugin's tests: one driver whose GPUs look like a Data Center
 * GPU Max, memory in host malloc, copies done at once, kernels never run. It implements the ze*
 * entries the plugin uses (backends/level_zero/ze_api.hpp) and records each call, so that tests
 * see what the plugin did. Built twice: with FAKE_ZE_INIT_DRIVERS it also exports zeInitDrivers.
 *
 * Set in the environment before the first call:
 *   FAKE_ZE_INIT_RESULT    what zeInit / zeInitDrivers return (e.g. 0x78000001); 0 by default
 *   FAKE_ZE_DEVICES        how many GPUs (2 by default)
 *   FAKE_ZE_DEVICE_MEMORY  bytes each device may allocate in all (512 MiB by default); beyond it,
 *                          ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
 *   FAKE_ZE_BUILD_LOG      zeModuleCreate fails with ZE_RESULT_ERROR_MODULE_BUILD_FAILURE and
 *                          this build log
 *
 * For the test (dlsym on the same library):
 *   fake_ze_calls()        the calls so far, one name each, separated by spaces; a launch is
 *                          "zeCommandListAppendLaunchKernel(X,Y,Z/G:A)", X·Y·Z groups of G
 *                          work-items with A arguments set
 *   fake_ze_violations()   calls made after a failed initialization (or before any), and calls
 *                          given a handle or descriptor that no real driver would take
 *
 * The global timestamp starts 100 ticks below 2^32, advances 19200 ticks (1 ms at the 19.2 MHz it
 * reports) per kernel launch and 1 per other write, and is written with junk above its 32 valid
 * bits. Not thread-safe beyond what the plugin's locks give it: a test tool only. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, strdup */
#include <level_zero/ze_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* ---- state ---- */

enum { kMaxDevices = 8, kMaxAllocations = 4096, kLogBytes = 1 << 16 };

struct _ze_driver_handle_t {
  int unused;
};
struct _ze_device_handle_t {
  int index;
  size_t allocated; /* bytes of device memory in use */
};
struct _ze_context_handle_t {
  int live;
};
struct _ze_command_list_handle_t {
  ze_device_handle_t device;
};
struct _ze_event_pool_handle_t {
  uint32_t count;
};
struct _ze_event_handle_t {
  int signalled;
};
struct _ze_module_handle_t {
  uint8_t *spirv;
  size_t size;
};
struct _ze_kernel_handle_t {
  ze_module_handle_t module;
  uint32_t group_size;
  uint32_t arguments; /* bit per argument set */
};
struct _ze_module_build_log_handle_t {
  char *text;
};

struct allocation {
  void *pointer;
  size_t size;
  ze_memory_type_t type;
  ze_device_handle_t device;
};

static struct _ze_driver_handle_t driver;
static struct _ze_device_handle_t devices[kMaxDevices];
static int device_count;
static int initialized; /* 1 after a successful init, -1 after a failed one */
static struct allocation allocations[kMaxAllocations];
static char call_log[kLogBytes];
static int violations;
static uint64_t clock_ticks = 0xffffffffull - 100;

static uint64_t env_number(const char *name, uint64_t fallback) {
  const char *text = getenv(name);
  return text != NULL && *text != '\0' ? strtoull(text, NULL, 0) : fallback;
}

static void record(const char *call) {
  const size_t used = strlen(call_log);
  if (used + strlen(call) + 2 < sizeof call_log) {
    if (used > 0) strcat(call_log, " ");
    strcat(call_log, call);
  }
}

/* Records the call; false (and a violation) unless the driver was initialized. */
static int enter(const char *call) {
  record(call);
  if (initialized != 1) {
    ++violations;
    return 0;
  }
  return 1;
}

static int known_device(ze_device_handle_t device) {
  for (int i = 0; i < device_count; ++i) {
    if (device == &devices[i]) return 1;
  }
  ++violations;
  return 0;
}

static struct allocation *find_allocation(const void *pointer) {
  for (int i = 0; i < kMaxAllocations; ++i) {
    const struct allocation *a = &allocations[i];
    if (a->pointer != NULL && (const char *)pointer >= (const char *)a->pointer &&
        (const char *)pointer < (const char *)a->pointer + (a->size > 0 ? a->size : 1)) {
      return &allocations[i];
    }
  }
  return NULL;
}

static ze_result_t allocate(size_t size, size_t alignment, ze_memory_type_t type, ze_device_handle_t device,
                            void **out) {
  if (out == NULL || size == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) {
    ++violations;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  if (type == ZE_MEMORY_TYPE_DEVICE &&
      device->allocated + size > env_number("FAKE_ZE_DEVICE_MEMORY", (uint64_t)512 << 20)) {
    return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  for (int i = 0; i < kMaxAllocations; ++i) {
    if (allocations[i].pointer != NULL) continue;
    void *pointer = NULL;
    if (posix_memalign(&pointer, alignment < sizeof(void *) ? sizeof(void *) : alignment, size) != 0) {
      return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    allocations[i] = (struct allocation){pointer, size, type, device};
    if (type == ZE_MEMORY_TYPE_DEVICE) device->allocated += size;
    *out = pointer;
    return ZE_RESULT_SUCCESS;
  }
  return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

static int memory_reachable(const void *pointer, size_t size) {
  const struct allocation *a = find_allocation(pointer);
  if (a == NULL || (const char *)pointer + size > (const char *)a->pointer + a->size) {
    ++violations; /* the plugin must copy through memory the device can reach */
    return 0;
  }
  return 1;
}

/* ---- what the test reads ---- */

FAKE_EXPORT const char *fake_ze_calls(void) {
  return call_log;
}
FAKE_EXPORT int fake_ze_violations(void) {
  return violations;
}

/* ---- initialization and drivers ---- */

static ze_result_t initialize(void) {
  const ze_result_t result = (ze_result_t)env_number("FAKE_ZE_INIT_RESULT", 0);
  if (result != ZE_RESULT_SUCCESS) {
    initialized = -1;
    return result;
  }
  if (initialized == -1) ++violations; /* called again after a failure */
  initialized = 1;
  device_count = (int)env_number("FAKE_ZE_DEVICES", 2);
  if (device_count > kMaxDevices) device_count = kMaxDevices;
  for (int i = 0; i < device_count; ++i) devices[i].index = i;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeInit(ze_init_flags_t flags) {
  record("zeInit");
  if (initialized == -1) ++violations;
  if (flags != ZE_INIT_FLAG_GPU_ONLY) ++violations;
  return initialize();
}

#ifdef FAKE_ZE_INIT_DRIVERS
typedef struct {
  ze_structure_type_t stype;
  const void *pNext;
  uint32_t flags;
} fake_init_driver_type_desc_t;

FAKE_EXPORT ze_result_t zeInitDrivers(uint32_t *count, ze_driver_handle_t *drivers,
                                      fake_init_driver_type_desc_t *desc) {
  record("zeInitDrivers");
  if (initialized == -1) ++violations;
  if (count == NULL || desc == NULL || desc->stype != (ze_structure_type_t)0x00020021 || desc->flags != 1) {
    ++violations;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  const ze_result_t result = initialize();
  if (result != ZE_RESULT_SUCCESS) return result;
  if (drivers != NULL && *count >= 1) drivers[0] = &driver;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}
#endif

ze_result_t zeDriverGet(uint32_t *count, ze_driver_handle_t *drivers) {
  if (!enter("zeDriverGet")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (drivers != NULL && *count >= 1) drivers[0] = &driver;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDriverGetProperties(ze_driver_handle_t handle, ze_driver_properties_t *properties) {
  if (!enter("zeDriverGetProperties")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (handle != &driver) ++violations;
  properties->driverVersion = (1u << 24) | (3u << 16) | 26241u;
  return ZE_RESULT_SUCCESS;
}

/* ---- devices ---- */

ze_result_t zeDeviceGet(ze_driver_handle_t handle, uint32_t *count, ze_device_handle_t *out) {
  if (!enter("zeDeviceGet")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (handle != &driver) ++violations;
  if (out != NULL) {
    for (uint32_t i = 0; i < *count && i < (uint32_t)device_count; ++i) out[i] = &devices[i];
  }
  if (out == NULL || *count > (uint32_t)device_count) *count = (uint32_t)device_count;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetProperties(ze_device_handle_t device, ze_device_properties_t *p) {
  if (!enter("zeDeviceGetProperties") || !known_device(device)) return ZE_RESULT_ERROR_UNINITIALIZED;
  /* A Data Center GPU Max 1100: 56 Xe-cores of 8 EUs, SIMD16, 1.55 GHz. */
  const ze_structure_type_t stype = p->stype;
  void *next = p->pNext;
  memset(p, 0, sizeof *p);
  p->stype = stype;
  p->pNext = next;
  p->type = ZE_DEVICE_TYPE_GPU;
  p->vendorId = 0x8086;
  p->deviceId = 0x0bda;
  p->coreClockRate = 1550;
  p->maxMemAllocSize = (uint64_t)256 << 20;
  p->numThreadsPerEU = 8;
  p->physicalEUSimdWidth = 16;
  p->numEUsPerSubslice = 8;
  p->numSubslicesPerSlice = 14;
  p->numSlices = 4;
  /* ns per tick with the 1.0 structure, ticks per second with 1.2's */
  p->timerResolution = stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? 19200000 : 52;
  p->timestampValidBits = 32;
  p->kernelTimestampValidBits = 32;
  snprintf(p->name, sizeof p->name, "Fake Intel(R) Data Center GPU Max 1100 #%d", device->index);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t device, ze_device_compute_properties_t *p) {
  if (!enter("zeDeviceGetComputeProperties") || !known_device(device)) return ZE_RESULT_ERROR_UNINITIALIZED;
  p->maxTotalGroupSize = 1024;
  p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
  p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 0xffffffffu;
  p->maxSharedLocalMemory = 128 * 1024;
  p->numSubGroupSizes = 2;
  p->subGroupSizes[0] = 16;
  p->subGroupSizes[1] = 32;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t device, uint32_t *count, ze_device_memory_properties_t *p) {
  if (!enter("zeDeviceGetMemoryProperties") || !known_device(device)) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (p != NULL && *count >= 1) {
    p->flags = 0;
    p->maxClockRate = 3200;
    p->maxBusWidth = 4096;
    p->totalSize = env_number("FAKE_ZE_DEVICE_MEMORY", (uint64_t)512 << 20);
    snprintf(p->name, sizeof p->name, "HBM");
  }
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetCacheProperties(ze_device_handle_t device, uint32_t *count, ze_device_cache_properties_t *p) {
  if (!enter("zeDeviceGetCacheProperties") || !known_device(device)) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (p != NULL && *count >= 1) p->cacheSize = (size_t)108 << 20;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

/* Group 0 copies only; group 1 computes. */
ze_result_t zeDeviceGetCommandQueueGroupProperties(ze_device_handle_t device, uint32_t *count,
                                                   ze_command_queue_group_properties_t *p) {
  if (!enter("zeDeviceGetCommandQueueGroupProperties") || !known_device(device)) {
    return ZE_RESULT_ERROR_UNINITIALIZED;
  }
  if (p != NULL) {
    for (uint32_t i = 0; i < *count && i < 2; ++i) {
      p[i].flags = i == 0 ? ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY
                          : ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
      p[i].numQueues = 1;
    }
  }
  if (p == NULL || *count > 2) *count = 2;
  return ZE_RESULT_SUCCESS;
}

/* ---- contexts, command lists, events ---- */

ze_result_t zeContextCreate(ze_driver_handle_t handle, const ze_context_desc_t *desc, ze_context_handle_t *out) {
  if (!enter("zeContextCreate")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (handle != &driver || desc == NULL || desc->stype != ZE_STRUCTURE_TYPE_CONTEXT_DESC) ++violations;
  *out = calloc(1, sizeof **out);
  (*out)->live = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeContextDestroy(ze_context_handle_t context) {
  if (!enter("zeContextDestroy")) return ZE_RESULT_ERROR_UNINITIALIZED;
  free(context);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListCreateImmediate(ze_context_handle_t context, ze_device_handle_t device,
                                         const ze_command_queue_desc_t *desc, ze_command_list_handle_t *out) {
  if (!enter("zeCommandListCreateImmediate") || !known_device(device)) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (context == NULL || desc == NULL || desc->stype != ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC) ++violations;
  if (desc->ordinal != 1) return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* group 0 takes no kernels */
  *out = calloc(1, sizeof **out);
  (*out)->device = device;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListDestroy(ze_command_list_handle_t list) {
  if (!enter("zeCommandListDestroy")) return ZE_RESULT_ERROR_UNINITIALIZED;
  free(list);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeEventPoolCreate(ze_context_handle_t context, const ze_event_pool_desc_t *desc, uint32_t num_devices,
                              ze_device_handle_t *devices_of_pool, ze_event_pool_handle_t *out) {
  if (!enter("zeEventPoolCreate")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (context == NULL || desc == NULL || (desc->flags & ZE_EVENT_POOL_FLAG_HOST_VISIBLE) == 0) ++violations;
  for (uint32_t i = 0; i < num_devices; ++i) known_device(devices_of_pool[i]);
  *out = calloc(1, sizeof **out);
  (*out)->count = desc->count;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeEventPoolDestroy(ze_event_pool_handle_t pool) {
  if (!enter("zeEventPoolDestroy")) return ZE_RESULT_ERROR_UNINITIALIZED;
  free(pool);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeEventCreate(ze_event_pool_handle_t pool, const ze_event_desc_t *desc, ze_event_handle_t *out) {
  if (!enter("zeEventCreate")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (pool == NULL || desc == NULL || desc->index >= pool->count) ++violations;
  *out = calloc(1, sizeof **out);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeEventDestroy(ze_event_handle_t event) {
  if (!enter("zeEventDestroy")) return ZE_RESULT_ERROR_UNINITIALIZED;
  free(event);
  return ZE_RESULT_SUCCESS;
}

/* Commands complete at once: an event is signalled when its command is appended; one never
 * signalled is not ready (a real driver would wait forever). */
ze_result_t zeEventHostSynchronize(ze_event_handle_t event, uint64_t timeout) {
  if (!enter("zeEventHostSynchronize")) return ZE_RESULT_ERROR_UNINITIALIZED;
  (void)timeout;
  return event->signalled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t zeEventHostReset(ze_event_handle_t event) {
  if (!enter("zeEventHostReset")) return ZE_RESULT_ERROR_UNINITIALIZED;
  event->signalled = 0;
  return ZE_RESULT_SUCCESS;
}

static void signal_event(ze_event_handle_t event) {
  if (event == NULL) return;
  if (event->signalled) ++violations; /* signalled twice without a reset */
  event->signalled = 1;
}

ze_result_t zeCommandListAppendBarrier(ze_command_list_handle_t list, ze_event_handle_t signal, uint32_t num_wait,
                                       ze_event_handle_t *wait) {
  if (!enter("zeCommandListAppendBarrier")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (list == NULL || num_wait != 0 || wait != NULL) ++violations;
  signal_event(signal);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t list, void *destination, const void *source,
                                          size_t size, ze_event_handle_t signal, uint32_t num_wait,
                                          ze_event_handle_t *wait) {
  if (!enter("zeCommandListAppendMemoryCopy")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (list == NULL || num_wait != 0 || wait != NULL) ++violations;
  if (!memory_reachable(destination, size) || !memory_reachable(source, size)) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  memcpy(destination, source, size);
  signal_event(signal);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListAppendWriteGlobalTimestamp(ze_command_list_handle_t list, uint64_t *destination,
                                                    ze_event_handle_t signal, uint32_t num_wait,
                                                    ze_event_handle_t *wait) {
  if (!enter("zeCommandListAppendWriteGlobalTimestamp")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (list == NULL || num_wait != 0 || wait != NULL || !memory_reachable(destination, sizeof *destination)) {
    ++violations;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  clock_ticks += 1;
  *destination = (0xdeadull << 32) | (clock_ticks & 0xffffffffull);
  signal_event(signal);
  return ZE_RESULT_SUCCESS;
}

/* ---- memory ---- */

ze_result_t zeMemAllocDevice(ze_context_handle_t context, const ze_device_mem_alloc_desc_t *desc, size_t size,
                             size_t alignment, ze_device_handle_t device, void **out) {
  if (!enter("zeMemAllocDevice") || !known_device(device)) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (context == NULL || desc == NULL || desc->stype != ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC) ++violations;
  return allocate(size, alignment, ZE_MEMORY_TYPE_DEVICE, device, out);
}

ze_result_t zeMemAllocHost(ze_context_handle_t context, const ze_host_mem_alloc_desc_t *desc, size_t size,
                           size_t alignment, void **out) {
  if (!enter("zeMemAllocHost")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (context == NULL || desc == NULL || desc->stype != ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC) ++violations;
  return allocate(size, alignment, ZE_MEMORY_TYPE_HOST, NULL, out);
}

ze_result_t zeMemFree(ze_context_handle_t context, void *pointer) {
  if (!enter("zeMemFree")) return ZE_RESULT_ERROR_UNINITIALIZED;
  struct allocation *a = find_allocation(pointer);
  if (context == NULL || a == NULL || a->pointer != pointer) {
    ++violations;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  if (a->type == ZE_MEMORY_TYPE_DEVICE) a->device->allocated -= a->size;
  free(a->pointer);
  memset(a, 0, sizeof *a);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeMemGetAllocProperties(ze_context_handle_t context, const void *pointer,
                                    ze_memory_allocation_properties_t *properties, ze_device_handle_t *device) {
  if (!enter("zeMemGetAllocProperties")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (context == NULL) ++violations;
  const struct allocation *a = find_allocation(pointer);
  properties->type = a != NULL ? a->type : ZE_MEMORY_TYPE_UNKNOWN;
  properties->id = a != NULL ? (uint64_t)(a - allocations) + 1 : 0;
  properties->pageSize = 4096;
  if (device != NULL) *device = a != NULL ? a->device : NULL;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeMemGetAddressRange(ze_context_handle_t context, const void *pointer, void **base, size_t *size) {
  if (!enter("zeMemGetAddressRange")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (context == NULL) ++violations;
  const struct allocation *a = find_allocation(pointer);
  if (a == NULL) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (base != NULL) *base = a->pointer;
  if (size != NULL) *size = a->size;
  return ZE_RESULT_SUCCESS;
}

/* ---- modules and kernels ---- */

ze_result_t zeModuleCreate(ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t *desc,
                           ze_module_handle_t *out, ze_module_build_log_handle_t *log) {
  if (!enter("zeModuleCreate") || !known_device(device)) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (context == NULL || desc == NULL || desc->stype != ZE_STRUCTURE_TYPE_MODULE_DESC) ++violations;
  const char *failure = getenv("FAKE_ZE_BUILD_LOG");
  if (log != NULL) {
    *log = calloc(1, sizeof **log);
    (*log)->text = strdup(failure != NULL ? failure : "");
  }
  /* SPIR-V: the format, and the magic number first. */
  const uint32_t magic = 0x07230203u;
  if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV || desc->inputSize < 20 || desc->inputSize % 4 != 0 ||
      memcmp(desc->pInputModule, &magic, 4) != 0) {
    return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
  }
  if (failure != NULL) return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  *out = calloc(1, sizeof **out);
  (*out)->spirv = malloc(desc->inputSize);
  memcpy((*out)->spirv, desc->pInputModule, desc->inputSize);
  (*out)->size = desc->inputSize;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleDestroy(ze_module_handle_t module) {
  if (!enter("zeModuleDestroy")) return ZE_RESULT_ERROR_UNINITIALIZED;
  free(module->spirv);
  free(module);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t log, size_t *size, char *text) {
  if (!enter("zeModuleBuildLogGetString")) return ZE_RESULT_ERROR_UNINITIALIZED;
  const size_t needed = strlen(log->text) + 1;
  if (text == NULL) {
    *size = needed;
    return ZE_RESULT_SUCCESS;
  }
  if (*size < needed) return ZE_RESULT_ERROR_INVALID_SIZE;
  memcpy(text, log->text, needed);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t log) {
  if (!enter("zeModuleBuildLogDestroy")) return ZE_RESULT_ERROR_UNINITIALIZED;
  free(log->text);
  free(log);
  return ZE_RESULT_SUCCESS;
}

/* The kernel exists where the module has an entry point of that name (its string in the words). */
ze_result_t zeKernelCreate(ze_module_handle_t module, const ze_kernel_desc_t *desc, ze_kernel_handle_t *out) {
  if (!enter("zeKernelCreate")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (desc == NULL || desc->stype != ZE_STRUCTURE_TYPE_KERNEL_DESC || desc->pKernelName == NULL) {
    ++violations;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  const size_t n = strlen(desc->pKernelName) + 1;
  int found = 0;
  for (size_t at = 0; at + n <= module->size && !found; at += 4)
    found = memcmp(module->spirv + at, desc->pKernelName, n) == 0;
  if (!found) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
  *out = calloc(1, sizeof **out);
  (*out)->module = module;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelDestroy(ze_kernel_handle_t kernel) {
  if (!enter("zeKernelDestroy")) return ZE_RESULT_ERROR_UNINITIALIZED;
  free(kernel);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t kernel, uint32_t x, uint32_t y, uint32_t z) {
  if (!enter("zeKernelSetGroupSize")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (x == 0 || y == 0 || z == 0 || (uint64_t)x * y * z > 1024) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  kernel->group_size = x * y * z;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t kernel, uint32_t index, size_t size, const void *value) {
  if (!enter("zeKernelSetArgumentValue")) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (index >= 32 || size != sizeof(void *) || value == NULL) {
    ++violations;
    return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
  }
  const void *pointer = *(const void *const *)value;
  if (pointer != NULL && find_allocation(pointer) == NULL) ++violations; /* not device memory */
  kernel->arguments |= 1u << index;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t list, ze_kernel_handle_t kernel,
                                            const ze_group_count_t *groups, ze_event_handle_t signal, uint32_t num_wait,
                                            ze_event_handle_t *wait) {
  char call[128];
  snprintf(call, sizeof call, "zeCommandListAppendLaunchKernel(%u,%u,%u/%u:%d)", groups->groupCountX,
           groups->groupCountY, groups->groupCountZ, kernel->group_size, __builtin_popcount(kernel->arguments));
  if (!enter(call)) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (list == NULL || kernel->group_size == 0 || num_wait != 0 || wait != NULL) ++violations;
  clock_ticks += 19200;
  signal_event(signal);
  return ZE_RESULT_SUCCESS;
}
