#!/usr/bin/env python3
"""Makes attention_one_kernel.cuh for attention_one_kernel.cu from the two kernels of yirage's
split attention for gqa at b = 1 (grid 2x4 over 16 key chunks: the µGraph the search keeps on an
H100), as the CUDA plugin leaves their sources in its cache (docs/backends/cuda.md):

    attention_one_kernel.py CHUNK.cu SUM.cu CHUNK_SHARED_BYTES > attention_one_kernel.cuh

It writes the chunk kernel and the sum kernel unchanged (renamed), and two variants of the chunk
kernel that end with the sum of parts themselves: `cluster_kernel` (the 16 chunks of a row block
form a thread-block cluster; each block leaves its partial sums in its shared memory and, after a
cluster barrier, adds up 4 of the 64 rows over the 16 blocks through distributed shared memory)
and `coop_kernel` (launched cooperatively; partial sums to global memory as now, a grid-wide
barrier, then each block adds up 4 rows). `g_mode` 1 returns before the barrier, 2 after it.
The substitutions are textual and fit this µGraph only."""
import re
import sys

chunk_src, sum_src, chunk_bytes = open(sys.argv[1]).read(), open(sys.argv[2]).read(), int(sys.argv[3])


def split(source):
    """(helpers, kernel) of a generated source, made compilable by nvcc for sm_90 alone."""
    source = re.sub(r'^(typedef long long int64_t;|typedef unsigned short uint16_t;|#define NAN .*|#define INFINITY .*)\n',
                    '', source, flags=re.M)
    source = re.sub(r'#if __CUDA_ARCH__ >= [89]00', '#if 1', source)  # nvcc's host pass reads kernels too
    at = source.index('extern "C" __global__')
    return source[:at], source[at:]


helpers, chunk = split(chunk_src)
_, sum_kernel = split(sum_src)
chunk = chunk.replace('yirage_cuda_kernel', 'chunk_kernel')
sum_kernel = sum_kernel.replace('yirage_cuda_kernel', 'sum_kernel')
body_end = chunk.rstrip().rindex('}')

# The cluster variant: the totals of each block go to its own shared memory (64 rows of 64, then
# the 64 row sums), after the tiles.
parts = chunk_bytes // 4
cluster = chunk[:body_end].replace('chunk_kernel', 'cluster_kernel')
cluster = cluster.replace('float *__restrict__ out0, float *__restrict__ out1)', 'yr_f16 *__restrict__ out)')
cluster = re.sub(r'const bool out1_16 = .*;', 'const bool out1_16 = true;', cluster)
cluster = re.sub(r'auto \*const att_ev_out = out1 \+ \(.*\);', f'float *const att_ev_out = smem + {parts};', cluster)
cluster = re.sub(r'auto \*const att_e_out = out0 \+ \(.*\);', f'float *const att_e_out = smem + {parts + 4096};', cluster)
cluster = re.sub(r'\* \d+ \+ c \* 8', '* 64 + c * 8', cluster)
cluster = re.sub(r'(yr_st\(att_e_out \+ \(att_row \+ att_grp(?: \+ 8)?\)) \* \d+, total\)', r'\1, total)', cluster)
cluster += f'''  cg::cluster_group cl = cg::this_cluster();
  if (g_mode == 1) return;
  cl.sync();
  if (g_mode == 2) return;
  {{
    const int row = static_cast<int>(cl.block_rank()) * 4 + threadIdx.x / 64, col = threadIdx.x % 64;
    float ev = 0.0f, l = 0.0f;
    #pragma unroll
    for (int q = 0; q < 16; ++q) {{
      const float *p = cl.map_shared_rank(smem + {parts}, q);
      ev += p[row * 64 + col];
      l += p[4096 + row];
    }}
    yr_st(out + bx * 16384 + (by * 64 + row) * 64 + col, ev / l);
  }}
  cl.sync();  // no block leaves while others read its shared memory
}}
'''

coop = chunk[:body_end].replace('chunk_kernel', 'coop_kernel')
coop = coop.replace('float *__restrict__ out1)', 'float *__restrict__ out1, yr_f16 *__restrict__ out)')
coop += '''  if (g_mode == 1) return;
  cg::this_grid().sync();
  if (g_mode == 2) return;
  {
    const int row = by * 64 + bz * 4 + threadIdx.x / 64, col = threadIdx.x % 64;
    float ev = 0.0f, l = 0.0f;
    #pragma unroll
    for (int q = 0; q < 16; ++q) {
      ev += __ldcg(out1 + bx * 262144 + row * 1024 + q * 64 + col);
      l += __ldcg(out0 + bx * 4096 + row * 16 + q);
    }
    yr_st(out + bx * 16384 + row * 64 + col, ev / l);
  }
}
'''
print('#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__device__ int g_mode = 0;')
print(helpers + chunk + '\n' + sum_kernel + '\n' + cluster + '\n' + coop)
