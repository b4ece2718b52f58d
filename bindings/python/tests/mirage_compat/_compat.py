"""What the ports of Mirage's demos share (docs/python.md, "Mirage's demos and reference
µGraphs"): where they run, their random inputs, and the check of their outputs.

Mirage's demos make PyTorch CUDA tensors. Where PyTorch imports and sees a GPU the ports do the
same (yirage then runs on its CUDA plugin, the default device where it has one); elsewhere they
make numpy arrays (and yirage.DeviceTensors for bfloat16, which numpy has not) and yirage runs on
the CPU plugin. Every output is checked against a float64 numpy reference by relative norm."""
import time

import numpy as np

import yirage as mi

try:
    import torch
    CUDA = torch.cuda.is_available()
except ImportError:
    torch, CUDA = None, False

# The backend the ports name where a demo names one (Mirage's backend="cuda").
BACKEND = "cuda" if CUDA else "cpu"

# Relative norm of the error allowed per output dtype: a few units of the dtype's rounding
# (2^-11 for float16, 2^-8 for bfloat16) accumulated over long sums.
TOLERANCE = {"float16": 5e-3, "bfloat16": 4e-2, "float32": 1e-4}

_rng = np.random.default_rng(2024)


def _bfloat16_bits(values):
    """float32 values rounded to bfloat16 (to nearest, ties to even), as uint16 bits."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def _bfloat16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def randn(*dims, dtype=mi.float16, scale=1.0):
    """Normal random values times `scale` (Mirage's torch.randn(*dims, dtype=..., device='cuda:0')
    where CUDA is; numpy, or a DeviceTensor for bfloat16, elsewhere)."""
    values = (_rng.standard_normal(dims) * scale).astype(np.float32)
    if dtype is mi.bfloat16:
        values = _bfloat16_values(_bfloat16_bits(values))
    if CUDA:
        return torch.from_numpy(values).to(device="cuda:0", dtype=mi.convert_dtype_to_torch_type(dtype))
    if dtype is mi.bfloat16:
        return mi.default_device().empty(dims, mi.bfloat16).copy_from(_bfloat16_bits(values))
    return values.astype(dtype.numpy)


def as_strided(x, dims, strides):
    """Mirage's torch.as_strided(x, dims, strides) (strides in elements) where PyTorch is; a
    strided numpy view of a numpy array. A bfloat16 DeviceTensor (no PyTorch) is compact: the
    view's values are copied into a new one, laid out row-major."""
    if torch is not None and isinstance(x, torch.Tensor):
        return torch.as_strided(x, dims, strides)
    if isinstance(x, mi.DeviceTensor):
        bits = np.ascontiguousarray(x.copy_to(np.empty(x.shape, np.uint16)))
        view = np.lib.stride_tricks.as_strided(bits, dims, [s * 2 for s in strides])
        return mi.default_device().empty(dims, x.dtype).copy_from(np.ascontiguousarray(view))
    return np.lib.stride_tricks.as_strided(x, dims, [s * x.itemsize for s in strides])


def host(x):
    """A tensor's values as a float64 numpy array (a list of tensors: a list of arrays)."""
    if isinstance(x, (list, tuple)):
        return [host(t) for t in x]
    if isinstance(x, mi.DeviceTensor):
        if x.dtype is mi.bfloat16:
            return _bfloat16_values(x.copy_to(np.empty(x.shape, np.uint16))).astype(np.float64)
        return x.numpy().astype(np.float64)
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().to(device="cpu", dtype=torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)


def check(got, want, dtype=mi.float16):
    """Asserts that output `got` matches the float64 reference `want` within the dtype's
    tolerance; returns the relative error."""
    got = host(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    error = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert error < TOLERANCE[dtype.name], f"relative error {error:.3g} on {mi.default_device()}"
    return error


def time_like_the_demo(run):
    """The demos' timing loop: 16 warm-up calls and 1000 timed between CUDA events where CUDA is
    (milliseconds a call); on the CPU 2 and 3, timed by the clock."""
    warmup, repetitions = (16, 1000) if CUDA else (2, 3)
    for _ in range(warmup):
        run()
    if CUDA:
        torch.cuda.synchronize()
        starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        starter.record()
        for _ in range(repetitions):
            run()
        ender.record()
        torch.cuda.synchronize()
        return starter.elapsed_time(ender) / repetitions
    start = time.perf_counter()
    for _ in range(repetitions):
        run()
    return (time.perf_counter() - start) * 1e3 / repetitions


def softmax_attention(q, k, v):
    """softmax(Q·K)·V over the last dim, with the maximum subtracted, in float64."""
    a = q @ k
    e = np.exp(a - a.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def rms_norm(x):
    """x over the root mean square of its last dim (Mirage's rms_norm: no eps, no weight)."""
    return x / np.sqrt((x * x).mean(-1, keepdims=True))


def draw(graph, name):
    """Mirage's graph.visualize(name), run in a temporary folder: name.dot always, name.png where
    Graphviz's dot is installed (else the call says it needs it)."""
    import os
    import shutil
    import tempfile

    import pytest

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            if shutil.which("dot") is None:
                with pytest.raises(mi.UnsupportedError, match="Graphviz"):
                    graph.visualize(name)
            else:
                graph.visualize(name)
                assert os.path.getsize(name + ".png") > 0
            assert open(name + ".dot").read().startswith("digraph")
        finally:
            os.chdir(here)
