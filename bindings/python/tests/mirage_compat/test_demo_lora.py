"""Mirage's demo/demo_lora.py (mirage-project/mirage de8745d) with `import yirage as mi`:
X·W + (X·A)·B, superoptimized with config="lora", then run and timed.

Sizes: the demo's (1 × 4096, 4096 × 4096, rank 16) where CUDA is; 1024 for 4096 on the CPU,
where the search at the demo's sizes takes about 5 s (1024: about 1.5 s) on CI's two cores.
Inputs are scaled so that the products keep unit size. Added: the check against a float64
reference."""
from _compat import CUDA, check, host, randn, time_like_the_demo

import yirage as mi

N = 4096 if CUDA else 1024


def test_demo_lora():
    graph = mi.new_kernel_graph()
    X = graph.new_input(dims=(1, N), dtype=mi.float16)
    W = graph.new_input(dims=(N, N), dtype=mi.float16)
    A = graph.new_input(dims=(N, 16), dtype=mi.float16)
    B = graph.new_input(dims=(16, N), dtype=mi.float16)
    D = graph.matmul(X, A)
    E = graph.matmul(D, B)
    C = graph.matmul(X, W)
    O = graph.add(C, E)
    graph.mark_output(O)
    optimized_graph = graph.superoptimize(config="lora")

    input_tensors = [
        randn(1, N),
        randn(N, N, scale=N ** -0.5),
        randn(N, 16, scale=N ** -0.5),
        randn(16, N, scale=0.25),
    ]

    mean_syn = time_like_the_demo(lambda: optimized_graph(inputs=input_tensors))
    print(mean_syn)

    x, w, a, b = host(input_tensors)
    check(optimized_graph(inputs=input_tensors)[0], x @ w + (x @ a) @ b)
