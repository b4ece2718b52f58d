"""Rotary position embeddings (examples/graphs/rope*.json, benchmarks/graphs/rope_graphs.hpp):
the graph files compute numpy's rotate-half RoPE, and a short CPU search fuses them."""

import os
import pathlib

import numpy as np
import pytest

import yirage as yr

EXAMPLES = pathlib.Path(os.environ.get("YIRAGE_EXAMPLES", "examples")) / "graphs"
HEAD_DIM, THETA, POSITION = 128, 1e6, 4095  # Qwen3-0.6B: rope_theta 1e6; a late decode position
RNG = np.random.default_rng(53)


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rope(x, cos, sin):
    """The standard (Llama/Qwen, Hugging Face) formulation, in float64."""
    x, cos, sin = (a.astype(np.float64) for a in (x, cos, sin))
    return x * cos + rotate_half(x) * sin


def tables(shape):
    """cos, sin of the position's angles (each frequency twice, as Hugging Face lays them out)
    and R with x · R = rotate_half(x), all float16, in `shape`'s leading ones."""
    inv_freq = THETA ** (-np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
    angles = np.concatenate([POSITION * inv_freq] * 2)
    cos, sin = (f(angles).reshape(shape).astype(np.float16) for f in (np.cos, np.sin))
    r = rotate_half(np.eye(HEAD_DIM)).astype(np.float16)
    return cos, sin, r.reshape((1,) * (len(shape) - 2) + r.shape)


def rope_inputs():
    x = RNG.uniform(-1, 1, (24, HEAD_DIM)).astype(np.float16)
    return [x, *tables((1, HEAD_DIM))]


def relative_error(got, want):
    return np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want)


def test_rope_graph_is_numpy_rope():
    g = yr.load(EXAMPLES / "rope.json")
    assert [t.dims for t in g.inputs] == [(24, 128), (1, 128), (1, 128), (128, 128)]
    x, cos, sin, r = inputs = rope_inputs()
    (out,) = g.run_reference(inputs)
    want = rope(x, cos, sin)
    assert out.shape == (24, 128) and out.dtype == np.float16
    # The reference computes in float64 and rounds the output once: numpy's RoPE rounded to
    # float16, element for element.
    np.testing.assert_array_equal(out, want.astype(np.float16))
    # The other RoPE convention (GPT-J's interleaved pairs) is a different function: the check
    # above tells them apart.
    pairs = np.stack([-x[:, 1::2], x[:, ::2]], axis=-1).reshape(x.shape).astype(np.float64)
    assert relative_error(out, x * cos.astype(np.float64) + pairs * sin) > 0.1


def test_rope_bfloat16_graph_is_the_float16_one():
    f16, bf16 = yr.load(EXAMPLES / "rope.json"), yr.load(EXAMPLES / "rope_bf16.json")
    assert [t.dims for t in bf16.inputs] == [t.dims for t in f16.inputs]
    assert {t.dtype for t in bf16.inputs} == {yr.bfloat16}
    assert bf16.num_operators == f16.num_operators


def test_rope_after_the_query_projection_is_numpy_rope():
    g = yr.load(EXAMPLES / "rope_q_projection.json")
    x = RNG.uniform(-1, 1, (1, 1, 1024)).astype(np.float16)
    wq = RNG.uniform(-0.05, 0.05, (16, 1024, 128)).astype(np.float16)
    inputs = [x, wq, *tables((1, 1, HEAD_DIM))]
    (out,) = g.run_reference(inputs)
    q = x.astype(np.float64) @ wq.astype(np.float64)  # [16, 1, 128], float64
    want = rope(q, inputs[2], inputs[3])
    assert out.shape == (16, 1, 128)
    # x · Wq is rounded to float16 before RoPE, as the graph's dtype says.
    assert relative_error(out, want) < 2e-3


def rotation_matrix(cos, sin, r):
    """M = diag(cos) + R · diag(sin): x · M = x ⊙ cos + (x · R) ⊙ sin, float16 like the tables."""
    cos, sin, r = (a.astype(np.float64).reshape(a.shape[-2:]) for a in (cos, sin, r))
    m = np.diag(cos[0]) + r * sin  # R · diag(sin) scales R's columns
    return m.reshape(1, HEAD_DIM, HEAD_DIM).astype(np.float16)


def test_rope_as_one_rotation_after_the_query_projection():
    g = yr.load(EXAMPLES / "rope_q_projection_matrix.json")
    x = RNG.uniform(-1, 1, (1, 1, 1024)).astype(np.float16)
    wq = RNG.uniform(-0.05, 0.05, (16, 1024, 128)).astype(np.float16)
    cos, sin, r = tables((1, 1, HEAD_DIM))
    (out,) = g.run_reference([x, wq, rotation_matrix(cos, sin, r)])
    want = rope(x.astype(np.float64) @ wq.astype(np.float64), cos, sin)
    assert out.shape == (16, 1, 128)
    assert relative_error(out, want) < 2e-3
    # A short search fuses the projection and RoPE into one customized operator.
    report = g.superoptimize(backend="cpu", time_budget=10, top_k=1, cache_dir=False).search
    fused = [c for c, info in report.candidates if info["description"].startswith("customized")]
    assert fused, str(report)
    assert fused[0].equivalent(g).equivalent


def test_rope_then_attention_is_numpy():
    g = yr.load(EXAMPLES / "rope_attention.json")
    q = RNG.uniform(-1, 1, (8, 2, 128)).astype(np.float16)
    k = RNG.uniform(-0.1, 0.1, (8, 128, 4096)).astype(np.float16)
    v = RNG.uniform(-1, 1, (8, 4096, 128)).astype(np.float16)
    cos, sin, r = tables((1, 1, HEAD_DIM))
    (out,) = g.run_reference([q, rotation_matrix(cos, sin, r), k, v])
    scores = np.exp(rope(q, cos, sin) @ k.astype(np.float64))
    want = (scores / scores.sum(2, keepdims=True)) @ v.astype(np.float64)
    assert out.shape == (8, 2, 128)
    assert relative_error(out, want) < 2e-3


def test_a_short_cpu_search_fuses_rope():
    g = yr.load(EXAMPLES / "rope.json")
    k = g.superoptimize(backend="cpu", time_budget=10, top_k=2, cache_dir=False)
    report = k.search
    fused = [(c, info) for c, info in report.candidates if info["description"].startswith("customized")]
    # RoPE as one µGraph: x · R, both products and the sum in one customized operator.
    assert fused, str(report)
    assert all(r["relative_error"] < 5e-3 for r in report.profiled if r["kept"])
    assert fused[0][0].equivalent(g).equivalent
    inputs = rope_inputs()
    want = rope(*inputs[:3])
    (out,) = k(inputs=inputs)
    assert relative_error(out, want) < 2e-3
    (fused_out,) = fused[0][0].run_reference(inputs)
    assert relative_error(fused_out, want) < 2e-3
