#!/usr/bin/env python3
"""Hand-made variants of yirage's split-attention chunk kernel (gqa at b = 8: 16 x 2 blocks of
128 rows, the keys split over 4, 8 iterations of 128 keys, 256 threads) for
attention_variants.cu (CHUNK_THREADS=384 for the variants with a producer warpgroup). Not part
of the build; benchmarks/gpu/RESULTS.md (twenty-third session) has the numbers.

  attention_roles.py split CHUNK.cu OUT       a producer warpgroup (threads 256-383) copies K
                                              and V and announces each stage on an mbarrier
                                              once it landed; the 8 computing warps give each
                                              stage back on another; no __syncthreads in the
                                              loop. Also OUT_nocopy.cu (the producers skip the
                                              copies: compute alone, on stale stages) and
                                              OUT_nocomp.cu (no computation: copies alone).
  attention_roles.py strip CHUNK.cu PART OUT  one part of the iteration removed: exp (E = A, no
                                              MUFU), pack (no 16-bit packing), pv (no E.V
                                              mma), qk (no Q.K mma), copy (no cp.async).
  attention_roles.py turns CHUNK.cu OUT [all] the two computing warpgroups issue their Q.K in
                                              turn (named barriers 2 and 3); with `all`, a
                                              warpgroup lets the other go only after its E.V.

`split` takes the chunk kernel as the generator wrote it before the warp-specialized loop
(f32117f: `codegen::cuda_source` of the split µGraph for an H100, the plugin's cache source);
`strip` and `turns` take one the generator writes with it (d6497cc and later). Every source
needs its typedef, NAN and INFINITY lines removed and <cstdint> included (done here).
"""
import sys


def clean(lines):
    out = ['#include <cstdint>', '#include <cmath>']
    for line in lines:
        if line.startswith('typedef') or line.startswith('#define NAN') or line.startswith('#define INFINITY'):
            continue
        out.append(line)
    return out


def find(src, prefix, start=0):
    return next(i for i in range(start, len(src)) if src[i].startswith(prefix))


PRODUCER = r'''
  unsigned long long *full = reinterpret_cast<unsigned long long *>(reinterpret_cast<char *>(smem) + 164864), *empty = full + 4;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 4; ++s) { xs_init(full + s, 128); xs_init(empty + s, 256); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x >= 256) {
    const int pt = threadIdx.x - 256;
    for (int it = 0; it < 8; ++it) {
      const int s = it & 3;
      if (it >= 4) xs_wait(empty + s, ((it >> 2) - 1) & 1);
      {
        const auto *src = in1 + (bx * 262144 + bz * 1024 + it * 128);
        auto *stage = reinterpret_cast<yr_f16 *>(smem + 8448 + s * 4096);
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int t_e = pt + u * 128, t1 = t_e / 16 % 64, t2 = t_e % 16;
          COPY(stage + yr_swizzled128(t1, t2 * 8, 64), src + (t1 * 4096 + t2 * 8));
        }
      }
      {
        const auto *src = in2 + (bx * 262144 + bz * 65536 + it * 8192);
        auto *stage = reinterpret_cast<yr_f16 *>(smem + 24832 + s * 4096);
        #pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int t_e = pt + u * 128, t1 = t_e / 8 % 128, t2 = t_e % 8;
          COPY(stage + yr_swizzled128(t1, t2 * 8, 128), src + (t1 * 64 + t2 * 8));
        }
      }
      yr_cp_commit();
      if (it > 0) { yr_cp_wait<1>(); yr_fence_proxy_async(); xs_arrive(full + ((it - 1) & 3)); }
    }
    yr_cp_wait<0>();
    yr_fence_proxy_async();
    xs_arrive(full + 3);
    return;
  }'''

HELPERS = r'''
static __device__ __forceinline__ unsigned xs_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
static __device__ __forceinline__ void xs_init(unsigned long long *b, unsigned n) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(xs_addr(b)), "r"(n) : "memory");
}
static __device__ __forceinline__ void xs_wait(unsigned long long *b, unsigned parity) {
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], %1; @!p bra W; }" :: "r"(xs_addr(b)), "r"(parity) : "memory");
}
static __device__ __forceinline__ void xs_arrive(unsigned long long *b) {
  asm volatile("mbarrier.arrive.shared.b64 _, [%0];" :: "r"(xs_addr(b)) : "memory");
}'''


