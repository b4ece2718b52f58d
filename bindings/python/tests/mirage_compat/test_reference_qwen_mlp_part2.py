"""Mirage's demo/reference_mugraphs/qwen_mlp_part2.py (mirage-project/mirage de8745d) with
`import yirage as mi`: (silu(X) * Y)·W in bfloat16, superoptimized with config="mlp", then run.

Differences: the demo feeds X and Y as 1 × 1 × n to a graph whose X and Y are 1 × n; Mirage's
compile asserts the shapes, and yirage refuses them too (checked here); the rest runs with the
graph's shapes. Left out: the input strides read through optimized_graph.cygraph
(get_input_dtensors, get_input_dtensor_shape_and_stride) and mi.generate_cuda_program (yirage
has no Cython graph and does not return CUDA source). Sizes: the demo's (18944 → 3584) where
CUDA is; 1024 → 512 on the CPU, to keep its search within a few seconds. Without PyTorch the
bfloat16 inputs are yirage.DeviceTensors (numpy has no bfloat16). W is scaled so that the output
keeps unit size. Added: the check against a float64 reference."""
import numpy as np
import pytest
from _compat import CUDA, check, host, randn

import yirage as mi

N, M = (18944, 3584) if CUDA else (1024, 512)


def torch_qwen_mlp(X, Y, W):
    return (X / (1 + np.exp(-X)) * Y) @ W


def test_qwen_mlp_part2():
    graph = mi.new_kernel_graph()
    X = graph.new_input(dims=(1, N), dtype=mi.bfloat16)
    Y = graph.new_input(dims=(1, N), dtype=mi.bfloat16)
    W = graph.new_input(dims=(N, M), dtype=mi.bfloat16)
    D = graph.mul(graph.silu(X), Y)
    O = graph.matmul(D, W)
    graph.mark_output(O)
    optimized_graph = graph.superoptimize(config="mlp")

    input_tensors = [
        randn(1, 1, N, dtype=mi.bfloat16),
        randn(1, 1, N, dtype=mi.bfloat16),
        randn(N, M, dtype=mi.bfloat16, scale=N ** -0.5),
    ]
    with pytest.raises(mi.InvalidArgumentError):
        optimized_graph(inputs=input_tensors)
    input_tensors[:2] = [randn(1, N, dtype=mi.bfloat16), randn(1, N, dtype=mi.bfloat16)]

    outputs = optimized_graph(inputs=input_tensors)
    check(outputs[0], torch_qwen_mlp(*host(input_tensors)), mi.bfloat16)
