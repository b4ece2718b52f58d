/*
 * yirage.h — the public C ABI of yirage, a multi-level superoptimizer for tensor programs.
 *
 * Copyright 2026 the yirage developers. Licensed under the Apache License, Version 2.0.
 *
 * Conventions (docs/c-api.md says more):
 *  - C99, every name prefixed `yirage_` / `YIRAGE_`. Opaque handles are pointers to incomplete
 *    structs. Dimensions are int64_t, counts size_t, strings UTF-8.
 *  - Every fallible function returns yirage_status (YIRAGE_OK == 0). On failure, out-parameters
 *    (named out_*, always last) are left untouched, the objects passed in are left unchanged,
 *    and yirage_last_error_message() describes the failure. No C++ exception crosses this ABI.
 *  - Handles are checked before use: NULL, released and never-created handles are refused with
 *    YIRAGE_ERROR_INVALID_ARGUMENT instead of crashing (a released handle whose address has been
 *    reused by a new object of the same kind cannot be told apart from that object).
 *  - Release functions accept NULL and return void.
 *  - Thread safety is stated per function with one of these tags:
 *      [any thread]     no shared state, or read-only access to its arguments;
 *      [reads X]        only reads X: may run concurrently with other readers of X;
 *      [modifies X]     changes X: no other thread may use X meanwhile (distinct objects are
 *                       independent);
 *      [thread-local]   per calling thread.
 *  - Tensors cross the ABI as DLPack DLTensor (borrowed: yirage never keeps the pointer after
 *    the call returns).
 */
#ifndef YIRAGE_H_
#define YIRAGE_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define YIRAGE_API __attribute__((visibility("default")))
#define YIRAGE_MUST_USE __attribute__((warn_unused_result))
#else
#define YIRAGE_API
#define YIRAGE_MUST_USE
#endif

/* ---------------------------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------------------------- */

/* The ABI version this header describes. The major version is the shared library's soname
 * (libyirage.so.1); it changes only when a change breaks existing callers. The minor version
 * grows when functions, enum values or option-struct fields are appended. */
#define YIRAGE_ABI_VERSION_MAJOR 1
#define YIRAGE_ABI_VERSION_MINOR 11
#define YIRAGE_ABI_VERSION ((YIRAGE_ABI_VERSION_MAJOR << 16) | YIRAGE_ABI_VERSION_MINOR)

/* The ABI version of the loaded library, encoded as (major << 16) | minor. A caller that
 * dlopen()s the library should check that the major equals YIRAGE_ABI_VERSION_MAJOR and the
 * minor is at least the one it was compiled against. Thread-safe. */
/* Thread safety: [any thread]. */
YIRAGE_API uint32_t yirage_abi_version(void);

/* The library's release version, e.g. "0.1.0". Static storage. Thread-safe. */
/* Thread safety: [any thread]. */
YIRAGE_API const char *yirage_version(void);

/* ---------------------------------------------------------------------------------------------
 * Status and errors
 * ------------------------------------------------------------------------------------------- */

/* Values are stable and never renumbered; new ones are appended. */
typedef enum yirage_status {
  YIRAGE_OK = 0,
  YIRAGE_ERROR_INVALID_ARGUMENT = 1, /* a bad handle, shape, dtype, option or NULL pointer */
  YIRAGE_ERROR_UNSUPPORTED = 2,      /* valid, but not implemented for this case or target */
  YIRAGE_ERROR_NOT_FOUND = 3,        /* a named thing (file, backend, device) does not exist */
  YIRAGE_ERROR_OUT_OF_MEMORY = 4,    /* host or device allocation failed */
  YIRAGE_ERROR_BACKEND = 5,          /* a backend or driver call failed; message has details */
  YIRAGE_ERROR_VERSION_MISMATCH = 6, /* incompatible library, plugin or file version */
  YIRAGE_ERROR_CORRUPT_DATA = 7,     /* a file or buffer failed verification */
  YIRAGE_ERROR_CANCELLED = 8,        /* the caller's cancellation flag was set */
  YIRAGE_ERROR_TIMEOUT = 9,          /* a time budget ran out */
  YIRAGE_ERROR_INTERNAL = 10,        /* a bug in yirage; please report it with the message */
  /* Not a status: makes the enum 32 bits wide so any value a caller passes is representable. */
  YIRAGE_STATUS_MAX_ENUM = 0x7fffffff
} yirage_status;

/* The enumerator's name without prefix, e.g. "INVALID_ARGUMENT"; "UNKNOWN_STATUS" for values
 * this library does not know. Static storage. Thread-safe. */
/* Thread safety: [any thread]. */
YIRAGE_API const char *yirage_status_name(yirage_status status);

/* The message of the most recent failed yirage call on the calling thread ("" if none has
 * failed). Successful calls do not clear it. The string is owned by yirage and stays valid until
 * the next failing yirage call on the same thread. Thread-safe (thread-local). */
/* Thread safety: [thread-local]. */
YIRAGE_API const char *yirage_last_error_message(void);

/* ---------------------------------------------------------------------------------------------
 * Data types
 * ------------------------------------------------------------------------------------------- */

/* Element types of tensors. Values are stable and never renumbered. Arithmetic inside kernels
 * accumulates in float32; the reference executor computes in float64. */
typedef enum yirage_dtype {
  YIRAGE_FLOAT16 = 1,  /* IEEE 754 binary16; DLPack {kDLFloat, 16, 1} */
  YIRAGE_BFLOAT16 = 2, /* bfloat16; DLPack {kDLBfloat, 16, 1} */
  YIRAGE_FLOAT32 = 3,  /* IEEE 754 binary32; DLPack {kDLFloat, 32, 1} */
  /* Not a dtype: makes the enum 32 bits wide so any value a caller passes is representable. */
  YIRAGE_DTYPE_MAX_ENUM = 0x7fffffff
} yirage_dtype;

/* "float16", "bfloat16", "float32"; "unknown" otherwise. Static storage. Thread-safe. */
/* Thread safety: [any thread]. */
YIRAGE_API const char *yirage_dtype_name(yirage_dtype dtype);

/* Size in bytes of one element; 0 for an unknown dtype. Thread-safe. */
/* Thread safety: [any thread]. */
YIRAGE_API size_t yirage_dtype_size(yirage_dtype dtype);

/* The largest tensor rank a graph accepts. */
#define YIRAGE_MAX_RANK 6

/* DLPack device types that DLPack 0.6's header lacks (values from DLPack 1.x). */
#define YIRAGE_DLPACK_DEVICE_ONEAPI 14

/* ---------------------------------------------------------------------------------------------
 * Kernel graphs
 *
 * A kernel graph is a DAG of tensor operators with static shapes. Tensors are created by the
 * graph's builder functions and owned by the graph: a yirage_tensor handle is valid until its
 * graph is released. Builders take the graph first and return the new tensor last; on failure
 * the graph is unchanged. Inputs are numbered in creation order, outputs in the order they are
 * marked. Elementwise binary operators need equal ranks and broadcast size-1 dimensions.
 * A dimension argument `dim` may be negative, counting from the end (-1 is the last dim).
 *
 * ------------------------------------------------------------------------------------------- */

typedef struct yirage_graph_s yirage_graph;
typedef struct yirage_tensor_s yirage_tensor;

/* Creates an empty graph. The caller owns *out_graph and releases it with yirage_graph_release. */
/* Thread safety: [any thread]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_create(yirage_graph **out_graph);

/* Releases a graph and every tensor handle it owns. NULL is accepted and ignored; so is a
 * handle that is not live (it is then left alone). */
/* Thread safety: [modifies graph] (destroys it and its tensors). */
YIRAGE_API void yirage_graph_release(yirage_graph *graph);

