"""Mirage's demo/reference_mugraphs/qwen_mlp.py (mirage-project/mirage de8745d) with
`import yirage as mi`: rms_norm(X)·G·W in bfloat16 with W column-major
(new_input(..., strides=(1, n)), fed torch.as_strided(W, (n, m), (1, n))), superoptimized with
config="mlp", then run. yirage's kernels read W's logical values: the call copies the strided W
to a compact one first (docs/python.md).

Differences: the demo feeds X as 1 × 1 × n and G as n to a graph whose X and G are 1 × n; yirage
refuses them (checked here; Mirage's compile asserts the shapes too), and the rest runs with the
graph's shapes. Left out: the input strides read through optimized_graph.cygraph
(get_input_dtensors, get_input_dtensor_layout), mi.generate_cuda_program and the prints. Sizes:
the demo's (3584 → 37888) where CUDA is; 512 → 1024 on the CPU, to keep its search within a few
seconds. Without PyTorch the bfloat16 inputs are yirage.DeviceTensors, which are compact: W
then holds the strided view's values row-major (test_mirage_api.py checks strided numpy
inputs). W is scaled so that the output keeps unit size. Added: the check against a float64
reference."""
import numpy as np
import pytest
from _compat import CUDA, as_strided, check, host, randn

import yirage as mi

N, M = (3584, 2 * 18944) if CUDA else (512, 1024)


def torch_qwen_mlp(X, G, W):
    variance = (X ** 2).mean(-1, keepdims=True)
    X = X / np.sqrt(variance)
    X = X * G
    return X @ W


def test_qwen_mlp():
    graph = mi.new_kernel_graph()
    X = graph.new_input(dims=(1, N), dtype=mi.bfloat16)
    G = graph.new_input(dims=(1, N), dtype=mi.bfloat16)
    W = graph.new_input(dims=(N, M), strides=(1, N), dtype=mi.bfloat16)
    D = graph.rms_norm(X, normalized_shape=(N,))
    D = graph.mul(D, G)
    O = graph.matmul(D, W)
    graph.mark_output(O)
    optimized_graph = graph.superoptimize(config="mlp")

    input_tensors = [
        randn(1, 1, N, dtype=mi.bfloat16),
        randn(N, dtype=mi.bfloat16),
        randn(N, M, dtype=mi.bfloat16, scale=N ** -0.5),
    ]
    input_tensors[2] = as_strided(input_tensors[2], (N, M), (1, N))
    with pytest.raises(mi.InvalidArgumentError):
        optimized_graph(inputs=input_tensors)
    input_tensors[:2] = [randn(1, N, dtype=mi.bfloat16), randn(1, N, dtype=mi.bfloat16)]

    outputs = optimized_graph(inputs=input_tensors)
    check(outputs[0], torch_qwen_mlp(*host(input_tensors)), mi.bfloat16)
