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
  attention_roles.py reorder CHUNK.cu OUT [smemq]
                                              FlashAttention-3's order within a warpgroup:
                                              iteration it issues its Q.K, then the E.V of
                                              it - 1 (whose 16-bit E waits in registers), and
                                              runs its softmax over all 128 keys while that E.V
                                              is on the tensor cores; one rescale of the sums
                                              per iteration, after that E.V is done. With
                                              `smemq`, Q.K reads Q from shared memory (16-bit,
                                              128-byte swizzled, written once over Q's float32
                                              tile) instead of 16 registers a thread.
  attention_roles.py maxnreg CHUNK.cu OUT PRODUCER CONSUMER
                                              the producer warpgroup gives registers back
                                              (setmaxnreg.dec to PRODUCER) and returns after its
                                              loop; the computing warpgroups take them
                                              (setmaxnreg.inc to CONSUMER) and write their
                                              partial sums inside their own branch, so that no
                                              code after the roles split is shared (40 232 and
                                              24 240 fit 65 536 registers at 384 threads).

`maxnreg` takes one of a0aa753 or later. `split` takes the chunk kernel as the generator wrote
it before the warp-specialized loop
(f32117f: `codegen::cuda_source` of the split µGraph for an H100, the plugin's cache source);
`strip` and `turns` take one the generator writes with it (d6497cc and later), `reorder` one
of 585ed7d or later (one or two computing warpgroups). Every source
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


def q_from_shared(src):
    """Q's fragments written once to shared memory for Q.K's A descriptor; Q.K reads them there."""
    packed = find(src, '      att_q[s][3] = ')
    end = find(src, '  }', packed)  # the block that packs Q's fragments
    write = [
        '  __syncthreads();  // every thread has read Q\'s float32 tile, which its 16-bit copy replaces',
        '  if (threadIdx.x < 256) {',
        '    yr_f16 *const q16 = reinterpret_cast<yr_f16 *>(smem);',
        '    #pragma unroll',
        '    for (int s = 0; s < 4; ++s) {',
        '      #pragma unroll',
        '      for (int f = 0; f < 4; ++f) {',
        '        const int r = att_row + att_grp + 8 * (f & 1), c = s * 16 + 8 * (f >> 1) + 2 * att_tig;',
        '        *reinterpret_cast<unsigned *>(q16 + (r >> 6) * 4096 + yr_swizzled128(r & 63, c, 64)) = att_q[s][f];',
        '      }',
        '    }',
        '  }',
        '  yr_fence_proxy_async();',
        '  __syncthreads();']
    src = src[:end + 1] + write + src[end + 1:]
    out = []
    for line in src:
        if 'wgmma.mma_async' in line and '"r"(att_q[' in line:
            s = int(line.split('"r"(att_q[')[1][0])
            line = line.replace('setp.ne.b32 p, %37, 0;', 'setp.ne.b32 p, %34, 0;')
            line = line.replace('{%32, %33, %34, %35}, %36, p, 1, 1, 1;', '%32, %33, p, 1, 1, 0, 1;')
            line = line.replace('"r"(att_q[%d][0]), "r"(att_q[%d][1]), "r"(att_q[%d][2]), "r"(att_q[%d][3]), ' % (s, s, s, s),
                                '"l"(att_qd + %d), ' % (2 * s))
        out.append(line)
    return out


def reorder(path, out, smemq=False):
    src = clean(open(path).read().split('\n'))
    if smemq:
        src = q_from_shared(src)
    # The computing warps' loop: from its `for` to the stage given back at its end.
    wait = next(i for i, l in enumerate(src) if 'yr_mbar_wait(stage_full + it %' in l and i > find(src, '  else {'))
    head, end = wait - 1, next(i for i in range(wait, len(src)) if 'yr_mbar_arrive(stage_empty + it %' in src[i])
    loop = src[head:end + 2]
    iterations = int(loop[0].split('it < ')[1].split(';')[0])
    stages = int(src[wait].split('it % ')[1].split(',')[0])
    first_wait = next(i for i, l in enumerate(loop) if 'yr_wgmma_wait<1>' in l)
    turn_sync = [l for l in loop[:first_wait] if 'bar.sync %0' in l]
    turn_arrive = [l for l in loop[:first_wait] if 'bar.arrive %0' in l]
    desc = next(l for l in loop if 'const unsigned long long att_kd = ' in l).replace(', att_vd = ', ', att_vd_cur = ')
    qk = [l for l in loop[:first_wait] if 'wgmma.mma_async' in l]
    ev = [l for l in loop if 'wgmma.mma_async' in l and '"r"(att_a' in l]
    # The 8 products of 16 keys each, the first 4 from att_a0, the others from att_a1.
    ev = [l.replace('att_a%d[%d]' % (i // 4, i % 4), 'att_p[%d]' % i).replace('att_vd', 'att_vd_prev') for i, l in enumerate(ev)]
    keep_o = next(l for l in loop if l.startswith('asm volatile("" : "+f"(att_o[0][0])'))
    keep_s = 'asm volatile("" : ' + ', '.join('"+f"(att_s[%d][%d])' % (j, k) for j in range(16) for k in range(4)) + ' :: "memory");'
    L2E = '1.4426950408889634f'

    def iteration(first):
        k = ['      yr_mbar_wait(stage_full + it %% %d, (it / %d) & 1);' % (stages, stages)] + turn_sync + [desc, '      yr_wgmma_fence();']
        k += qk + ['      yr_wgmma_commit();']
        if not first:
            k += ev + ['      yr_wgmma_commit();']
        k += turn_arrive + ['      yr_wgmma_wait<%d>();' % (0 if first else 1), keep_s]
        k += [
            '      float att_x0 = -INFINITY, att_x1 = -INFINITY;',
            '      #pragma unroll',
            '      for (int j = 0; j < 16; ++j) {',
            '        att_x0 = fmaxf(att_x0, fmaxf(att_s[j][0], att_s[j][1]));',
            '        att_x1 = fmaxf(att_x1, fmaxf(att_s[j][2], att_s[j][3]));',
            '      }',
            '      for (int off = 1; off < 4; off *= 2) {',
            '        att_x0 = fmaxf(att_x0, __shfl_xor_sync(0xffffffffu, att_x0, off));',
            '        att_x1 = fmaxf(att_x1, __shfl_xor_sync(0xffffffffu, att_x1, off));',
            '      }',
            '      const float att_n0 = fmaxf(att_m0, att_x0), att_n1 = fmaxf(att_m1, att_x1);',
            '      const float att_b0 = att_n0 == -INFINITY ? 0.0f : att_n0 * %s;' % L2E,
            '      const float att_b1 = att_n1 == -INFINITY ? 0.0f : att_n1 * %s;' % L2E,
            '      const float att_r0 = yr_exp2(att_m0 * %s - att_b0), att_r1 = yr_exp2(att_m1 * %s - att_b1);' % (L2E, L2E),
            '      att_m0 = att_n0;',
            '      att_m1 = att_n1;',
            '      float att_t0 = 0.0f, att_t1 = 0.0f;',
            '      #pragma unroll',
            '      for (int j = 0; j < 16; ++j) {',
            '        att_s[j][0] = yr_exp2(fmaf(att_s[j][0], %s, -att_b0));' % L2E,
            '        att_s[j][1] = yr_exp2(fmaf(att_s[j][1], %s, -att_b0));' % L2E,
            '        att_s[j][2] = yr_exp2(fmaf(att_s[j][2], %s, -att_b1));' % L2E,
            '        att_s[j][3] = yr_exp2(fmaf(att_s[j][3], %s, -att_b1));' % L2E,
            '        att_t0 += att_s[j][0] + att_s[j][1];',
            '        att_t1 += att_s[j][2] + att_s[j][3];',
            '      }',
            '      att_l0 = att_l0 * att_r0 + att_t0;',
            '      att_l1 = att_l1 * att_r1 + att_t1;',
            '      yr_wgmma_wait<0>();', keep_o]
        if not first:
            k += ['      yr_mbar_arrive(stage_empty + (it - 1) %% %d);' % stages]
        k += [
            '      if (__any_sync(0xffffffffu, att_r0 != 1.0f || att_r1 != 1.0f)) {',
            '        #pragma unroll',
            '        for (int c = 0; c < 8; ++c) {',
            '          att_o[c][0] *= att_r0; att_o[c][1] *= att_r0; att_o[c][2] *= att_r1; att_o[c][3] *= att_r1;',
            '        }',
            '      }',
            '      const yr_f16 *type = nullptr;',
            '      #pragma unroll',
            '      for (int j = 0; j < 8; ++j) {',
            '        att_p[j][0] = yr_pack2(type, att_s[2 * j][0], att_s[2 * j][1]);',
            '        att_p[j][1] = yr_pack2(type, att_s[2 * j][2], att_s[2 * j][3]);',
            '        att_p[j][2] = yr_pack2(type, att_s[2 * j + 1][0], att_s[2 * j + 1][1]);',
            '        att_p[j][3] = yr_pack2(type, att_s[2 * j + 1][2], att_s[2 * j + 1][3]);',
            '      }',
            '      att_vd_prev = att_vd_cur;']
        return k

    # The first iteration has no E.V before it; the last E.V follows the loop.
    body = ['    const unsigned long long att_qd = yr_wgmma_desc(reinterpret_cast<const yr_f16 *>(smem) + (att_row >> 6) * 4096, 16, 1024);'] if smemq else []
    body += ['    unsigned long long att_vd_prev = 0;',
            '    unsigned att_p[8][4];  // the previous iteration\'s 16-bit E: the A operand of its E.V',
            '    {', '      const int it = 0;'] + iteration(True) + ['    }',
            '    for (int it = 1; it < %d; ++it) {' % iterations] + iteration(False) + ['    }',
            '    yr_wgmma_fence();'] + ev + ['    yr_wgmma_commit();', '    yr_wgmma_wait<0>();', keep_o,
            '    yr_mbar_arrive(stage_empty + %d);' % ((iterations - 1) % stages)]
    open(out + '.cu', 'w').write('\n'.join(src[:head] + body + src[end + 2:]))


def maxnreg(path, out, producer, consumer):
    text = '\n'.join(clean(open(path).read().split('\n')))
    replacements = [
        ('  if (threadIdx.x >= 256) {\n    for (int it = 0;',
         '  if (threadIdx.x >= 256) {\n    asm volatile("setmaxnreg.dec.sync.aligned.u32 %d;");\n'
         '    for (int it = 0;' % producer),
        ('  else {\n    const int att_wg = att_warp >> 2;\n',
         '  else {\n    asm volatile("setmaxnreg.inc.sync.aligned.u32 %d;");\n    const int att_wg = att_warp >> 2;\n' % consumer),
        # the computing branch stays open over the partial sums' stores: no code after the split is shared
        ('      yr_mbar_arrive(stage_empty + it % 4);\n    }\n  }\n',
         '      yr_mbar_arrive(stage_empty + it % 4);\n    }\n'),
    ]
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    end = text.rstrip().rfind('}')
    open(out + '.cu', 'w').write(text[:end] + '}\n}\n')


if __name__ == '__main__':
    if sys.argv[1] == 'split':
        split(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == 'strip':
        strip(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == 'reorder':
        reorder(sys.argv[2], sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == 'smemq')
    elif sys.argv[1] == 'maxnreg':
        maxnreg(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == 'turns':
        turns(sys.argv[2], sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == 'all')
    else:
        sys.exit(__doc__)