/* A new graph input of the given shape (row-major, every dim >= 1, 1 <= ndim <= YIRAGE_MAX_RANK)
 * and dtype. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_new_input(yirage_graph *graph, size_t ndim, const int64_t *dims,
                                                                yirage_dtype dtype, yirage_tensor **out_tensor);

/* Batched matrix product A[..., m, k] · B[..., k, n] -> [..., m, n]. A and B have equal rank
 * >= 2 and equal dtype; batch dims must be equal or 1 (size-1 batch dims broadcast). */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_matmul(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b,
                                                             yirage_tensor **out_tensor);

/* Elementwise unary operators; the result has x's shape and dtype.
 *   exp(x); silu(x) = x·sigmoid(x); gelu(x) = x/2·(1 + erf(x/√2)) (the exact form, not tanh);
 *   relu(x) = max(x, 0); sqrt(x); square(x) = x²; sigmoid(x) = 1/(1 + e^-x); log(x) natural;
 *   neg(x) = -x. Out-of-domain values follow IEEE (sqrt(-1) is NaN, log(0) is -inf). */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_exp(yirage_graph *graph, yirage_tensor *x,
                                                          yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_silu(yirage_graph *graph, yirage_tensor *x,
                                                           yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_gelu(yirage_graph *graph, yirage_tensor *x,
                                                           yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_relu(yirage_graph *graph, yirage_tensor *x,
                                                           yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_sqrt(yirage_graph *graph, yirage_tensor *x,
                                                           yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_square(yirage_graph *graph, yirage_tensor *x,
                                                             yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_sigmoid(yirage_graph *graph, yirage_tensor *x,
                                                              yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_log(yirage_graph *graph, yirage_tensor *x,
                                                          yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_neg(yirage_graph *graph, yirage_tensor *x,
                                                          yirage_tensor **out_tensor);

/* clamp(x) = min(max(x, lo), hi); lo <= hi, both finite or infinite, not NaN. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_clamp(yirage_graph *graph, yirage_tensor *x, double lo, double hi,
                                                            yirage_tensor **out_tensor);

/* x · scalar; scalar must be finite. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_mul_scalar(yirage_graph *graph, yirage_tensor *x, double scalar,
                                                                 yirage_tensor **out_tensor);

/* Elementwise binary operators: equal rank and dtype, each dim equal or 1 in one operand (it
 * broadcasts); the result has the broadcast shape. div is a / b; pow is a^b (IEEE pow);
 * max is the larger of a and b. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_add(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b,
                                                          yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_sub(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b,
                                                          yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_mul(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b,
                                                          yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_div(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b,
                                                          yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_pow(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b,
                                                          yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_max(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b,
                                                          yirage_tensor **out_tensor);

/* Sum (reduction) or maximum (reduction_max) over dimension `dim`; the rank is kept and that
 * dimension becomes 1. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_reduction(yirage_graph *graph, yirage_tensor *x, int32_t dim,
                                                                yirage_tensor **out_tensor);
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_reduction_max(yirage_graph *graph, yirage_tensor *x, int32_t dim,
                                                                    yirage_tensor **out_tensor);

/* RMS normalization over the trailing dims named by normalized_shape (which must equal x's last
 * n_normalized dims): y = x / sqrt(mean(x²) + eps), times `weight` elementwise when weight is
 * not NULL (weight's shape must equal normalized_shape, its dtype x's). eps >= 0 and finite. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_rms_norm(yirage_graph *graph, yirage_tensor *x,
                                                               size_t n_normalized, const int64_t *normalized_shape,
                                                               double eps, yirage_tensor *weight,
                                                               yirage_tensor **out_tensor);

/* softmax over `dim`. A convenience: the graph records it as reduction_max, sub, exp, reduction
 * and div, so *out_tensor is the result of that div. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_softmax(yirage_graph *graph, yirage_tensor *x, int32_t dim,
                                                              yirage_tensor **out_tensor);

/* Concatenation of a and b along `dim`; all other dims and the dtype must be equal. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_concat(yirage_graph *graph, yirage_tensor *a, yirage_tensor *b,
                                                             int32_t dim, yirage_tensor **out_tensor);

/* Splits x along `dim` into n_parts consecutive pieces of the given sizes (each >= 1, summing to
 * x's size along dim). out_parts must have room for n_parts handles (n_parts >= 1). */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_split(yirage_graph *graph, yirage_tensor *x, int32_t dim,
                                                            size_t n_parts, const int64_t *sizes,
                                                            yirage_tensor **out_parts);

/* Splits x along `dim` into n_chunks equal pieces; x's size along dim must be divisible by
 * n_chunks. out_parts must have room for n_chunks handles. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_chunk(yirage_graph *graph, yirage_tensor *x, size_t n_chunks,
                                                            int32_t dim, yirage_tensor **out_parts);

/* ABI 1.9: views. Kernel tensors are compact row-major, so a view is computed as a compact
 * tensor (a copy kernel on the backends today).
 * reshape: x's elements in row-major order under the ndim dims (1 <= ndim <= 6); one entry may
 * be -1 and is inferred; the element count must not change. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_reshape(yirage_graph *graph, yirage_tensor *x, size_t ndim,
                                                              const int64_t *dims, yirage_tensor **out_tensor);

/* ABI 1.9: permute: output dim i is x's dim dims[i]; dims (ndim = x's rank entries, each may be
 * negative) must be a permutation of x's dims. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_permute(yirage_graph *graph, yirage_tensor *x, size_t ndim,
                                                              const int64_t *dims, yirage_tensor **out_tensor);

/* ABI 1.9: transpose: the permute that swaps dim0 and dim1 (each may be negative). */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_transpose(yirage_graph *graph, yirage_tensor *x, int32_t dim0,
                                                                int32_t dim1, yirage_tensor **out_tensor);

/* Marks a computed tensor (not a graph input) as the graph's next output. A tensor can be
 * marked once. */
/* Thread safety: [modifies graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_mark_output(yirage_graph *graph, yirage_tensor *x);

/* ---------------------------------------------------------------------------------------------
 * Thread-block graphs (µGraphs) and customized operators
 *
 * A block graph describes one fused kernel, as in Mirage's new_threadblock_graph / customized
 * (docs/ugraphs.md has the full semantics). It runs on a grid of grid[0]·grid[1]·grid[2] blocks
 * (axes x, y, z), each with block_threads threads, for forloop_range iterations:
 *  - an input iterator gives each block, in each iteration, a tile of a kernel-graph tensor:
 *    imap[axis] names the tensor dim split across that axis's blocks (-1: every block gets the
 *    whole dim; axes with one block must be -1), fmap the dim split across iterations (-1: the
 *    same tile every iteration); a dim cut into p parts gets tiles of extent / p, or where p does
 *    not divide it of ceil(extent / p) rounded up to whole 16 or 8 elements while the last part
 *    keeps some, the last ones ragged (docs/ugraphs.md, "Edge tiles"; no part may be empty);
 *  - the compute builders below work on tiles, like their kernel-graph namesakes;
 *  - accumulators combine a per-iteration tile over all iterations into an after-loop tile;
 *  - an output saver writes a tile per block to a new kernel-graph tensor: omap[axis] names the
 *    output dim the blocks of that axis are laid side by side along (every axis with more than
 *    one block must map to its own dim, so tiles never overlap).
 * A tile is invariant (from fmap -1 inputs), per-iteration, or after-loop; one operator cannot
 * combine per-iteration and after-loop tiles.
 *
 * Tile tensors are yirage_tensor handles owned by the block graph. yirage_graph_customized copies
 * the block graph into the kernel graph, so the block graph may be released or reused after.
 * ------------------------------------------------------------------------------------------- */

typedef struct yirage_block_graph_s yirage_block_graph;

/* Options of yirage_block_graph_create. Fill with yirage_block_graph_options_init, then change
 * fields; struct_size lets later versions append fields without breaking this caller. */
typedef struct yirage_block_graph_options {
  size_t struct_size;            /* sizeof(yirage_block_graph_options) */
  int64_t grid[3];               /* blocks along x, y, z; each >= 1 (default 1, 1, 1) */
  int64_t block_threads;         /* threads per block, >= 1 (default 128) */
  int64_t forloop_range;         /* iterations, >= 1 (default 1) */
  int64_t shared_memory_limit;   /* bytes a block's tiles may use; 0 = unchecked (default) */
  int64_t max_threads_per_block; /* checked against block_threads; 0 = unchecked (default) */
} yirage_block_graph_options;

/* Sets *options to the defaults, with struct_size = sizeof(yirage_block_graph_options). */
/* Thread safety: [any thread]. */
YIRAGE_API void yirage_block_graph_options_init(yirage_block_graph_options *options);

/* Creates an empty block graph. options->struct_size must be at least the size of this ABI
 * version's first release of the struct; fields past the library's own struct are ignored.
 * The caller owns *out_block_graph and releases it with yirage_block_graph_release. */
/* Thread safety: [any thread]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_create(const yirage_block_graph_options *options,
                                                                   yirage_block_graph **out_block_graph);

/* Releases a block graph and its tile handles. NULL and dead handles are ignored. */
/* Thread safety: [modifies block_graph] (destroys it and its tiles). */
YIRAGE_API void yirage_block_graph_release(yirage_block_graph *block_graph);

/* An input iterator over `dtensor`, a tensor of a kernel graph (every input of one block graph
 * must come from the same kernel graph). imap has 3 entries. */
/* Thread safety: [modifies block_graph; reads dtensor's graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_new_input(yirage_block_graph *block_graph,
                                                                      const yirage_tensor *dtensor, const int32_t *imap,
                                                                      int32_t fmap, yirage_tensor **out_tensor);

/* Compute operators on tiles, with the semantics of the yirage_graph_ builders of the same name. */
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_matmul(yirage_block_graph *bg, yirage_tensor *a,
                                                                   yirage_tensor *b, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_exp(yirage_block_graph *bg, yirage_tensor *x,
                                                                yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_silu(yirage_block_graph *bg, yirage_tensor *x,
                                                                 yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_gelu(yirage_block_graph *bg, yirage_tensor *x,
                                                                 yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_relu(yirage_block_graph *bg, yirage_tensor *x,
                                                                 yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_sqrt(yirage_block_graph *bg, yirage_tensor *x,
                                                                 yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_square(yirage_block_graph *bg, yirage_tensor *x,
                                                                   yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_sigmoid(yirage_block_graph *bg, yirage_tensor *x,
                                                                    yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_log(yirage_block_graph *bg, yirage_tensor *x,
                                                                yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_neg(yirage_block_graph *bg, yirage_tensor *x,
                                                                yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_clamp(yirage_block_graph *bg, yirage_tensor *x, double lo,
                                                                  double hi, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_mul_scalar(yirage_block_graph *bg, yirage_tensor *x,
                                                                       double scalar, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_add(yirage_block_graph *bg, yirage_tensor *a,
                                                                yirage_tensor *b, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_sub(yirage_block_graph *bg, yirage_tensor *a,
                                                                yirage_tensor *b, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_mul(yirage_block_graph *bg, yirage_tensor *a,
                                                                yirage_tensor *b, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_div(yirage_block_graph *bg, yirage_tensor *a,
                                                                yirage_tensor *b, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_pow(yirage_block_graph *bg, yirage_tensor *a,
                                                                yirage_tensor *b, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_max(yirage_block_graph *bg, yirage_tensor *a,
                                                                yirage_tensor *b, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_reduction(yirage_block_graph *bg, yirage_tensor *x,
                                                                      int32_t dim, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_reduction_max(yirage_block_graph *bg, yirage_tensor *x,
                                                                          int32_t dim, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_rms_norm(yirage_block_graph *bg, yirage_tensor *x,
                                                                     size_t n_normalized,
                                                                     const int64_t *normalized_shape, double eps,
                                                                     yirage_tensor *weight, yirage_tensor **out_tensor);
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_concat(yirage_block_graph *bg, yirage_tensor *a,
                                                                   yirage_tensor *b, int32_t dim,
                                                                   yirage_tensor **out_tensor);

/* For-loop accumulators. Values are stable and never renumbered. With F iterations and n the
 * tile's last dim: */
typedef enum yirage_accumulator {
  YIRAGE_ACCUM_SUM = 1,         /* Σ_i x_i; shape of x */
  YIRAGE_ACCUM_REDUCE_SUM = 2,  /* Σ_i Σ_last x_i; last dim becomes 1 */
  YIRAGE_ACCUM_REDUCE_MEAN = 3, /* that sum / (F·n) */
  YIRAGE_ACCUM_REDUCE_RMS = 4,  /* sqrt(Σ_i Σ_last x_i² / (F·n)) */
  YIRAGE_ACCUM_MAX = 5,         /* elementwise max_i x_i */
  YIRAGE_ACCUMULATOR_MAX_ENUM = 0x7fffffff
} yirage_accumulator;

/* An after-loop tile accumulating per-iteration (or invariant) tile x. */
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_accumulate(yirage_block_graph *bg, yirage_tensor *x,
                                                                       yirage_accumulator kind,
                                                                       yirage_tensor **out_tensor);

/* ABI 1.8: Mirage's forloop_accum(x, "sum_todimx"): Σ_i x_i with its last dim n folded to dimx
 * by adding the n / dimx slices of dimx, out[..., j] = Σ_i Σ_k x_i[..., k·dimx + j]; last dim
 * becomes dimx, which must divide n. */
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_accumulate_to_dimx(yirage_block_graph *bg, yirage_tensor *x,
                                                                               int64_t dimx,
                                                                               yirage_tensor **out_tensor);

/* The online-softmax accumulator: Σ_i x_i · exp(m_i − M) with M = max_i m_i (elementwise; m
 * broadcasts to x). With m a running row max, Σ exp(s − m)·v and Σ exp(s − m) accumulated this
 * way give softmax(s)·v after one division. */
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_accumulate_rescale(yirage_block_graph *bg, yirage_tensor *x,
                                                                               yirage_tensor *m,
                                                                               yirage_tensor **out_tensor);

/* An output saver writing tile s to the customized operator's next output. omap has 3 entries.
 * forloop_dim: for a per-iteration tile, the output dim the iterations' tiles are laid along
 * (-1 allowed only when forloop_range is 1); -1 for other tiles. */
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_new_output(yirage_block_graph *bg, yirage_tensor *s,
                                                                       const int32_t *omap, int32_t forloop_dim);

/* As yirage_block_graph_new_output, the tile written as `dtype` rather than its own dtype; the
 * customized operator's outputs take it, so every saver of a block graph must write the same.
 * For partial sums of a 16-bit graph that a later kernel adds up: float32 holds their range, and
 * the precision owed stays that of the 16-bit tiles (docs/ugraphs.md, "Outputs"). */
/* Thread safety: [modifies bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_new_output_as(yirage_block_graph *bg, yirage_tensor *s,
                                                                          const int32_t *omap, int32_t forloop_dim,
                                                                          yirage_dtype dtype);

/* Thread safety: [reads bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_num_outputs(const yirage_block_graph *bg,
                                                                        size_t *out_count);

/* The estimate checked against shared_memory_limit: every tile's elements times its dtype size
 * (after-loop tiles at 4 bytes), without reuse. */
/* Thread safety: [reads bg]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_block_graph_shared_memory_bytes(const yirage_block_graph *bg,
                                                                                int64_t *out_bytes);

/* Adds a customized operator running `block_graph` to `graph`: its inputs are the tensors the
 * block graph's input iterators read (which must belong to `graph`), its outputs one tensor per
 * output saver, stored in out_outputs (room for yirage_block_graph_num_outputs handles). */
/* Thread safety: [modifies graph; reads block_graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_customized(yirage_graph *graph,
                                                                 const yirage_block_graph *block_graph,
                                                                 yirage_tensor **out_outputs);

/* ---------------------------------------------------------------------------------------------
 * Queries.
 * ------------------------------------------------------------------------------------------- */

/* Thread safety: [reads the tensor's graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_tensor_get_ndim(const yirage_tensor *tensor, size_t *out_ndim);

/* Copies the tensor's dims into out_dims, which has room for `capacity` values; capacity must be
 * at least the tensor's rank. */
/* Thread safety: [reads the tensor's graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_tensor_get_dims(const yirage_tensor *tensor, size_t capacity,
                                                                int64_t *out_dims);

/* Thread safety: [reads the tensor's graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_tensor_get_dtype(const yirage_tensor *tensor, yirage_dtype *out_dtype);

/* The graph that owns the tensor (not a new reference). */
/* Thread safety: [reads the tensor's graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_tensor_get_graph(const yirage_tensor *tensor, yirage_graph **out_graph);

/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_num_inputs(const yirage_graph *graph, size_t *out_count);
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_num_outputs(const yirage_graph *graph, size_t *out_count);
/* The number of operators, graph inputs included (softmax counts as the five it records). */
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_num_operators(const yirage_graph *graph, size_t *out_count);

/* The index-th input / output tensor; the handle is owned by the graph. */
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_get_input(const yirage_graph *graph, size_t index,
                                                                yirage_tensor **out_tensor);
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_get_output(const yirage_graph *graph, size_t index,
                                                                 yirage_tensor **out_tensor);

/* ---------------------------------------------------------------------------------------------
 * Graph files (docs/file-formats.md)
 *
 * Kernel graphs, customized operators and their µGraphs included, as a binary flatbuffers file
 * (schemas/yirage_graph.fbs, file identifier "YRGF", extension .yrg) or its JSON form, which a
 * person can read and write. Writing is deterministic (the same graph gives the same bytes).
 * Loading never trusts its input: the flatbuffers verifier runs, then every operator is rebuilt
 * through the same validating builders as the functions above; a truncated, damaged or
 * semantically invalid file gives YIRAGE_ERROR_CORRUPT_DATA with a message, a file of a newer
 * schema YIRAGE_ERROR_VERSION_MISMATCH. Thread-safe for graphs not being modified.
 * ------------------------------------------------------------------------------------------- */

typedef enum yirage_graph_format {
  YIRAGE_GRAPH_FORMAT_BINARY = 1, /* flatbuffers */
  YIRAGE_GRAPH_FORMAT_JSON = 2,   /* the same content as JSON text */
  YIRAGE_GRAPH_FORMAT_MAX_ENUM = 0x7fffffff
} yirage_graph_format;

/* An immutable byte buffer owned by yirage. */
typedef struct yirage_blob_s yirage_blob;

/* The blob's bytes (valid until it is released) and their count; NULL / 0 for a dead handle. */
/* Thread safety: [reads blob]. */
YIRAGE_API const void *yirage_blob_data(const yirage_blob *blob);
/* Thread safety: [reads blob]. */
YIRAGE_API size_t yirage_blob_size(const yirage_blob *blob);
/* NULL and dead handles are ignored. */
/* Thread safety: [modifies blob] (destroys it). */
YIRAGE_API void yirage_blob_release(yirage_blob *blob);

/* Serializes a graph; the caller owns *out_blob. */
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_serialize(const yirage_graph *graph, yirage_graph_format format,
                                                                yirage_blob **out_blob);

/* A new graph from bytes in either format (detected: binary by its identifier, JSON by a leading
 * '{'). The caller owns *out_graph. */
/* Thread safety: [any thread]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_deserialize(const void *data, size_t size,
                                                                  yirage_graph **out_graph);

/* Writes the graph to `path`: JSON when the path ends in ".json", binary otherwise. The file is
 * written under a temporary name and renamed, so it is never seen half-written. A missing
 * folder gives YIRAGE_ERROR_NOT_FOUND. */
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_save(const yirage_graph *graph, const char *path);

/* Reads a graph file in either format. A missing file gives YIRAGE_ERROR_NOT_FOUND. */
/* Thread safety: [any thread]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_load(const char *path, yirage_graph **out_graph);

/* ---------------------------------------------------------------------------------------------
 * Equivalence by fingerprints (docs/verification.md)
 *
 * Both graphs are evaluated exactly, in modular arithmetic, on the same random inputs; they are
 * declared equivalent when every output agrees in every trial. Different graphs agree in one
 * trial with a probability bounded in docs/verification.md. Thread-safe for graphs not being
 * modified.
 * ------------------------------------------------------------------------------------------- */

typedef struct yirage_equivalence_options {
  size_t struct_size; /* sizeof(yirage_equivalence_options) */
  uint32_t trials;    /* independent trials, >= 1 (default 3) */
  uint64_t seed;      /* everything random derives from it (default 1) */
  uint32_t threads;   /* threads for customized operators' blocks; 0 = all cores (default) */
} yirage_equivalence_options;

/* Sets *options to the defaults, with struct_size = sizeof(yirage_equivalence_options). */
/* Thread safety: [any thread]. */
YIRAGE_API void yirage_equivalence_options_init(yirage_equivalence_options *options);

typedef struct yirage_equivalence_result {
  size_t struct_size; /* set by the caller: sizeof(yirage_equivalence_result) */
  int32_t equivalent; /* 1: every output agreed in every trial; 0: they differ */
  uint32_t trials;    /* trials run (a difference stops the check early) */
  double seconds;     /* wall time of the check */
  char reason[256];   /* why not equivalent (NUL-terminated, may be truncated); "" if equivalent */
} yirage_equivalence_result;

/* Compares graphs a and b, which must have the same inputs (count, dims, dtypes, order); other
 * inputs give YIRAGE_ERROR_INVALID_ARGUMENT. Different output counts or shapes are a result
 * (not equivalent, with the reason), not an error. A graph that cannot be fingerprinted (the exp
 * of a value that itself depends on exp) gives YIRAGE_ERROR_UNSUPPORTED. options may be NULL
 * for the defaults. out_result->struct_size must be set by the caller. */
/* Thread safety: [reads a and b]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_equivalent(const yirage_graph *a, const yirage_graph *b,
                                                                 const yirage_equivalence_options *options,
                                                                 yirage_equivalence_result *out_result);

/* ---------------------------------------------------------------------------------------------
 * Targets and cost estimates (docs/targets.md)
 *
 * What yirage knows about a device: the properties the search and the cost model use. Built-in
 * descriptions: "cpu" (this host, detected), "h100", "h200", "a100", "mi300x". Thread-safe.
 * ------------------------------------------------------------------------------------------- */

typedef enum yirage_target_kind {
  YIRAGE_TARGET_CPU = 1,
  YIRAGE_TARGET_GPU = 2,
  YIRAGE_TARGET_KIND_MAX_ENUM = 0x7fffffff
} yirage_target_kind;

typedef struct yirage_target_properties {
  size_t struct_size; /* set by the caller: sizeof(yirage_target_properties) */
  char name[64];      /* NUL-terminated */
  yirage_target_kind kind;
  int64_t compute_units;
  int64_t max_threads_per_block;
  int64_t max_blocks_per_compute_unit;
  int64_t threads_per_compute_unit;
  int64_t shared_memory_per_block; /* bytes */
  int64_t shared_memory_per_compute_unit;
  int64_t warp_width;
  int64_t memory_bytes;
  double memory_bandwidth; /* bytes/s */
  int64_t l2_bytes;
  double l2_bandwidth;
  double peak_flops_float16; /* matrix-unit FLOP/s; 0 = dtype unsupported */
  double peak_flops_bfloat16;
  double peak_flops_float32;
  double vector_flops_float32;
  int64_t matrix_unit[3]; /* m, n, k; zeros if none */
  double launch_overhead_seconds;
  /* ABI 1.2: the serial time of one for-loop iteration of a customized kernel's block (tile-load
   * latency, barriers) with the backend's generated code; 0 = not modeled. Read and written only
   * when struct_size covers it. */
  double loop_iteration_seconds;
} yirage_target_properties;

/* Fills *out_properties (whose struct_size the caller sets) with a built-in target's
 * properties. An unknown name gives YIRAGE_ERROR_NOT_FOUND, listing the known ones. */
/* Thread safety: [any thread]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_target_builtin(const char *name,
                                                               yirage_target_properties *out_properties);

/* The analytic cost estimate of running `graph` on a target (docs/targets.md): a ranking
 * heuristic, not a measurement. A customized operator that cannot run there (over its shared
 * memory or thread limit) gives YIRAGE_ERROR_UNSUPPORTED with the reason. The properties are
 * validated first (YIRAGE_ERROR_INVALID_ARGUMENT naming the property). */
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_estimate_cost(const yirage_graph *graph,
                                                                    const yirage_target_properties *target,
                                                                    double *out_seconds);

/* ABI 1.1: a human-readable listing of the graph, one line per operator, with the thread-block
 * graphs of customized operators indented under them (the format is for people and may change
 * between releases; use yirage_graph_serialize for machines). The blob holds the text and a
 * terminating NUL (counted by yirage_blob_size). The caller owns *out_text. */
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_describe(const yirage_graph *graph, yirage_blob **out_text);

/* ABI 1.6: a Graphviz (DOT) picture of the graph: kernel operators and tensors (shape, dtype),
 * and each customized operator as a cluster drawing its thread-block graph (grid, for-loop,
 * input iterators with imap and fmap, output savers with omap, accumulators, block operators
 * with their tile shapes). Render it with Graphviz (`dot -Tsvg`). The text depends only on the
 * graph, but its layout may change between releases. The blob holds the text and a terminating
 * NUL (counted by yirage_blob_size). The caller owns *out_text. */
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_to_dot(const yirage_graph *graph, yirage_blob **out_text);

/* ---------------------------------------------------------------------------------------------
 * Backends, devices and compiled kernels (ARCHITECTURE.md §6, docs/backends.md)
 *
 * A context holds the backend plugins (libyirage-backend-<name>.so) it loaded: from explicit
 * paths, from the folders in $YIRAGE_BACKEND_PATH (colon-separated) and from the install's plugin
 * folder. A plugin whose driver or hardware is missing loads and reports zero devices with a
 * reason. Devices belong to their context: a yirage_device pointer stays valid until the context
 * is released. A kernel is a graph compiled for one device; it keeps its context alive
 * internally, so releasing the context first is allowed.
 * ------------------------------------------------------------------------------------------- */

typedef struct yirage_context_s yirage_context;
typedef struct yirage_device_s yirage_device;
typedef struct yirage_kernel_s yirage_kernel;

typedef struct yirage_context_options {
  size_t struct_size;              /* sizeof(yirage_context_options) */
  const char *const *plugin_paths; /* files to load first; any failure is an error */
  size_t num_plugin_paths;
  int32_t search_default_paths; /* 1 (default): also $YIRAGE_BACKEND_PATH and the install folder */
  const char *cache_dir;        /* compiled-kernel cache root for plugins; NULL: their default */
} yirage_context_options;

/* Thread safety: [any thread]. */
YIRAGE_API void yirage_context_options_init(yirage_context_options *options);

/* Loads plugins (options NULL: the defaults). A plugin found by scanning a folder that fails to
 * load (not a plugin, incompatible ABI version) is skipped and described by
 * yirage_context_load_errors; an explicit path that fails gives its status (NOT_FOUND,
 * BACKEND, VERSION_MISMATCH). The caller owns *out_context. */
/* Thread safety: [any thread]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_context_create(const yirage_context_options *options,
                                                               yirage_context **out_context);

/* Thread safety: [modifies context]. NULL and dead handles are ignored. Kernels compiled from
 * it stay usable; its devices do not. */
YIRAGE_API void yirage_context_release(yirage_context *context);

/* Plugins skipped while scanning, one line each ("" if none); owned by the context. */
/* Thread safety: [reads context]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_context_load_errors(const yirage_context *context,
                                                                    const char **out_text);

/* Thread safety: [reads context]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_context_num_backends(const yirage_context *context, size_t *out_count);

typedef struct yirage_backend_info {
  size_t struct_size; /* set by the caller: sizeof(yirage_backend_info) */
  char name[64];      /* e.g. "cpu" */
  char version[32];
  char path[512]; /* the plugin file */
  int32_t num_devices;
  char unavailable_reason[256]; /* why there are no devices; "" when there are */
} yirage_backend_info;

/* Thread safety: [reads context]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_context_backend_info(const yirage_context *context, size_t index,
                                                                     yirage_backend_info *out_info);

/* Device `index` of the backend named `backend`: NOT_FOUND for an unknown backend or index
 * (the message lists what exists, or why the backend has no devices). */
/* Thread safety: [reads context]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_context_get_device(const yirage_context *context, const char *backend,
                                                                   int32_t index, const yirage_device **out_device);

typedef struct yirage_device_info {
  size_t struct_size; /* set by the caller: sizeof(yirage_device_info) */
  char backend[64];
  int32_t index;
  char name[128];
  yirage_target_properties target; /* what the search uses for this device */
  uint32_t dtypes;                 /* bit (1 << yirage_dtype) per supported dtype */
  int32_t dlpack_device_type;      /* where its tensors live (kDLCPU, kDLCUDA, …) */
  int32_t dlpack_device_id;
} yirage_device_info;

/* Thread safety: [reads device]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_device_get_info(const yirage_device *device,
                                                                yirage_device_info *out_info);

typedef struct yirage_compile_options {
  size_t struct_size;         /* sizeof(yirage_compile_options) */
  int32_t optimization_level; /* 0..3 (default 3), passed to the backend's compiler */
} yirage_compile_options;

/* Thread safety: [any thread]. */
YIRAGE_API void yirage_compile_options_init(yirage_compile_options *options);

/* Compiles every operator of `graph` (a superoptimized candidate or a plain kernel graph) for
 * `device` (options NULL: defaults); plans intermediate buffers once. A backend that cannot
 * compile an operator gives UNSUPPORTED or BACKEND with its message (for a build failure, the
 * build log). The kernel keeps a copy of the graph. The caller owns *out_kernel. */
/* Thread safety: [reads graph, device]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_compile(const yirage_graph *graph, const yirage_device *device,
                                                        const yirage_compile_options *options,
                                                        yirage_kernel **out_kernel);

/* Thread safety: [modifies kernel]. NULL and dead handles are ignored. */
YIRAGE_API void yirage_kernel_release(yirage_kernel *kernel);

/* Runs the kernel on the caller's tensors, without copies: inputs[i] is the graph's i-th input,
 * outputs[j] receives its j-th output. Each tensor must be on the kernel's device (the
 * device_type/device_id of yirage_device_info), have the graph tensor's shape and dtype, compact
 * row-major strides (or NULL strides) and a non-NULL data pointer; anything else is refused
 * before any work is queued. `stream` is the backend's native stream (NULL: its default; the CPU
 * backend runs synchronously and takes NULL only). Work may still be running on return on
 * asynchronous devices: see yirage_kernel_synchronize. An output that shares memory with an
 * input or with another output is refused (INVALID_ARGUMENT): runs are not in place.
 * A kernel of several device kernels passes its intermediate tensors in buffers of its own: one
 * set per stream it runs on, the default stream's allocated by yirage_compile, another stream's
 * at the first run on it (OUT_OF_MEMORY then queues nothing), all freed with the kernel. Runs on
 * one stream share their set in the stream's order; if you destroy a stream while this kernel's
 * work on it still runs, synchronize first, since a new stream may get the same handle. */
/* Thread safety: [reads kernel]; concurrent runs must use distinct outputs. Runs of a kernel of
 * several device kernels on one stream take turns queueing them (on the CPU backend: running
 * them); on different streams they do not wait for each other. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_kernel_run(const yirage_kernel *kernel, const DLTensor *const *inputs,
                                                           size_t n_inputs, DLTensor *const *outputs, size_t n_outputs,
                                                           void *stream);

/* ABI 1.11. How a run of the kernel launches, as text (a blob, NUL-terminated): a line per device
 * launch with the graph's operators it runs ("operators 4 (customized), 5 (customized) as one
 * program": a backend that took them as one, e.g. CUDA's persistent kernel or the CPU's parallel
 * region), operators that need no launch, and whether runs on one stream and set of buffers are
 * replayed as a recording (a CUDA graph) from their second run. The caller owns *out_text. */
/* Thread safety: [reads kernel]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_kernel_describe(const yirage_kernel *kernel, yirage_blob **out_text);

/* Waits until the kernel's work queued on `stream` has finished. */
/* Thread safety: [reads kernel]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_kernel_synchronize(const yirage_kernel *kernel, void *stream);

/* ABI 1.6. Runs the kernel on host tensors (kDLCPU; shapes, dtypes, strides and overlaps checked
 * as yirage_kernel_run checks them) whatever its device: the inputs are copied into memory of
 * the device, the kernel runs on the backend's default stream and the outputs are copied back
 * into the caller's tensors before it returns. For a caller with no device runtime of its own (a
 * C program, Java, Rust, numpy); on a CPU device it is yirage_kernel_run then synchronize. Each
 * call allocates and frees its device memory: to keep tensors on the device between runs, use
 * yirage_buffer. */
/* Thread safety: [reads kernel]; concurrent runs must use distinct outputs. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_kernel_run_host(const yirage_kernel *kernel,
                                                                const DLTensor *const *inputs, size_t n_inputs,
                                                                DLTensor *const *outputs, size_t n_outputs);

typedef struct yirage_measure_options {
  size_t struct_size; /* sizeof(yirage_measure_options) */
  uint64_t seed;      /* random inputs in [-1, 1] derive from it (default 1); where the reference
                       * overflows its dtype on them, the range is halved, up to 6 times */
  uint32_t warmup;    /* untimed runs first (default 2) */
  uint32_t repeats;   /* timed runs, >= 1 (default 10) */
  /* ABI 1.3: before each timed run, on the same stream and outside the timed span, a kernel
   * writes this many bytes on the device (rounded up to 4 KiB, at most 2^40) and reads almost
   * nothing, leaving the device's caches full of its dirty lines. With the device's L2 size
   * (yirage_device_info.target.l2_bytes) every run starts with cold caches, as a layer's weights
   * usually are, and the timed span holds the device's time alone, not the host's launch
   * latency (the start event waits behind the flush). 0 (default): none. Read only when
   * struct_size covers it. */
  uint64_t flush_bytes;
} yirage_measure_options;

/* Thread safety: [any thread]. */
YIRAGE_API void yirage_measure_options_init(yirage_measure_options *options);

typedef struct yirage_measurement {
  size_t struct_size;    /* set by the caller: sizeof(yirage_measurement) */
  int32_t correct;       /* 1: every output within the dtype's tolerance of the reference */
  double relative_error; /* the worst output's ‖got − want‖ / ‖want‖; -1 if not compared */
  double median_seconds; /* device time per run; -1 when not correct */
  double min_seconds;
  /* Why it is not correct ("" when it is); where the reference graph itself overflows its
   * dtype on the inputs (e.g. a float16 sum of exps), it also names the tensor and its size. */
  char error[512];
} yirage_measurement;

/* Checks and times the kernel on the device against `reference` (a graph with the same inputs
 * and outputs; NULL: the kernel's own graph) evaluated by the reference executor in float64:
 * seeded random inputs, outputs poisoned before the checked run, per-dtype relative-norm
 * tolerances (float32 1e-4, float16 5e-3, bfloat16 4e-2; where an output misses it, twice the
 * error that storing the reference's tensors in their dtypes alone gives, up to 0.1:
 * docs/backends.md), then warmup and timed repeats with the backend's timers. A wrong or failing kernel is not an
 * error: the call returns YIRAGE_OK with correct = 0 and the reason. */
/* Thread safety: [reads kernel, reference]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_kernel_measure(const yirage_kernel *kernel,
                                                               const yirage_graph *reference,
                                                               const yirage_measure_options *options,
                                                               yirage_measurement *out_measurement);

/* ---------------------------------------------------------------------------------------------
 * Device buffers (ABI 1.6)
 *
 * Memory on a device, allocated through the device's plugin, for callers with no device runtime
 * of their own: allocate, copy host bytes in and out, and view it as a DLPack tensor to pass to
 * yirage_kernel_run (or to any DLPack consumer: PyTorch, CuPy, JAX). A buffer keeps its context's
 * plugins loaded; it is freed when the handle and every DLPack tensor made from it are released.
 * ------------------------------------------------------------------------------------------- */

typedef struct yirage_buffer_s yirage_buffer;

/* `bytes` (0 allowed) of uninitialized memory on `device`. OUT_OF_MEMORY when the device has
 * not enough. The caller owns *out_buffer. */
/* Thread safety: [reads device]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_buffer_alloc(const yirage_device *device, size_t bytes,
                                                             yirage_buffer **out_buffer);

/* Thread safety: [modifies buffer]. NULL and dead handles are ignored. DLPack tensors made from
 * it stay valid until their own deleters run. */
YIRAGE_API void yirage_buffer_release(yirage_buffer *buffer);

/* Thread safety: [reads buffer]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_buffer_size(const yirage_buffer *buffer, size_t *out_bytes);

/* Copies `bytes` host bytes into the buffer at `offset` (write) or out of it (read); returns
 * when the copy is done. A range past the buffer's end is INVALID_ARGUMENT. Kernels still
 * running on the buffer are not waited for: call yirage_kernel_synchronize first. */
/* Thread safety: [modifies buffer] (write), [reads buffer] (read). */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_buffer_write(yirage_buffer *buffer, size_t offset, const void *source,
                                                             size_t bytes);
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_buffer_read(const yirage_buffer *buffer, size_t offset,
                                                            void *destination, size_t bytes);

/* The buffer's first bytes as a compact row-major DLPack tensor of `shape` (ndim 0..YIRAGE_MAX_RANK, every
 * extent >= 0) and `dtype`, on the buffer's device (yirage_device_info's dlpack_device_type and
 * id); INVALID_ARGUMENT when it does not fit, UNSUPPORTED when the backend's plugin cannot say
 * where its buffers are (plugin ABI < 1.2). The tensor holds the buffer's memory: call its
 * deleter when done. The caller owns *out_tensor. */
/* Thread safety: [reads buffer]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_buffer_to_dlpack(const yirage_buffer *buffer, const int64_t *shape,
                                                                 int32_t ndim, yirage_dtype dtype,
                                                                 DLManagedTensor **out_tensor);

/* ---------------------------------------------------------------------------------------------
 * The superoptimizer (docs/search.md)
 *
 * Searches for kernel graphs equivalent to a graph of pre-defined operators that fuse its work
 * into a customized operator (a thread-block graph), for a target's properties. Every candidate
 * returned was verified by fingerprints against the input graph (verify_trials trials) and they
 * come cheapest first by the cost model. Results can be cached on disk.
 * ------------------------------------------------------------------------------------------- */

typedef struct yirage_search_progress {
  size_t struct_size; /* sizeof(yirage_search_progress) of the library */
  int64_t states;     /* partial graphs explored so far */
  int64_t candidates; /* complete candidates found so far (before verification) */
  double seconds;     /* since the search started */
} yirage_search_progress;

/* Called from search threads, one call at a time; it must not call into the same search. */
typedef void (*yirage_search_progress_fn)(const yirage_search_progress *progress, void *user_data);

typedef struct yirage_search_options {
  size_t struct_size; /* sizeof(yirage_search_options) */
  /* The target device; NULL: the built-in "cpu" (this host). Copied by the call. */
  const yirage_target_properties *target;
  double time_budget_seconds;     /* > 0 (default 60): enumeration stops at 80%, verification at 100% */
  uint32_t threads;               /* 0: all cores (default) */
  uint64_t seed;                  /* fingerprint inputs derive from it (default 1) */
  uint32_t max_kernel_ops;        /* kernel operators per candidate, 1..8 (default 2) */
  uint32_t max_block_ops;         /* operators per thread-block graph, 1..16 (default 8) */
  uint32_t max_grid_axes;         /* grid axes with more than one block, 0..3 (default 2) */
  uint32_t max_customized_inputs; /* tensors a customized operator reads, 1..16 (default 4) */
  /* Block counts per grid axis and for-loop ranges to try (each >= 2); NULL / 0: derived from
   * the target. The arrays are copied by the call. */
  const int64_t *grid_candidates;
  size_t num_grid_candidates;
  const int64_t *forloop_candidates;
  size_t num_forloop_candidates;
  /* Only this grid (all three > 0), like Mirage's grid override; zeros: free (default). */
  int64_t fixed_grid[3];
  int64_t fixed_forloop;              /* only this for-loop range (1: no loop); 0: free (default) */
  uint32_t max_candidates;            /* verified candidates returned, >= 1 (default 4; at least
                                       * 1.5 x profile_top_k where profiling) */
  uint32_t verify_trials;             /* fingerprint trials per candidate, 1..16 (default 2) */
  uint32_t z3_rlimit;                 /* Z3 resource limit per query (default 10000); 0: no Z3 */
  int32_t abstract_pruning;           /* 1: prune with abstract expressions (default); 0: do not */
  yirage_search_progress_fn progress; /* NULL: none */
  void *progress_user_data;
  /* Polled during the search; set *cancel to nonzero (from any thread, with an atomic store)
   * to stop it. NULL: not cancellable. */
  const int32_t *cancel;
  /* A folder for cached results (created if missing); NULL: no cache. */
  const char *cache_dir;
  /* ABI 1.1: profiling. With a device, the search targets its properties (unless `target` is
   * set), keeps only candidates the device's backend says it can build (since ABI 1.4; see
   * yirage_search_stats.unbuildable), then compiles the `profile_top_k` cheapest verified candidates on it, checks each
   * against the reference executor and times it (yirage_kernel_measure); a wrong or failing
   * candidate is dropped and its place goes to the cheapest candidate not yet profiled, and
   * the fastest correct one comes first. The input graph is measured
   * too (estimate -1): when no candidate beats it, it comes first, so a profiled search never
   * returns something slower than its input. Every profiled graph is listed by
   * yirage_search_result_profiled. NULL (default): no profiling. */
  const yirage_device *device;
  uint32_t profile_top_k;   /* >= 1 (default 4) */
  uint32_t profile_repeats; /* timed runs per candidate, >= 1 (default 10) */
  /* ABI 1.5: with cache_dir and a device, a profiled answer is cached too (keyed by the
   * plugin's file, version and the device, and profile_top_k), and a later identical request is
   * answered from it at once: no search and nothing measured (yirage_search_stats.from_cache
   * 1, yirage_search_result_profiled empty). 1: measure a cached answer again (and store the new
   * one); 0 (default): answer from it. */
  int32_t remeasure;
} yirage_search_options;

/* Sets *options to the defaults, with struct_size = sizeof(yirage_search_options). */
/* Thread safety: [any thread]. */
YIRAGE_API void yirage_search_options_init(yirage_search_options *options);

/* The outcome of a search: verified candidates and statistics. */
typedef struct yirage_search_result_s yirage_search_result;

/* Searches. On YIRAGE_SUCCESS the search ran to completion. YIRAGE_ERROR_TIMEOUT (the budget
 * ran out) and YIRAGE_ERROR_CANCELLED (the flag was set) also set *out_result, holding what was
 * verified before the search stopped (possibly nothing); every other error leaves *out_result
 * untouched. Bad options give YIRAGE_ERROR_INVALID_ARGUMENT naming the option; a graph holding
 * customized operators gives YIRAGE_ERROR_UNSUPPORTED. The caller owns *out_result. */
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_superoptimize(const yirage_graph *graph,
                                                              const yirage_search_options *options,
                                                              yirage_search_result **out_result);

/* Thread safety: [modifies result] (destroys it). NULL and dead handles are ignored. */
YIRAGE_API void yirage_search_result_release(yirage_search_result *result);

/* The number of verified candidates. */
/* Thread safety: [reads result]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_result_num_candidates(const yirage_search_result *result,
                                                                             size_t *out_count);

typedef struct yirage_search_candidate_info {
  size_t struct_size;       /* set by the caller: sizeof(yirage_search_candidate_info) */
  double estimated_seconds; /* the cost model's estimate on the search's target */
  uint32_t verified_trials; /* fingerprint trials it passed */
  char description[256];    /* e.g. "customized grid 2x16x1 loop 16 (9 block operators)" */
  double measured_seconds;  /* ABI 1.1: median time on the profiling device; -1 if not profiled */
  /* ABI 1.7, written only when struct_size covers them: the spread of the timed runs behind
   * measured_seconds (a machine busy while they ran widens it; -1 and 0 where not profiled, or
   * not recorded by the yirage that cached the answer), and why there is no measurement ("" when
   * there is one), e.g. "not among the 4 cheapest estimates profiled". */
  double measured_min_seconds;
  double measured_max_seconds;
  uint32_t measured_samples;
  char not_measured[128];
} yirage_search_candidate_info;

/* Candidate `index` (0 = cheapest): a new graph handle the caller owns (out_graph may be NULL)
 * and its description (out_info may be NULL; its struct_size set by the caller). */
/* Thread safety: [reads result]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_result_candidate(const yirage_search_result *result,
                                                                        size_t index, yirage_graph **out_graph,
                                                                        yirage_search_candidate_info *out_info);

typedef struct yirage_search_stats {
  size_t struct_size;           /* set by the caller: sizeof(yirage_search_stats) */
  int64_t states;               /* partial graphs built */
  int64_t pruned_shape;         /* a builder refused: shapes, tiles, loop phases, shared memory */
  int64_t pruned_abstract;      /* a term that does not occur in the input graph's terms */
  int64_t pruned_canonical;     /* out of canonical order, or recomputing an existing term */
  int64_t pruned_dead;          /* complete, but with a result nothing uses */
  int64_t plans;                /* grid/loop class assignments searched */
  int64_t structures;           /* complete thread-block graph structures */
  int64_t candidates;           /* complete candidates (structures at each size) that built */
  int64_t infeasible;           /* candidates the cost model ruled out for the target */
  int64_t oracle_queries;       /* subexpression questions, memoised answers included */
  int64_t oracle_index_answers; /* answered by the subterm index */
  int64_t z3_queries;           /* answered by Z3 */
  int64_t z3_proved;            /* of which Z3 proved the term occurs */
  int64_t z3_unknown;           /* of which Z3 hit its resource limit */
  double z3_seconds;
  int64_t fingerprint_checks;
  int64_t fingerprint_rejected;
  double fingerprint_seconds;
  double first_fused_seconds; /* first verified single-kernel candidate; -1 if none */
  double seconds;             /* wall time of the whole call */
  int32_t from_cache;         /* 1: answered from the cache */
  /* ABI 1.4: candidates that passed their fingerprints but that the profiling device's backend
   * cannot build (its supports() refused them, e.g. tiles that need more shared memory than the
   * device has); they take no place among the candidates. 0 without a profiling device. Written
   * only when struct_size covers it. */
  int64_t unbuildable;
} yirage_search_stats;

/* Thread safety: [reads result]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_result_stats(const yirage_search_result *result,
                                                                    yirage_search_stats *out_stats);

/* ABI 1.1: one record per profiled candidate, in the order they were profiled (cheapest
 * estimate first). */
typedef struct yirage_search_profile_record {
  size_t struct_size; /* set by the caller: sizeof(yirage_search_profile_record) */
  char description[256];
  double estimated_seconds;
  double measured_seconds; /* median; -1 when dropped */
  double relative_error;   /* against the reference executor; -1 if never compared */
  int32_t kept;            /* 1: correct, among the candidates; 0: dropped */
  char error[512];         /* why it was dropped ("" when kept) */
  /* ABI 1.7, written only when struct_size covers them: the spread of the timed runs (-1 and 0
   * when dropped). A machine busy while they ran widens it. */
  double min_seconds;
  double max_seconds;
  uint32_t samples;
} yirage_search_profile_record;

/* Thread safety: [reads result]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_result_num_profiled(const yirage_search_result *result,
                                                                           size_t *out_count);
/* Thread safety: [reads result]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_result_profiled(const yirage_search_result *result, size_t index,
                                                                       yirage_search_profile_record *out_record);

/* ---------------------------------------------------------------------------------------------
 * ABI 1.10: searches in shards (docs/distributed.md)
 *
 * The search's enumeration split into work units that any process can run: a plan lists them,
 * each process runs some and returns their partial result as bytes (a search cache file with
 * units), and the plan that gathers the partials merges them into exactly the answer that
 * yirage_superoptimize gives in one process with the same options (merge_options' profiling
 * included). Planning is deterministic: processes that plan the same graph with the same target,
 * options and min_units get the same units, and a partial result of another plan is refused.
 * libyirage itself uses no distributed engine: yirage-mpi hands units out over MPI; Ray or Dask
 * users do it from Python.
 * ------------------------------------------------------------------------------------------- */

typedef struct yirage_search_plan_s yirage_search_plan;

/* Plans a sharded search of `graph` with `options` (as yirage_superoptimize takes them; the
 * target is the options' or their device's), splitting the work into at least `min_units` (>= 1)
 * units where the search has that many (a small search may have fewer; its smallest subtrees are
 * searched while planning). The plan copies the graph and options; the progress callback, its
 * user data and the cancel flag must outlive it. The budget counts from each call that runs: a
 * plan made after the budget ran out gives YIRAGE_ERROR_TIMEOUT. A graph that
 * yirage_superoptimize searches in segments gives YIRAGE_ERROR_UNSUPPORTED. The caller owns
 * *out_plan. */
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_plan_create(const yirage_graph *graph,
                                                                   const yirage_search_options *options,
                                                                   uint32_t min_units, yirage_search_plan **out_plan);

/* Thread safety: [modifies plan] (destroys it). NULL and dead handles are ignored. */
YIRAGE_API void yirage_search_plan_release(yirage_search_plan *plan);

/* The number of work units (0 where planning searched everything). */
/* Thread safety: [reads plan]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_plan_num_units(const yirage_search_plan *plan,
                                                                      size_t *out_count);

/* A name of the plan: 32 hexadecimal digits of a hash of its request (the graph, the target,
 * the options that change the units, min_units, the yirage version), and a NUL. Equal plans have
 * equal ids; use it to name checkpoint files. */
/* Thread safety: [reads plan]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_plan_id(const yirage_search_plan *plan, char out_id[33]);

/* Runs units `units[0..n_units)` (indices below yirage_search_plan_num_units; repeats run once)
 * on the plan's threads and returns their partial result (*out_partial, owned by the caller):
 * YIRAGE_SUCCESS when every unit ran to its end. When the budget (counted from this call) runs
 * out or the cancel flag is set, YIRAGE_ERROR_TIMEOUT or YIRAGE_ERROR_CANCELLED, and the partial
 * holds the units that finished. An index out of range gives YIRAGE_ERROR_INVALID_ARGUMENT and
 * runs nothing. The progress callback reports states and structures found by this call. */
/* Thread safety: [reads plan]; several threads may run units of one plan at once. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_plan_run_units(const yirage_search_plan *plan,
                                                                      const uint32_t *units, size_t n_units,
                                                                      yirage_blob **out_partial);

/* Adds a partial result's units to the plan (a unit it already has counts once) and sets
 * *out_new_units (may be NULL) to how many were new. Nothing in the bytes is trusted: malformed
 * bytes give YIRAGE_ERROR_CORRUPT_DATA, a partial result of another plan
 * YIRAGE_ERROR_INVALID_ARGUMENT; either way the plan is unchanged. */
/* Thread safety: [modifies plan]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_plan_add_partial(yirage_search_plan *plan, const void *data,
                                                                        size_t size, size_t *out_new_units);

/* Whether unit `unit`'s result has been added (*out_done 1) or not (0). */
/* Thread safety: [reads plan]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_plan_unit_done(const yirage_search_plan *plan, size_t unit,
                                                                      int32_t *out_done);

/* The answer of the units added so far, as yirage_superoptimize gives it with `options`:
 * every structure is built at every size and verified by fingerprints against the graph, and
 * with a device the cheapest are profiled; the budget counts from this call. `options` must plan
 * the same units as the plan's (YIRAGE_ERROR_INVALID_ARGUMENT otherwise); its device, profiling
 * and verification options may differ. Units not added make the result incomplete: the call
 * gives YIRAGE_ERROR_TIMEOUT and sets *out_result, as a search stopped by its budget does. The
 * caller owns *out_result. */
/* Thread safety: [reads plan]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_search_plan_merge(const yirage_search_plan *plan,
                                                                  const yirage_search_options *options,
                                                                  yirage_search_result **out_result);

/* ---------------------------------------------------------------------------------------------
 * The reference executor: the semantic oracle. Evaluates the graph in float64 on host memory.
 *
 * inputs[i] is the graph's i-th input, outputs[j] receives its j-th output; counts must match
 * the graph. Every tensor must be in host memory (kDLCPU, kDLCUDAHost or kDLROCMHost), have the
 * graph tensor's shape and dtype (lanes 1), and a non-NULL data pointer. Strides (in elements,
 * NULL meaning compact row-major) may be arbitrary for inputs, including 0 and negative; output
 * strides must not make two elements overlap. byte_offset is honoured. float16 and bfloat16
 * values are converted exactly on the way in and rounded to nearest even on the way out.
 * Outputs are written only after every check has passed and the whole graph has been evaluated,
 * so inputs and outputs may alias and a failed call writes nothing.
 *
 * ------------------------------------------------------------------------------------------- */
/* Thread safety: [reads graph]. */
YIRAGE_API YIRAGE_MUST_USE yirage_status yirage_graph_run_reference(const yirage_graph *graph,
                                                                    const DLTensor *const *inputs, size_t n_inputs,
                                                                    DLTensor *const *outputs, size_t n_outputs);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* YIRAGE_H_ */
