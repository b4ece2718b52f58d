"""Mirage's demo/reference_mugraphs/llama3-8b.py (mirage-project/mirage de8745d) with
`import yirage as mi`: its two µGraphs, rms_norm(X)·Wqkv and rms_norm(X)·W13 of Llama-3-8B
(forloop_accum(tX, "rms") dividing the accumulated product), at the demo's sizes, each run as it
is and checked against a float64 reference.

Left out: mirage_llama's attention (flashinfer.single_prefill_with_kv_cache) and the torch
matmuls around the kernels, and the timing loop. get_rms_linear2 (W13: 4096 × 28672) runs only
where CUDA is: its float64 reference needs about a gigabyte, beyond the CI machine's share. W is
scaled so that the output keeps unit size."""
import pytest
from _compat import CUDA, check, host, randn, rms_norm

import yirage as mi

n_local_heads = 32
n_local_kv_heads = 8
head_dim = 128
intermediate_size = 14336
num_tokens = 1
num_kv_tokens = 4096


def get_rms_linear():
    graph = mi.new_kernel_graph()
    X = graph.new_input(dims=(num_tokens, 4096), dtype=mi.float16)
    W = graph.new_input(dims=(4096, n_local_heads * head_dim + 2 * n_local_kv_heads * head_dim), dtype=mi.float16)
    tb_graph = mi.new_threadblock_graph(grid_dim=(192,1,1), block_dim=(128,1,1), forloop_range=32, reduction_dimx=64)
    tX = tb_graph.new_input(dtensor=X, input_map=(-1, -1, -1), forloop_dim=1)
    tW = tb_graph.new_input(dtensor=W, input_map=(1, -1, -1), forloop_dim=0)
    tM = tb_graph.matmul(tX, tW)
    tAccX = tb_graph.forloop_accum(tX, "rms")
    tAccM = tb_graph.forloop_accum(tM)
    tO = tb_graph.div(tAccM, tAccX)
    tb_graph.new_output(stensor=tO, output_map=(1, -1, -1))
    O = graph.customized([X, W], tb_graph)
    graph.mark_output(O[0])
    return graph


def get_rms_linear2():
    graph = mi.new_kernel_graph()
    X = graph.new_input(dims=(num_tokens, 4096), dtype=mi.float16)
    W = graph.new_input(dims=(4096, intermediate_size * 2), dtype=mi.float16)
    tb_graph = mi.new_threadblock_graph(grid_dim=(448,1,1), block_dim=(128,1,1), forloop_range=32, reduction_dimx=64)
    tX = tb_graph.new_input(dtensor=X, input_map=(-1, -1, -1), forloop_dim=1)
    tW = tb_graph.new_input(dtensor=W, input_map=(1, -1, -1), forloop_dim=0)
    tM = tb_graph.matmul(tX, tW)
    tAccX = tb_graph.forloop_accum(tX, "rms")
    tAccM = tb_graph.forloop_accum(tM)
    tO = tb_graph.div(tAccM, tAccX)
    tb_graph.new_output(stensor=tO, output_map=(1, -1, -1))
    O = graph.customized([X, W], tb_graph)
    graph.mark_output(O[0])
    return graph


def run_and_check(func, columns):
    X = randn(num_tokens, 4096)
    W = randn(4096, columns, scale=1 / 64)
    outputs = func(inputs=[X, W])
    x, w = host([X, W])
    check(outputs[0], rms_norm(x) @ w)


def test_rms_linear():
    run_and_check(get_rms_linear(), n_local_heads * head_dim + 2 * n_local_kv_heads * head_dim)


def test_rms_linear2():
    if not CUDA:
        pytest.skip("W13 is 4096 x 28672: its float64 reference is too large for CI's CPU run")
    run_and_check(get_rms_linear2(), intermediate_size * 2)
