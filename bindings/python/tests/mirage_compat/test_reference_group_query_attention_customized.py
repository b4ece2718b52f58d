"""Mirage's demo/reference_mugraphs/group_query_attention_customized.py (mirage-project/mirage
de8745d) with `import yirage as mi`: online-softmax attention written by hand as two µGraphs,
with tb.reduction_max's (max, diff), forloop_accum_rescale(X, exp(diff)) and
forloop_accum_max. yirage takes exp(diff) as the maximum of its own rescale accumulator
(docs/python.md, "Mirage's API").

Left out: mi.generate_cuda_program(graph.cygraph, ...) and its print (yirage does not return
CUDA source), and the timing loop's 1000 runs on the CPU (_compat.time_like_the_demo).
Inputs are scaled by 1/4: the demo only times, and exp(Q·K) of unit normals overflows float16."""
from _compat import check, host, randn, softmax_attention, time_like_the_demo

import yirage as mi


def test_group_query_attention_customized():
    graph = mi.new_kernel_graph()
    Q = graph.new_input(dims=(2, 256, 64), dtype=mi.float16)
    K = graph.new_input(dims=(2, 64, 1024), dtype=mi.float16)
    V = graph.new_input(dims=(2, 1024, 64), dtype=mi.float16)
    tbgraph1 = mi.new_threadblock_graph(
        grid_dim=(2, 16, 4), block_dim=(128, 1, 1), forloop_range=4, reduction_dimx=64
    )
    bQ = tbgraph1.new_input(dtensor=Q, input_map=(0, -1, 1), forloop_dim=-1)
    bK = tbgraph1.new_input(dtensor=K, input_map=(0, 2, -1), forloop_dim=2)
    bV = tbgraph1.new_input(dtensor=V, input_map=(0, 1, -1), forloop_dim=1)
    bA = tbgraph1.matmul(bQ, bK)
    bAmax, bDiff = tbgraph1.reduction_max(bA, dim=2)
    bAs = tbgraph1.sub(bA, bAmax)
    bEAs = tbgraph1.exp(bAs)
    bEDiff = tbgraph1.exp(bDiff)
    bS = tbgraph1.matmul(bEAs, bV)
    bO1 = tbgraph1.forloop_accum_rescale(bS, bEDiff)
    bO2 = tbgraph1.forloop_accum_rescale(bEAs, bEDiff, "sum")
    bO3 = tbgraph1.forloop_accum_max(bAmax)
    tbgraph1.new_output(stensor=bO1, output_map=(0, 2, 1))
    tbgraph1.new_output(stensor=bO2, output_map=(0, 2, 1))
    tbgraph1.new_output(stensor=bO3, output_map=(0, 2, 1))
    O = graph.customized([Q, K, V], tbgraph1)

    tbgraph2 = mi.new_threadblock_graph(
        grid_dim=(2, 1, 4), block_dim=(128, 1, 1), forloop_range=16, reduction_dimx=64
    )
    bNumerator = tbgraph2.new_input(dtensor=O[0], input_map=(0, -1, 1), forloop_dim=2)
    bDenominator = tbgraph2.new_input(dtensor=O[1], input_map=(0, -1, 1), forloop_dim=2)
    bLocalMax = tbgraph2.new_input(dtensor=O[2], input_map=(0, -1, 1), forloop_dim=2)
    bMaxLocalMax, bDiffLocalMax = tbgraph2.reduction_max(bLocalMax, dim=2)
    bLocalMaxMinusMaxLocalMax = tbgraph2.sub(bLocalMax, bMaxLocalMax)
    bExpDiffMax = tbgraph2.exp(bDiffLocalMax)
    bExpLocalMaxMinusMaxLocalMax = tbgraph2.exp(bLocalMaxMinusMaxLocalMax)
    bNumerator = tbgraph2.mul(bNumerator, bExpLocalMaxMinusMaxLocalMax)
    bDenominator = tbgraph2.mul(bDenominator, bExpLocalMaxMinusMaxLocalMax)
    bN = tbgraph2.forloop_accum_rescale(bNumerator, bExpDiffMax)
    bD = tbgraph2.forloop_accum_rescale(bDenominator, bExpDiffMax, "sum")
    bO = tbgraph2.div(bN, bD)
    tbgraph2.new_output(stensor=bO, output_map=(0, -1, 1))
    Out = graph.customized(O, tbgraph2)

    graph.mark_output(Out[0])

    input_tensors = [
        randn(2, 256, 64, scale=0.25),
        randn(2, 64, 1024, scale=0.25),
        randn(2, 1024, 64),
    ]

    # The demo's reference, in float64.
    tQ, tK, tV = host(input_tensors)
    tR = softmax_attention(tQ, tK, tV)

    outputs = graph(inputs=input_tensors)
    check(outputs[0], tR)
    print(time_like_the_demo(lambda: graph(inputs=input_tensors)))
