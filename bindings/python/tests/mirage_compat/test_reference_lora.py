"""Mirage's demo/reference_mugraphs/lora.py (mirage-project/mirage de8745d) with
`import yirage as mi`: the LoRA graph X·W + (X·A)·B, built as the demo builds it. The demo only
times its torch_lora baseline (on X of 16 rows, not the graph's 1) and draws the graph; here the
graph runs as it is and is checked against a float64 reference, and graph.visualize("lora")
draws it in a temporary folder (_compat.draw). --checkpoint is not used by the demo.
Inputs are scaled so that the products keep unit size."""
import pytest
from _compat import check, draw, host, randn

import yirage as mi


def optimize_lora(checkpoint):
    graph = mi.new_kernel_graph()
    X = graph.new_input(dims=(1, 4096), dtype=mi.float16)
    W = graph.new_input(dims=(4096, 4096), dtype=mi.float16)
    A = graph.new_input(dims=(4096, 16), dtype=mi.float16)
    B = graph.new_input(dims=(16, 4096), dtype=mi.float16)
    D = graph.matmul(X, A)
    E = graph.matmul(D, B)
    C = graph.matmul(X, W)
    O = graph.add(C, E)
    graph.mark_output(O)

    input_tensors = [
        randn(1, 4096),
        randn(4096, 4096, scale=1 / 64),
        randn(4096, 16, scale=1 / 64),
        randn(16, 4096, scale=0.25),
    ]
    x, w, a, b = host(input_tensors)
    check(graph(inputs=input_tensors)[0], x @ w + (x @ a) @ b)
    draw(graph, "lora")


def test_lora():
    optimize_lora(None)
