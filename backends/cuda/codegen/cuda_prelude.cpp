#include "cuda/codegen/cuda_prelude.hpp"

#include <string>
#include <utility>

namespace yirage::codegen::cuda {
namespace {

// Header-free helpers (NVRTC and hiprtc get no include path), in pieces: the PTX ones have HIP
// versions. Integer types, NaN/infinity, loads and stores overloaded on the element type with
// PTX conversions, and the yr_* math of codegen/expr.hpp.
// Integer types, NaN and infinity, the element types, float loads and stores.
constexpr const char *kTypes = R"(typedef long long int64_t;
typedef unsigned short uint16_t;
#define NAN __int_as_float(0x7fffffff)
#define INFINITY __int_as_float(0x7f800000)
struct yr_f16 { uint16_t bits; };
struct yr_bf16 { uint16_t bits; };
static __device__ __forceinline__ float yr_ld(const float *p) { return *p; }
static __device__ __forceinline__ void yr_st(float *p, float v) { *p = v; }
)";
// Float16 loads and stores.
constexpr const char *kF16Ptx = R"(static __device__ __forceinline__ float yr_ld(const yr_f16 *p) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(p->bits));
  return f;
}
static __device__ __forceinline__ void yr_st(yr_f16 *p, float v) {
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
  p->bits = h;
}
)";
// Bfloat16 loads and stores, 16-byte raw loads.
constexpr const char *kBf16AndRaw = R"(static __device__ __forceinline__ float yr_ld(const yr_bf16 *p) {
  return __uint_as_float(static_cast<unsigned>(p->bits) << 16);
}
static __device__ __forceinline__ void yr_st(yr_bf16 *p, float v) {
#if __CUDA_ARCH__ >= 800
  uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
  p->bits = h;
#else  // no bfloat16 cvt before sm_80: round to nearest even by hand, NaN kept quiet
  const unsigned u = __float_as_uint(v);
  p->bits = (u & 0x7fffffffu) > 0x7f800000u ? static_cast<uint16_t>((u >> 16) | 0x40u)
                                             : static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
}
// 16 bytes of consecutive elements: yr_raw16 loads them in one instruction (p must be 16-byte
// aligned), yr_cvt16 converts them to floats (the pointer only picks the element type);
// yr_ld16u loads them one by one from anywhere (a caller's tensor may start anywhere).
template <typename T>
static __device__ __forceinline__ uint4 yr_raw16(const T *p) { return *reinterpret_cast<const uint4 *>(p); }
// yr_stream16 is yr_raw16 for a kernel input in global memory (read-only while the kernel runs):
// through the non-coherent path without a place in L1. After an L2 flush that leaves dirty lines
// (as timing harnesses do), weights stream faster this way than with plain loads.
)";
// 16-byte loads of kernel inputs through the non-coherent path.
constexpr const char *kStream16Ptx = R"(template <typename T>
static __device__ __forceinline__ uint4 yr_stream16(const T *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
// yr_coherent16, yr_coherent: 16 bytes, a float, through L2 only, for data that other blocks of
// the same launch wrote (a loop split's partial sums, cuda_split_pair.hpp; tiles a persistent
// kernel's earlier tasks wrote, cuda_persistent.hpp): neither the
// non-coherent path nor L1, which may hold a line read before they wrote it.
template <typename T>
static __device__ __forceinline__ uint4 yr_coherent16(const T *p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
  return v;
}
static __device__ __forceinline__ float yr_coherent(const float *p) {
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
  return v;
}
)";
// 16 bytes of floats.
constexpr const char *kCvt16Float =
    R"(static __device__ __forceinline__ void yr_cvt16(const float *, uint4 w, float *v) {
  v[0] = __uint_as_float(w.x); v[1] = __uint_as_float(w.y);
  v[2] = __uint_as_float(w.z); v[3] = __uint_as_float(w.w);
}
// A pair of float16 values as floats, x from the low half. The halves are named in PTX (mov.b32
// unpacks, free) so that each conversion reads its half in place: masking and shifting them out
// in C++ first costs two integer instructions per pair, as many as the conversions.
)";
// A float16 pair as floats.
constexpr const char *kUnpackF16x2Ptx =
    R"(static __device__ __forceinline__ void yr_unpack_f16x2(unsigned w, float &x, float &y) {
  asm("{ .reg .f16 l, h; mov.b32 {l, h}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h; }" : "=f"(x), "=f"(y) : "r"(w));
}
)";
// 16-byte conversions and packs, copies to shared memory, swizzling, wgmma, mbarriers, mma and ldmatrix (the
// NVIDIA-only parts under __CUDA_ARCH__).
constexpr const char *kCopiesAndMma =
    R"(static __device__ __forceinline__ void yr_cvt16(const yr_f16 *, uint4 w, float *v) {
  const unsigned words[4] = {w.x, w.y, w.z, w.w};
  for (int c = 0; c < 4; ++c) yr_unpack_f16x2(words[c], v[2 * c], v[2 * c + 1]);
}
static __device__ __forceinline__ void yr_cvt16(const yr_bf16 *, uint4 w, float *v) {
  const unsigned words[4] = {w.x, w.y, w.z, w.w};
  for (int c = 0; c < 4; ++c) {
    v[2 * c] = __uint_as_float(words[c] << 16);
    v[2 * c + 1] = __uint_as_float(words[c] & 0xffff0000u);
  }
}
// yr_pack16 rounds 16 bytes' worth of floats to the element type (the pointer only picks it)
// and packs them for one 16-byte store.
static __device__ __forceinline__ uint4 yr_pack16(const float *, const float *v) {
  return make_uint4(__float_as_uint(v[0]), __float_as_uint(v[1]), __float_as_uint(v[2]), __float_as_uint(v[3]));
}
template <typename T>  // yr_f16, yr_bf16: rounded by yr_st
static __device__ __forceinline__ uint4 yr_pack16(const T *, const float *v) {
  unsigned w[4];
  for (int c = 0; c < 4; ++c) {
    T lo, hi;
    yr_st(&lo, v[2 * c]);
    yr_st(&hi, v[2 * c + 1]);
    w[c] = static_cast<unsigned>(lo.bits) | (static_cast<unsigned>(hi.bits) << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}
template <typename T>
static __device__ __forceinline__ void yr_ld16u(const T *p, float *v) {
  for (int c = 0; c < static_cast<int>(16 / sizeof(T)); ++c) v[c] = yr_ld(p + c);
}
// Asynchronous 16-byte copies from global to shared memory (cp.async, sm_80+; a plain copy
// before), committed as one group per for-loop iteration; yr_cp_wait<n>() waits until at most n
// groups are pending. Where `present` is false: zeros, nothing read (a ragged tile's elements
// past the tensor's end; `src` must still be an address inside it).
static __device__ __forceinline__ void yr_cp16(void *dst, const void *src, bool present = true) {
#if __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));  // folds into the address
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(d), "l"(src), "r"(present ? 16 : 0) : "memory");
#else
  *reinterpret_cast<uint4 *>(dst) = present ? *reinterpret_cast<const uint4 *>(src) : make_uint4(0u, 0u, 0u, 0u);
#endif
}
// 4 bytes (cp.async.ca: sizes under 16 go through L1): a float tile without 16-byte groups.
static __device__ __forceinline__ void yr_cp4(void *dst, const void *src, bool present = true) {
#if __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(d), "l"(src), "r"(present ? 4 : 0) : "memory");
#else
  *reinterpret_cast<unsigned *>(dst) = present ? *reinterpret_cast<const unsigned *>(src) : 0u;
#endif
}
// `present ? value : absent` for a value already read (a ragged tile's element past the end
// read from a valid address instead): a select, never a branch around the read.
template <typename T>
static __device__ __forceinline__ T yr_select(bool present, T value, T absent) {
  return present ? value : absent;
}
static __device__ __forceinline__ void yr_cp_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
static __device__ __forceinline__ void yr_cp_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
#endif
}
// Element (r, c) of a tile of R rows whose columns are stored in blocks of 64 16-bit elements
// (128 bytes per row of a block), each block's 16-byte chunks swizzled across 8-row groups
// (chunk k of row r at k ^ (r % 8)): the layout warpgroup mma reads with 128-byte swizzling
// (offsets from a 1024-byte aligned base), free of bank conflicts for 16-byte copies.
static __device__ __forceinline__ int yr_swizzled128(int r, int c, int rows) {
  return (c >> 6) * (rows * 64) + r * 64 + ((((c >> 3) & 7) ^ (r & 7)) << 3) + (c & 7);
}
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Warpgroup mma (sm_90a). The descriptor of a 16-bit operand in shared memory laid out as
// yr_swizzled128 says, its 64-element blocks `lbo` bytes apart and its 8-row groups `sbo` bytes
// apart, starting at p (1024-byte aligned where its 8-row group starts).
static __device__ __forceinline__ unsigned long long yr_wgmma_desc(const void *p, unsigned lbo, unsigned sbo) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  return static_cast<unsigned long long>((a & 0x3FFFF) >> 4) | (static_cast<unsigned long long>(lbo >> 4) << 16) |
         (static_cast<unsigned long long>(sbo >> 4) << 32) | (1ull << 62);
}
// Orders the warpgroup's register writes before the mma that read them.
static __device__ __forceinline__ void yr_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// Ends a batch (group) of mma; waits until at most N groups are in flight.
static __device__ __forceinline__ void yr_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void yr_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}
// Makes this thread's generic-proxy writes to shared memory (cp.async, stores) visible to the
// async proxy that wgmma reads through.
static __device__ __forceinline__ void yr_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
#endif
#if __CUDA_ARCH__ >= 900
// mbarriers in shared memory (sm_90+): yr_mbar_init sets one up for `count` arrivals a phase
// (thread 0, before a barrier of the block); yr_mbar_arrive is one of them; yr_mbar_wait returns
// once the phase of parity `parity` (0 for the first, 1 for the second, ...) has ended.
static __device__ __forceinline__ void yr_mbar_init(unsigned long long *bar, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(count)
               : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
static __device__ __forceinline__ void yr_mbar_arrive(unsigned long long *bar) {
  asm volatile("mbarrier.arrive.shared.b64 _, [%0];" :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))) : "memory");
}
static __device__ __forceinline__ void yr_mbar_wait(unsigned long long *bar, unsigned parity) {
  asm volatile("{ .reg .pred done; WAIT: mbarrier.try_wait.parity.shared.b64 done, [%0], %1; @!done bra WAIT; }"
               :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(parity) : "memory");
}
#endif
template <typename T>  // yr_f16, yr_bf16: two consecutive elements as one 32-bit word
static __device__ __forceinline__ unsigned yr_pair16(const T *p) {
  return static_cast<unsigned>(p[0].bits) | (static_cast<unsigned>(p[1].bits) << 16);
}
#if __CUDA_ARCH__ >= 800
// mma.m16n8k16 on 16-bit operands (the pointer picks the type) with float accumulators: a0 / a2
// hold row lane/4's k pairs 2(lane%4) and 2(lane%4) + 8, a1 / a3 the same of row lane/4 + 8.
#define YR_MMA16(T, PTX_TYPE)                                                                            \
  static __device__ __forceinline__ void yr_mma16(const T *, float *c, unsigned a0, unsigned a1, unsigned a2,  \
                                                  unsigned a3, unsigned b0, unsigned b1) {               \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." PTX_TYPE "." PTX_TYPE ".f32 {%0, %1, %2, %3}, "   \
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"                                         \
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                        \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));                                \
  }
