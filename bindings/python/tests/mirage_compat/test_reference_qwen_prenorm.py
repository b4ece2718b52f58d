"""Mirage's demo/reference_mugraphs/qwen_prenorm.py (mirage-project/mirage de8745d) with
`import yirage as mi`: rms_norm(X)·G·W in bfloat16 with W column-major
(new_input(..., strides=(1, 2048))). yirage's graph tensors are compact row-major, so that
new_input raises UnsupportedError naming strides= (checked here); nothing else of the demo can
run without it."""
import pytest

import yirage as mi


def test_qwen_prenorm():
    graph = mi.new_kernel_graph()
    X = graph.new_input(dims=(1, 2048), dtype=mi.bfloat16)
    G = graph.new_input(dims=(1, 2048), dtype=mi.bfloat16)
    with pytest.raises(mi.UnsupportedError, match=r"new_input\(\): Mirage's strides=\(1, 2048\)"):
        W = graph.new_input(dims=(2048, 2560), strides=(1, 2048), dtype=mi.bfloat16)
