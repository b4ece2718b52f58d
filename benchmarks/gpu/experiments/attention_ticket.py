#!/usr/bin/env python3
"""The sum of parts of yirage's split attention moved into its chunk kernel, the last block of
each row block doing it: every block writes its partial sums as the generated kernel does, then
takes a ticket (an atomic count per row block in global memory); the block that takes the last
one reads all the chunks' partial sums back (from L2) in a fixed order, writes the 16-bit output
and sets the count back to 0 for the next launch. No block waits for another, so it needs no
cooperative launch or cluster. For attention_variants.cu with TICKET=1 (the chunk kernel then
takes the counts and the output after its own two outputs, and no sum kernel runs). Not part of
the build; benchmarks/gpu/RESULTS.md (twenty-fourth session) has the numbers.

  attention_ticket.py CHUNK.cu OUT      CHUNK: the chunk kernel as the generator writes it
                                        (585ed7d or later), its source cleaned or not
"""
import re
import sys

sys.path.insert(0, __file__.rsplit('/', 1)[0] if '/' in __file__ else '.')
from attention_roles import clean  # noqa: E402

src = '\n'.join(clean(open(sys.argv[1]).read().split('\n')))
threads = int(re.search(r'__launch_bounds__\((\d+)\)', src).group(1))
ev = re.search(r'att_ev_out = out0 \+ \(bx \* (\d+) \+ by \* (\d+) \+ bz \* 64\)', src)
head_stride, block_stride = int(ev.group(1)), int(ev.group(2))
row_stride = int(re.search(r'att_ev_out \+ \(att_row \+ att_grp\) \* (\d+)', src).group(1))
parts, rows = row_stride // 64, block_stride // row_stride
group = min(parts, 4)  # the parts whose loads are in flight together
items = (rows * 16 + threads - 1) // threads  # 4-float pieces of the block's rows per thread
src = src.replace('float *__restrict__ out0, float *__restrict__ out1)',
                  'float *__restrict__ out0, float *__restrict__ out1, unsigned *__restrict__ tickets, '
                  'yr_f16 *__restrict__ out)')
end = src.rstrip().rindex('}')
tail = f'''  // The last of the row block's {parts} chunks to finish adds them all up.
  __shared__ unsigned yr_ticket;
  __threadfence();  // this block's partial sums, visible before its ticket
  __syncthreads();
  if (threadIdx.x == 0) yr_ticket = atomicAdd(tickets + bx * gridDim.y + by, 1u);
  __syncthreads();
  if (yr_ticket != {parts - 1}) return;
  __threadfence();  // the other chunks' partial sums, seen after their tickets
  const float *ev = out0 + (bx * {head_stride} + by * {block_stride});
  const float *e = out1 + (bx * {head_stride // 64} + by * {block_stride // 64});
  float4 acc[{items}];
  float l[{items}];
  #pragma unroll
  for (int u = 0; u < {items}; ++u) {{ acc[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f); l[u] = 0.0f; }}
  #pragma unroll 1
  for (int q0 = 0; q0 < {parts}; q0 += {group}) {{
    float4 v[{items}][{group}];
    float s[{items}][{group}];
    #pragma unroll
    for (int u = 0; u < {items}; ++u) {{
      const int i = static_cast<int>(threadIdx.x) + u * {threads}, row = i / 16, col = i % 16 * 4;
      #pragma unroll
      for (int g = 0; g < {group}; ++g) {{
        if (i < {rows * 16}) {{
          v[u][g] = __ldcg(reinterpret_cast<const float4 *>(ev + row * {row_stride} + (q0 + g) * 64 + col));
          s[u][g] = __ldcg(e + row * {parts} + q0 + g);
        }}
      }}
    }}
    #pragma unroll
    for (int u = 0; u < {items}; ++u) {{
      #pragma unroll
      for (int g = 0; g < {group}; ++g) {{
        if (static_cast<int>(threadIdx.x) + u * {threads} < {rows * 16}) {{
          acc[u].x += v[u][g].x; acc[u].y += v[u][g].y; acc[u].z += v[u][g].z; acc[u].w += v[u][g].w;
          l[u] += s[u][g];
        }}
      }}
    }}
  }}
  #pragma unroll
  for (int u = 0; u < {items}; ++u) {{
    const int i = static_cast<int>(threadIdx.x) + u * {threads}, row = i / 16, col = i % 16 * 4;
    if (i < {rows * 16}) {{
      yr_f16 *o = out + bx * {head_stride // parts} + (by * {rows} + row) * 64 + col;
      yr_st(o, acc[u].x / l[u]); yr_st(o + 1, acc[u].y / l[u]); yr_st(o + 2, acc[u].z / l[u]); yr_st(o + 3, acc[u].w / l[u]);
    }}
  }}
  if (threadIdx.x == 0) tickets[bx * gridDim.y + by] = 0u;
'''
open(sys.argv[2] + '.cu', 'w').write(src[:end] + tail + src[end:])