YR_MMA16(yr_f16, "f16")
YR_MMA16(yr_bf16, "bf16")
#undef YR_MMA16
// mma.m16n8k8 on TF32 operands, the same layout with k pairs replaced by k and k + 4.
static __device__ __forceinline__ void yr_mma_tf32(float *c, unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                                   unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
// Four 8×8 tiles of 16-bit values from shared memory (ldmatrix): lane l gives the 16-byte
// aligned address of row l % 8 of tile l / 8 and receives, of each tile, row l / 4 at columns
// 2(l % 4) and 2(l % 4) + 1, the first in the low half.
static __device__ __forceinline__ void yr_ldmatrix4(const void *row, unsigned *r) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address)
               : "memory");
}
// 16 bytes from global to shared memory where `valid`, else 16 zero bytes (cp.async with a source
// size of 0 reads nothing); `aligned` false: both sides are taken as 2-byte aligned and copied
// with plain loads and stores.
static __device__ __forceinline__ void yr_cp16_zfill(void *dst, const void *src, bool valid, bool aligned) {
  if (aligned) {
    yr_cp16(dst, src, valid);
  } else {
    unsigned short *to = reinterpret_cast<unsigned short *>(dst);
    const unsigned short *from = reinterpret_cast<const unsigned short *>(src);
#pragma unroll
    for (int e = 0; e < 8; ++e) to[e] = valid ? from[e] : 0;
  }
}
// Four 8×8 tiles of 16-bit values from shared memory, transposed (ldmatrix .trans): lane l gives
// the 16-byte aligned address of row l % 8 of tile l / 8 and receives, of each tile, column l / 4
// at rows 2(l % 4) and 2(l % 4) + 1, the first in the low half.
static __device__ __forceinline__ void yr_ldmatrix_t4(const void *row, unsigned *r) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address)
               : "memory");
}
// A pair of 16-bit values (the pointer picks the type) widened to floats' bits, the low half in
// lo: exact TF32 operands.
static __device__ __forceinline__ void yr_widen2(const yr_f16 *, unsigned w, unsigned &lo, unsigned &hi) {
  float x, y;
  yr_unpack_f16x2(w, x, y);
  lo = __float_as_uint(x);
  hi = __float_as_uint(y);
}
static __device__ __forceinline__ void yr_widen2(const yr_bf16 *, unsigned w, unsigned &lo, unsigned &hi) {
  lo = w << 16;
  hi = w & 0xffff0000u;
}
// Two floats rounded to the 16-bit type (the pointer picks it) as a pair, x in the low half.
static __device__ __forceinline__ unsigned yr_pack2(const yr_f16 *, float x, float y) {
  unsigned r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(y), "f"(x));
  return r;
}
static __device__ __forceinline__ unsigned yr_pack2(const yr_bf16 *, float x, float y) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(y), "f"(x));
  return r;
}
// The transpose of an 8×8 tile of 16-bit values held as one pair per lane (lane l: row l/4,
// columns 2(l%4) and 2(l%4) + 1), in the same layout.
static __device__ __forceinline__ unsigned yr_transpose8x8(unsigned x) {
  unsigned y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}
