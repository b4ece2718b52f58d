"""Mirage's demo/demo_gated_mlp.py (mirage-project/mirage de8745d) with `import yirage as mi`:
silu(X·W1) * (X·W2), superoptimized with config="mlp", then run and timed.

Sizes: the demo's (8 × 4096, two 4096 × 4096) where CUDA is; 8 × 1024 and 1024 × 1024 on the CPU,
where the search at the demo's sizes takes about 11 s (1024: about 2 s) on CI's two cores. The
weights are scaled so that X·W keeps unit size. Added: the check against a float64 reference."""
import numpy as np
from _compat import CUDA, check, host, randn, time_like_the_demo

import yirage as mi

N = 4096 if CUDA else 1024


def test_demo_gated_mlp():
    graph = mi.new_kernel_graph()
    X = graph.new_input(dims=(8, N), dtype=mi.float16)
    W1 = graph.new_input(dims=(N, N), dtype=mi.float16)
    W2 = graph.new_input(dims=(N, N), dtype=mi.float16)
    O1 = graph.matmul(X, W1)
    O2 = graph.matmul(X, W2)
    O1 = graph.silu(O1)
    O = graph.mul(O1, O2)
    graph.mark_output(O)
    optimized_graph = graph.superoptimize(config="mlp")

    input_tensors = [
        randn(8, N),
        randn(N, N, scale=N ** -0.5),
        randn(N, N, scale=N ** -0.5),
    ]

    mean_syn = time_like_the_demo(lambda: optimized_graph(inputs=input_tensors))
    print("Best muGraph run time (ms): ", mean_syn)

    x, w1, w2 = host(input_tensors)
    d = x @ w1
    check(optimized_graph(inputs=input_tensors)[0], d / (1 + np.exp(-d)) * (x @ w2))