def split(path, out):
    src = open(path).read().split('\n')
    kernel = find(src, 'extern "C" __global__')
    prelude = clean(src[:kernel])
    setup_end = find(src, '  const auto *src0 = ', kernel)        # pointers, alignment flags
    first_stage = find(src, '  if (0 < ', kernel)                  # the pipeline's first copies
    invariant = find(src, '   {', first_stage)                     # Q's tile from its registers
    barrier = find(src, '  __syncthreads();', invariant)
    loop = find(src, '  for (int it = 0;', barrier)
    compute = find(src, '    if (att_warp < 8) {', loop)
    refill = find(src, '    if (it + 3 < 8)', compute)
    epilogue = find(src, '  auto *const att_ev_out', refill)
    for name, copy, body in ((out, 'yr_cp16', True), (out + '_nocopy', '(void)', True), (out + '_nocomp', 'yr_cp16', False)):
        k = [src[kernel].replace('__launch_bounds__(256)', '__launch_bounds__(384, 1)')]
        k += src[kernel + 1:setup_end]
        k.append(PRODUCER.replace('COPY', copy))
        # Q, by the 256 computing threads, their own barrier instead of the block's.
        k += src[setup_end:first_stage]
        k += src[invariant:barrier]
        k.append('  asm volatile("bar.sync 1, 256;" ::: "memory");')
        k += src[barrier + 1:loop]
        k.append('  for (int it = 0; it < 8; ++it) {')
        k.append('    xs_wait(full + (it & 3), (it >> 2) & 1);')
        if body:
            k += [line.replace('(static_cast<int>(it) % 4)', '(it & 3)') for line in src[compute:refill]]
        k.append('    xs_arrive(empty + (it & 3));')
        k.append('  }')
        k += src[epilogue:]
        open(name + '.cu', 'w').write('\n'.join(prelude + [HELPERS] + k))


STRIP = {
    'exp': lambda s: s.replace('] = yr_exp2(fmaf(', '] = (fmaf('),
    'pack': lambda s: s.replace('= yr_pack2(type, e[', '= __float_as_uint(e['),
    'pv': lambda s: '\n'.join(l for l in s.split('\n') if not ('wgmma.mma_async' in l and '"+f"(att_o' in l)),
    'qk': lambda s: '\n'.join(l for l in s.split('\n') if not ('wgmma.mma_async' in l and '"+f"(att_s' in l)),
    'copy': lambda s: s.replace('yr_cp16(stage +', 'if (bz > 99) yr_cp16(stage +'),
}


def strip(path, part, out):
    text = STRIP[part](open(path).read())
    if part == 'pack':  # two floats as one word: the sum keeps both live
        text = text.replace('e[0][0], e[0][1]);', 'e[0][0] + e[0][1]);').replace('e[0][2], e[0][3]);', 'e[0][2] + e[0][3]);')
        text = text.replace('e[1][0], e[1][1]);', 'e[1][0] + e[1][1]);').replace('e[1][2], e[1][3]);', 'e[1][2] + e[1][3]);')
    open(out + '.cu', 'w').write('\n'.join(clean(text.split('\n'))))


def turns(path, out, after_ev):
    src = clean(open(path).read().split('\n'))
    wait = next(i for i, l in enumerate(src) if 'yr_mbar_wait(stage_full' in l)
    k = src[:wait - 1]
    k.append('    const int att_wg = threadIdx.x >> 7;')
    k.append('    if (att_wg == 1) asm volatile("bar.arrive 2, 256;" ::: "memory");')
    k += [src[wait - 1], src[wait], '      asm volatile("bar.sync %0, 256;" :: "r"(2 + att_wg) : "memory");']
    commits, last = 0, 4 if after_ev else 2
    for line in src[wait + 1:]:
        k.append(line)
        if 'yr_wgmma_commit();' in line:
            commits += 1
            if commits == last:
                k.append('      if (!(att_wg == 1 && it == 7)) asm volatile("bar.arrive %0, 256;" :: "r"(3 - att_wg) : "memory");')
    open(out + '.cu', 'w').write('\n'.join(k))


if __name__ == '__main__':
    if sys.argv[1] == 'split':
        split(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == 'strip':
        strip(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == 'turns':
        turns(sys.argv[2], sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == 'all')
    else:
        sys.exit(__doc__)