#endif
#if __CUDA_ARCH__ >= 800
// A float rounded to TensorFloat-32 (10 mantissa bits) for mma: exact for float16/bfloat16 data.
static __device__ __forceinline__ unsigned yr_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
#endif
// Adds x and y to the two floats at p (8-byte aligned).
static __device__ __forceinline__ void yr_add2(float *p, float x, float y) {
  float2 s = *reinterpret_cast<float2 *>(p);
  s.x += x;
  s.y += y;
  *reinterpret_cast<float2 *>(p) = s;
}
static __device__ __forceinline__ float yr_exp(float x) { return expf(x); }
// 2^x on the special-function unit (relative error about 2^-22; results below 2^-126 are 0).
)";
// 2^x.
constexpr const char *kExp2Ptx = R"(static __device__ __forceinline__ float yr_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
)";
// The yr_* math.
constexpr const char *kMath = R"(static __device__ __forceinline__ float yr_erf(float x) { return erff(x); }
static __device__ __forceinline__ float yr_sqrt(float x) { return sqrtf(x); }
static __device__ __forceinline__ float yr_rsqrt(float x) { return rsqrtf(x); }
static __device__ __forceinline__ float yr_log(float x) { return logf(x); }
static __device__ __forceinline__ float yr_pow(float a, float b) { return powf(a, b); }
static __device__ __forceinline__ float yr_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
static __device__ __forceinline__ float yr_max(float a, float b) {
  return (a != a || b != b) ? NAN : (a > b ? a : b);
}
static __device__ __forceinline__ float yr_clamp(float x, float lo, float hi) {
  return x != x ? x : fminf(fmaxf(x, lo), hi);
}
)";

