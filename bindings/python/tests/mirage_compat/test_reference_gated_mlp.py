"""Mirage's demo/reference_mugraphs/gated_mlp.py (mirage-project/mirage de8745d) with
`import yirage as mi`: silu(X·W1) * (X·W2) as one µGraph, at the demo's sizes, run as it is.

Left out: mi.generate_cuda_program(graph.cygraph, ...) and its print (yirage does not return
CUDA source), the torch_gated_mlp baseline (here the float64 reference), the timing loop's 1000
runs on the CPU, and graph.visualize("gated_mlp") (see test_reference_lora.py for a drawing).
Inputs are scaled so that X·W keeps unit size."""
import numpy as np
from _compat import check, host, randn, time_like_the_demo

import yirage as mi


def torch_gated_mlp(X, W1, W2):
    D = X @ W1
    E = X @ W2
    return D / (1 + np.exp(-D)) * E


def test_gated_mlp():
    graph = mi.new_kernel_graph()
    X = graph.new_input(dims=(16, 4096), dtype=mi.float16)
    W1 = graph.new_input(dims=(4096, 4096), dtype=mi.float16)
    W2 = graph.new_input(dims=(4096, 4096), dtype=mi.float16)
    tb_graph = mi.new_threadblock_graph(grid_dim=(64,1,1), block_dim=(128,1,1), forloop_range=32, reduction_dimx=64)
    tX = tb_graph.new_input(dtensor=X, input_map=(-1, -1, -1), forloop_dim=1)
    tW1 = tb_graph.new_input(dtensor=W1, input_map=(1, -1, -1), forloop_dim=0)
    tW2 = tb_graph.new_input(dtensor=W2, input_map=(1, -1, -1), forloop_dim=0)
    tD1 = tb_graph.matmul(tX, tW1)
    tD2 = tb_graph.matmul(tX, tW2)
    tA1 = tb_graph.forloop_accum(tD1)
    tA2 = tb_graph.forloop_accum(tD2)
    tS = tb_graph.silu(tA1)
    tO = tb_graph.mul(tS, tA2)
    tb_graph.new_output(stensor=tO, output_map=(1, -1, -1))
    O = graph.customized([X, W1, W2], tb_graph)
    graph.mark_output(O[0])

    input_tensors = [
        randn(16, 4096),
        randn(4096, 4096, scale=1 / 64),
        randn(4096, 4096, scale=1 / 64),
    ]

    outputs = graph(inputs=input_tensors)
    check(outputs[0], torch_gated_mlp(*host(input_tensors)))
    print(time_like_the_demo(lambda: graph(inputs=input_tensors)))
