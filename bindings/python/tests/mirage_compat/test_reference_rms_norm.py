"""Mirage's demo/reference_mugraphs/rms_norm.py (mirage-project/mirage de8745d) with
`import yirage as mi`: rms_norm(X)·W as one µGraph (forloop_accum(tX, "rms") divides the
accumulated product), at the demo's sizes, run as it is.

Left out: mi.generate_cuda_program(graph.cygraph, ...) and its print (yirage does not return
CUDA source), the torch_rms_norm baseline (here the float64 reference; torch.nn.RMSNorm's eps
aside, the same function), and the timing loop's 1000 runs on the CPU. W is scaled so that the
output keeps unit size."""
from _compat import check, host, randn, rms_norm, time_like_the_demo

import yirage as mi


def test_rms_norm():
    graph = mi.new_kernel_graph()
    X = graph.new_input(dims=(16, 4096), dtype=mi.float16)
    W = graph.new_input(dims=(4096, 4096), dtype=mi.float16)
    tb_graph = mi.new_threadblock_graph(grid_dim=(64,1,1), block_dim=(128,1,1), forloop_range=64, reduction_dimx=64)
    tX = tb_graph.new_input(dtensor=X, input_map=(-1, -1, -1), forloop_dim=1)
    tW = tb_graph.new_input(dtensor=W, input_map=(1, -1, -1), forloop_dim=0)
    tM = tb_graph.matmul(tX, tW)
    tAccX = tb_graph.forloop_accum(tX, "rms")
    tAccM = tb_graph.forloop_accum(tM)
    tO = tb_graph.div(tAccM, tAccX)
    tb_graph.new_output(stensor=tO, output_map=(1, -1, -1))
    O = graph.customized([X, W], tb_graph)
    graph.mark_output(O[0])

    input_tensors = [
        randn(16, 4096),
        randn(4096, 4096, scale=1 / 64),
    ]

    outputs = graph(inputs=input_tensors)
    x, w = host(input_tensors)
    check(outputs[0], rms_norm(x) @ w)
    print(time_like_the_demo(lambda: graph(inputs=input_tensors)))
