"""Mirage's demo/reference_mugraphs/group_query_attention.py (mirage-project/mirage de8745d) with
`import yirage as mi`: attention as two µGraphs. The first writes, per block of 256 keys, the
partial sums Σ exp(Q·K)·V and Σ exp(Q·K) side by side; the second adds them up with
forloop_accum(bA, "sum_todimx") (the 16 slices of 64 columns of each row folded to
reduction_dimx = 64) and forloop_accum(bB, "sum"), and divides: softmax(Q·K)·V, checked against
float64.

Left out: mi.generate_cuda_program(graph.cygraph, ...) and the timing loop. Inputs are scaled
by 1/4: exp(Q·K) of unit normals overflows float16."""
from _compat import check, host, randn, softmax_attention

import yirage as mi


def test_group_query_attention():
    graph = mi.new_kernel_graph()
    Q = graph.new_input(dims=(2, 256, 64), dtype=mi.float16)
    K = graph.new_input(dims=(2, 64, 4096), dtype=mi.float16)
    V = graph.new_input(dims=(2, 4096, 64), dtype=mi.float16)
    tbgraph1 = mi.new_threadblock_graph(
        grid_dim=(2, 16, 4), block_dim=(128, 1, 1), forloop_range=4, reduction_dimx=64
    )
    bQ = tbgraph1.new_input(dtensor=Q, input_map=(0, -1, 1), forloop_dim=-1)
    bK = tbgraph1.new_input(dtensor=K, input_map=(0, 2, -1), forloop_dim=2)
    bV = tbgraph1.new_input(dtensor=V, input_map=(0, 1, -1), forloop_dim=1)
    bA = tbgraph1.matmul(bQ, bK)
    bE = tbgraph1.exp(bA)
    bS = tbgraph1.matmul(bE, bV)
    bO1 = tbgraph1.forloop_accum(bS)
    bO2 = tbgraph1.forloop_accum(bE, "sum")
    tbgraph1.new_output(stensor=bO1, output_map=(0, 2, 1))
    tbgraph1.new_output(stensor=bO2, output_map=(0, 2, 1))
    O = graph.customized([Q, K, V], tbgraph1)

    tbgraph2 = mi.new_threadblock_graph(
        grid_dim=(2, 16, 1), block_dim=(128, 1, 1), forloop_range=1, reduction_dimx=64
    )
    bA = tbgraph2.new_input(dtensor=O[0], input_map=(0, 1, -1), forloop_dim=-1)
    bB = tbgraph2.new_input(dtensor=O[1], input_map=(0, 1, -1), forloop_dim=-1)
    bA = tbgraph2.forloop_accum(bA, "sum_todimx")
    bB = tbgraph2.forloop_accum(bB, "sum")
    bO = tbgraph2.div(bA, bB)
    tbgraph2.new_output(stensor=bO, output_map=(0, 1, -1))
    O = graph.customized(O, tbgraph2)

    graph.mark_output(O[0])
    input_tensors = [
        randn(2, 256, 64, scale=0.25),
        randn(2, 64, 4096, scale=0.25),
        randn(2, 4096, 64),
    ]
    outputs = graph(inputs=input_tensors)

    q, k, v = host(input_tensors)
    check(outputs[0], softmax_attention(q, k, v))