// The HIP versions of the PTX pieces above (hiprtc's clang: _Float16 conversions, plain loads,
// exp2f). Under NVRTC (the HIP source run on NVIDIA, docs/backends/hip.md) the PTX ones serve.
constexpr const char *kF16Hip = R"(static __device__ __forceinline__ float yr_ld(const yr_f16 *p) {
  return static_cast<float>(__builtin_bit_cast(_Float16, p->bits));
}
static __device__ __forceinline__ void yr_st(yr_f16 *p, float v) {
  p->bits = __builtin_bit_cast(uint16_t, static_cast<_Float16>(v));
}
)";
constexpr const char *kStream16Hip = R"(template <typename T>
static __device__ __forceinline__ uint4 yr_stream16(const T *p) { return *reinterpret_cast<const uint4 *>(p); }
)";
constexpr const char *kUnpackF16x2Hip =
    R"(static __device__ __forceinline__ void yr_unpack_f16x2(unsigned w, float &x, float &y) {
  x = static_cast<float>(__builtin_bit_cast(_Float16, static_cast<uint16_t>(w & 0xffffu)));
  y = static_cast<float>(__builtin_bit_cast(_Float16, static_cast<uint16_t>(w >> 16)));
}
)";
constexpr const char *kExp2Hip = R"(static __device__ __forceinline__ float yr_exp2(float x) { return exp2f(x); }
)";

