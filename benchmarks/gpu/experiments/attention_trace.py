#!/usr/bin/env python3
"""Timestamps in yirage's split-attention chunk kernel (warp-specialized, d14e34b or later), to
see where an iteration's cycles go. Not part of the build; benchmarks/gpu/RESULTS.md has what it
showed.

  attention_trace.py CHUNK.cu OUT.cu

OUT's kernel takes a sixth argument, `unsigned long long *tr` (attention_variants.cu passes its
ticket buffer; TRACE=1 prints it). Lane 0 of warps 0, 4 and 8 (threads 0, 128, 256) of two
blocks (the first and the one halfway through the grid, plus 5) write `clock64()` less the
block's start at these points of each iteration `it`, to tr[(block * 3 + warp / 4) * 100 + it * 12
+ event]:

  computing warps: 0 loop top, 1 stage full, 2 turn taken (bar.sync), 3 Q.K issued,
                   4 first half's scores in, 5 first half's max and rescale done,
                   6 first half's exps done, 7 second half's scores in, 8 second half's max and
                   rescale done, 9 second half's exps done, 10 E.V done
  producer warps:  0 loop top, 1 slot empty, 2 copies issued, 3 the stage before landed,
                   4 that stage announced

and at [.. + 96 .. 99]: 0, the block's start by %globaltimer (ns), its end in clock64 and in
%globaltimer (the ratio gives the clock). Every block's thread 0 also writes its start and end
by %globaltimer to tr[1000 + block] and tr[1000 + blocks + block].
"""
import sys

from attention_roles import clean

HEAD = r'''
  unsigned long long tr_c0 = clock64(), tr_g0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(tr_g0));
  const unsigned tr_blocks = gridDim.x * gridDim.y * gridDim.z, tr_id = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int tr_b = tr_id == 0 ? 0 : tr_id == tr_blocks / 2 + 5 ? 1 : -1;
  const int tr_w = threadIdx.x % 128 == 0 ? threadIdx.x / 128 : -1;
  unsigned long long *const tr_p = (tr_b >= 0 && tr_w >= 0 && tr_w < 3) ? tr + (tr_b * 3 + tr_w) * 100 : nullptr;
  if (threadIdx.x == 0) tr[1000 + tr_id] = tr_g0;
#define TR(k) do { if (tr_p) tr_p[it * 12 + (k)] = clock64() - tr_c0; } while (0)
'''

TAIL = r'''
  {
    unsigned long long g;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
    if (tr_p) { tr_p[96] = 0; tr_p[97] = tr_g0; tr_p[98] = clock64() - tr_c0; tr_p[99] = g; }
    if (threadIdx.x == 0) tr[1000 + tr_blocks + tr_id] = g;
  }
'''


def main():
    src = clean(open(sys.argv[1]).read().split('\n'))
    out = []
    section = None  # 'producer' or 'consumer' once inside the loops
    counts = {}

    def seen(key):
        counts[key] = counts.get(key, 0) + 1
        return counts[key]

    for i, line in enumerate(src):
        s = line.strip()
        nxt = src[i + 1].strip() if i + 1 < len(src) else ''
        if s.startswith('extern "C" __global__') and 'out1) {' in s:
            line = line.replace('out1) {', 'out1, unsigned long long *__restrict__ tr) {')
        before, after = [], []
        if s == 'asm volatile("griddepcontrol.launch_dependents;");':
            after.append(HEAD)
        if s.startswith('for (int it = 0;') and nxt.startswith('const int next = it + 1;'):
            section = 'producer'
        if s.startswith('for (int it = 0;') and nxt.startswith('yr_mbar_wait(stage_full'):
            section = 'consumer'
            after.append('TR(0);')
        if section == 'producer':
            if s.startswith('if (next >=') and 'stage_empty' in s:
                before.append('TR(0);')
                after.append('TR(1);')
            if s == 'yr_cp_commit();' and nxt == 'yr_cp_wait<1>();':
                before.append('TR(2);')
            if s == 'yr_cp_wait<1>();':
                after.append('TR(3);')
            if s.startswith('yr_mbar_arrive(stage_full'):
                after.append('TR(4);')
        if section == 'consumer':
            if s.startswith('yr_mbar_wait(stage_full'):
                after.append('TR(1);')
            if s.startswith('asm volatile("bar.sync'):
                after.append('TR(2);')
            if s == 'yr_wgmma_commit();' and seen('commit') == 2:
                after.append('TR(3);')
            if src[i - 1].strip() == 'yr_wgmma_wait<1>();' and s.startswith('asm volatile("" :'):
                after.append('TR(4);' if seen('wait1') == 1 else 'TR(7);')
            if s.startswith('unsigned att_a0['):
                before.append('TR(5);')
            if s.startswith('unsigned att_a1['):
                before.append('TR(8);')
            if s == 'yr_wgmma_fence();':
                n = seen('fence')
                if n == 2:
                    before.append('TR(6);')
                if n == 3:
                    before.append('TR(9);')
            if s.startswith('yr_mbar_arrive(stage_empty'):
                before.append('TR(10);')
                section = 'after'
        out.extend(before)
        out.append(line)
        out.extend(after)
    # The kernel's closing brace is the file's last non-empty line.
    last = max(i for i, l in enumerate(out) if l.strip())
    assert out[last].strip() == '}', out[last]
    out[last:last] = [TAIL]
    assert counts.get('fence', 0) >= 3 and counts.get('wait1', 0) >= 2, counts
    open(sys.argv[2], 'w').write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