// What a HIP source starts with: the wavefront size it was generated for, checked against the
// compiler's; NVIDIA's features off (YR_CUDA_ARCH 0 where the CUDA prelude tests __CUDA_ARCH__,
// also under NVRTC, so that the HIP source runs the same code on NVIDIA); CUDA's warp functions as
// the generated code uses them, over 32 lanes also on 64-lane wavefronts (the lanes of a
// wavefront's halves are two warps of the generated code).
constexpr const char *kHipHead = R"(#define YR_CUDA_ARCH 0
#define YR_CUDA_ARCH_SM90A 0
#if defined(__HIP__)
#if YR_WAVEFRONT != __AMDGCN_WAVEFRONT_SIZE
#error "generated for another wavefront size"
#endif
#define __shfl_xor_sync(mask, v, lane) __shfl_xor((v), (lane), 32)
#define __any_sync(mask, p) yr_any32(p)
static __device__ __forceinline__ bool yr_any32(bool p) {
#if __AMDGCN_WAVEFRONT_SIZE == 64
  return ((__ballot(p) >> (__lane_id() & 32)) & 0xffffffffull) != 0;
#else
  return __any(p);
#endif
}
#elif YR_WAVEFRONT != 32
#error "only HIP sources for 32-lane wavefronts run on NVIDIA"
#endif
)";

// `hip` where hiprtc compiles the source, `ptx` under NVRTC.
std::string hip_or_ptx(const char *hip, const char *ptx) {
  return std::string("#if defined(__HIP__)\n") + hip + "#else\n" + ptx + "#endif\n";
}

// The CUDA prelude's NVIDIA-only sections, switched off in a HIP source.
std::string without_nvidia_features(std::string text) {
  for (const auto &[from, to] :
       {std::pair<std::string, std::string>{"defined(__CUDA_ARCH_FEAT_SM90_ALL)", "YR_CUDA_ARCH_SM90A"},
        {"__CUDA_ARCH__", "YR_CUDA_ARCH"}}) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

}  // namespace

std::string prelude(CudaDialect dialect, int wavefront) {
  if (dialect == CudaDialect::kCuda) {
    return std::string("// Generated by yirage's CUDA backend. Do not edit.\n") + kTypes + kF16Ptx + kBf16AndRaw +
           kStream16Ptx + kCvt16Float + kUnpackF16x2Ptx + kCopiesAndMma + kExp2Ptx + kMath;
  }
  return "// Generated by yirage's HIP backend. Do not edit.\n#define YR_WAVEFRONT " + std::to_string(wavefront) +
         "\n" + kHipHead + without_nvidia_features(kTypes) + hip_or_ptx(kF16Hip, kF16Ptx) +
         without_nvidia_features(kBf16AndRaw) + hip_or_ptx(kStream16Hip, kStream16Ptx) +
         without_nvidia_features(kCvt16Float) + hip_or_ptx(kUnpackF16x2Hip, kUnpackF16x2Ptx) +
         without_nvidia_features(kCopiesAndMma) + hip_or_ptx(kExp2Hip, kExp2Ptx) + without_nvidia_features(kMath);
}

}  // namespace yirage::codegen::cuda
