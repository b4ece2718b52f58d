"""The Python binding: the README example, every kernel-level operator against numpy, µGraphs,
equivalence, files, DLPack inputs and error paths."""

import math
import os
import pathlib

import numpy as np
import pytest

import yirage as yr

RNG = np.random.default_rng(7)


def rand(*dims, lo=-1.0, hi=1.0, dtype=np.float32):
    return RNG.uniform(lo, hi, dims).astype(dtype)


def run(build, inputs, dtype=yr.float32):
    """Builds a one-output graph over inputs shaped like `inputs` and runs it."""
    g = yr.new_kernel_graph()
    tensors = [g.new_input(x.shape, dtype) for x in inputs]
    g.mark_output(build(g, *tensors))
    (out,) = g.run_reference(inputs)
    return out


def test_readme_example():
    g = yr.new_kernel_graph()
    X = g.new_input(dims=(16, 256), dtype=yr.float16)
    W = g.new_input(dims=(256, 384), dtype=yr.float16)
    O = g.matmul(g.rms_norm(X, normalized_shape=(256,)), W)
    g.mark_output(O)
    x, w = rand(16, 256, dtype=np.float16), rand(256, 384, dtype=np.float16)
    (out,) = g.run_reference([x, w])
    xd = x.astype(np.float64)
    want = (xd / np.sqrt((xd ** 2).mean(-1, keepdims=True))) @ w.astype(np.float64)
    assert out.dtype == np.float16 and out.shape == (16, 384)
    assert np.linalg.norm(out - want) / np.linalg.norm(want) < 1e-3


GELU = np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))
SIGMOID = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
UNARY = {
    "exp": np.exp, "silu": lambda v: v * SIGMOID(v), "gelu": GELU,
    "relu": lambda v: np.maximum(v, 0), "sqrt": np.sqrt, "square": np.square,
    "sigmoid": SIGMOID, "log": np.log, "neg": np.negative,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    x = rand(3, 5, lo=0.1, hi=2.0)
    out = run(lambda g, a: getattr(g, name)(a), [x])
    np.testing.assert_allclose(out, UNARY[name](x.astype(np.float64)), rtol=1e-6, atol=1e-7)


def test_cpu_exp_over_float32s_range():
    """The CPU plugin's exp is a polynomial that vectorizes (backends/cpu/codegen/cpu_prelude.cpp),
    not libm's: within 4e-7 of exp over float32's normal results, subnormal results within a few
    of their units, and NaN, infinities, overflow and underflow as exp."""
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, 1.0, -1.0, 88.72, 88.7228, 88.723, 89.0,
                        -87.3, -100.0, -103.9, -104.0, -110.0], np.float32)
    x = np.concatenate([special, RNG.uniform(-103.0, 88.7, 200000).astype(np.float32)])[None, :]
    g = yr.new_kernel_graph()
    g.mark_output(g.exp(g.new_input(x.shape, yr.float32)))
    (out,) = g.compile(device=yr.default_context().device("cpu", 0))([x])
    out, x = out[0], x[0]
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64))
    assert np.isnan(out[0]) and out[1] == np.inf and out[2] == 0.0
    normal = np.isfinite(want) & (want > 1.18e-38) & (want < 3.4e38)
    assert np.max(np.abs(out[normal] - want[normal]) / want[normal]) < 4e-7
    tiny = want <= 1.18e-38
    assert np.max(np.abs(out[tiny] - want[tiny])) < 5e-45
    assert np.all(out[x >= 88.723] == np.inf) and np.all(out[x <= -104.0] == 0.0)


def test_cpu_float16_conversions_are_exact():
    """The CPU kernels convert float16 by integer arithmetic (cpu_prelude.cpp: GCC 12 vectorizes
    no loop of _Float16 casts): every float16 reads back unchanged (subnormals, infinities, NaN),
    and products of float16s, exact in float32, round to nearest even as numpy rounds them, into
    subnormals, ties and overflow included."""
    cpu = yr.default_context().device("cpu", 0)
    every = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)[None, :]
    g = yr.new_kernel_graph()
    g.mark_output(g.mul_scalar(g.new_input(every.shape, yr.float16), 1.0))
    (out,) = g.compile(device=cpu)([every])
    nan = np.isnan(every)
    assert np.all(np.isnan(out[nan])) and not np.any(np.isnan(out[~nan]))
    # Bit for bit, but a zero's sign, which is the compiler's to keep (-fno-signed-zeros).
    same = (out.view(np.uint16) == every.view(np.uint16)) | ((out == 0) & (every == 0))
    assert np.all(same[~nan])
    partners = RNG.permutation(every[0])[None, :]
    g = yr.new_kernel_graph()
    g.mark_output(g.mul(g.new_input(every.shape, yr.float16), g.new_input(every.shape, yr.float16)))
    (out,) = g.compile(device=cpu)([every, partners])
    with np.errstate(all="ignore"):
        want = (every.astype(np.float32) * partners.astype(np.float32)).astype(np.float16)
    nan = np.isnan(want)
    assert np.all(np.isnan(out[nan])) and not np.any(np.isnan(out[~nan]))
    # Equal values (products that underflow to zero must give zero, of either sign), and the sign
    # of every value that is not zero.
    assert np.all((out[~nan] == want[~nan]) & ((np.signbit(out[~nan]) == np.signbit(want[~nan])) |
                                               (want[~nan] == 0)))


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "pow": np.power, "max": np.maximum}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcasts(name):
    a, b = rand(4, 1, lo=0.5, hi=2.0), rand(1, 6, lo=0.5, hi=2.0)
    out = run(lambda g, x, y: getattr(g, name)(x, y), [a, b])
    np.testing.assert_allclose(out, BINARY[name](a.astype(np.float64), b), rtol=1e-6)


def test_parameterized_and_reductions():
    x = rand(4, 6)
    np.testing.assert_allclose(run(lambda g, a: g.clamp(a, -0.5, 0.25), [x]),
                               np.clip(x, -0.5, 0.25))
    np.testing.assert_allclose(run(lambda g, a: g.mul_scalar(a, 3.0), [x]), x * 3.0, rtol=1e-6)
    np.testing.assert_allclose(run(lambda g, a: g.reduction(a, 1), [x]),
                               x.astype(np.float64).sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(run(lambda g, a: g.reduction_max(a, -2), [x]),
                               x.max(0, keepdims=True))
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(run(lambda g, a: g.softmax(a, 1), [x]),
                               e / e.sum(1, keepdims=True), rtol=1e-6)


def test_rms_norm_with_weight_and_matmul_broadcast():
    x, w = rand(2, 3, 8), rand(3, 8)
    out = run(lambda g, a, b: g.rms_norm(a, (3, 8), eps=1e-5, weight=b), [x, w])
    xd = x.astype(np.float64)
    want = xd / np.sqrt((xd ** 2).mean(axis=(1, 2), keepdims=True) + 1e-5) * w
    np.testing.assert_allclose(out, want, rtol=1e-6)
    a, b = rand(1, 4, 5), rand(3, 5, 2)
    np.testing.assert_allclose(run(lambda g, p, q: g.matmul(p, q), [a, b]),
                               np.matmul(a.astype(np.float64), b), rtol=1e-6)


def test_concat_split_chunk():
    a, b = rand(2, 3), rand(2, 5)
    g = yr.new_kernel_graph()
    A, B = g.new_input(a.shape, yr.float32), g.new_input(b.shape, yr.float32)
    C = g.concat(A, B, 1)
    left, right = g.split(C, [6, 2], 1)
    halves = g.chunk(C, 2, 0)
    assert [t.dims for t in halves] == [(1, 8), (1, 8)]
    with pytest.raises(yr.InvalidArgumentError, match="cannot be split into 3 equal chunks"):
        g.chunk(C, 3, 0)
    with pytest.raises(ValueError, match="more chunks than any tensor dim"):
        g.chunk(C, 1 << 30, 0)
    g.mark_output(g.neg(right))
    g.mark_output(g.exp(halves[1]))
    out_right, out_half = g.run_reference([a, b])
    c = np.concatenate([a, b], 1)
    np.testing.assert_allclose(out_right, -c[:, 6:])
    np.testing.assert_allclose(out_half, np.exp(c[1:].astype(np.float64)), rtol=1e-6)
    assert left.dims == (2, 6)


def test_views_reshape_permute_transpose():
    x = rand(4, 6)
    g = yr.new_kernel_graph()
    X = g.new_input(x.shape, yr.float32)
    heads = g.permute(g.reshape(X, (4, 2, -1)), [1, 0, 2])
    assert heads.dims == (2, 4, 3)
    g.mark_output(g.exp(heads))
    g.mark_output(g.transpose(X, 0, -1))
    with pytest.raises(yr.InvalidArgumentError, match=r"shape \[5,5\]: it holds more than 24 elements"):
        g.reshape(X, [5, 5])
    with pytest.raises(yr.InvalidArgumentError, match="dim 0 appears twice: not a permutation"):
        g.permute(X, (0, 0))
    with pytest.raises(TypeError, match="dims must be a sequence of ints"):
        g.permute(X, "01")
    want_heads = np.exp(x.reshape(4, 2, 3).transpose(1, 0, 2).astype(np.float64))
    got_heads, got_t = g.run_reference([x])
    np.testing.assert_allclose(got_heads, want_heads, rtol=1e-6)
    np.testing.assert_array_equal(got_t, x.T)
    got_heads, got_t = g(inputs=[x])  # compiled on the CPU plugin
    np.testing.assert_allclose(got_heads, want_heads, rtol=1e-5)
    np.testing.assert_array_equal(got_t, x.T)


def test_strided_readonly_and_dlpack_inputs():
    base, other = rand(5, 4), rand(5, 4)
    other.flags.writeable = False
    # Transposed views (strided, no copy); the read-only one is copied for DLPack export.
    out = run(lambda g, p, q: g.add(p, q), [base.T, other.T])
    np.testing.assert_allclose(out, base.T + other.T, rtol=1e-6)

    class Producer:  # any object with __dlpack__ is accepted
        def __init__(self, array):
            self.array, self.shape = array, array.shape

        def __dlpack__(self, stream=None):
            return self.array.__dlpack__()

    out = run(lambda g, p: g.neg(p), [Producer(base.T)])
    np.testing.assert_allclose(out, -base.T)


def fused_rmsnorm_linear(rows=4, hidden=256, cols=128, tile=64):
    """RMSNorm fused into the matmul as one customized operator, as in Mirage."""
    g = yr.new_kernel_graph()
    X = g.new_input((rows, hidden), yr.float32)
    W = g.new_input((hidden, cols), yr.float32)
    tb = yr.new_threadblock_graph(grid_dim=(cols // tile, 1, 1), block_dim=(128, 1, 1),
                                  forloop_range=hidden // tile)
    tX = tb.new_input(dtensor=X, input_map=(-1, -1, -1), forloop_dim=1)
    tW = tb.new_input(dtensor=W, input_map=(1, -1, -1), forloop_dim=0)
    acc = tb.forloop_accum(tb.matmul(tX, tW))
    rms = tb.forloop_accum(tX, "rms")
    tb.new_output(tb.div(acc, rms), output_map=(1, -1, -1))
    (O,) = g.customized([X, W], tb)
    g.mark_output(O)
    plain = yr.new_kernel_graph()
    pX = plain.new_input((rows, hidden), yr.float32)
    pW = plain.new_input((hidden, cols), yr.float32)
    plain.mark_output(plain.matmul(plain.rms_norm(pX, (hidden,)), pW))
    return g, plain, tb


def test_output_written_as_another_dtype():
    g = yr.new_kernel_graph()
    X = g.new_input((4, 64), yr.float16)
    tb = yr.new_threadblock_graph(grid_dim=(1, 1, 1), block_dim=(128, 1, 1), forloop_range=4)
    acc = tb.forloop_accum(tb.new_input(dtensor=X, input_map=(-1, -1, -1), forloop_dim=1))
    tb.new_output(acc, output_map=(-1, -1, -1), dtype=yr.float32)
    (O,) = g.customized([X], tb)
    assert O.dtype == yr.float32


def test_ugraph_equivalence_and_reference():
    fused, plain, tb = fused_rmsnorm_linear()
    assert tb.shared_memory_bytes > 0
    result = fused.equivalent(plain)
    assert result.equivalent and result.trials == 3 and result.reason == ""
    x, w = rand(4, 256), rand(256, 128)
    np.testing.assert_allclose(fused.run_reference([x, w])[0], plain.run_reference([x, w])[0],
                               rtol=1e-5)
    other = yr.new_kernel_graph()
    oX = other.new_input((4, 256), yr.float32)
    oW = other.new_input((256, 128), yr.float32)
    other.mark_output(other.matmul(oX, oW))
    assert not fused.equivalent(other, trials=2).equivalent


def test_files_and_bytes(tmp_path):
    fused, _, _ = fused_rmsnorm_linear()
    for name in ("g.yrg", "g.json"):
        fused.save(tmp_path / name)
        loaded = yr.load(tmp_path / name)
        assert loaded.to_bytes() == fused.to_bytes()
    assert fused.to_bytes("json").startswith(b"{")
    assert yr.from_bytes(fused.to_bytes("json")).to_bytes() == fused.to_bytes()
    with pytest.raises(yr.CorruptDataError, match="graph file"):
        yr.from_bytes(fused.to_bytes()[:40])
    with pytest.raises(yr.NotFoundError):
        yr.load(tmp_path / "missing.yrg")
    with pytest.raises(ValueError):
        fused.to_bytes("xml")


def test_example_graph_files():
    examples = pathlib.Path(os.environ.get("YIRAGE_EXAMPLES", "examples")) / "graphs"
    plain = yr.load(examples / "ntrans.json")
    fused = yr.load(examples / "ntrans_fused.json")
    assert [t.dims for t in plain.inputs] == [(8, 4096)] * 3
    assert fused.equivalent(plain, trials=1).equivalent


def test_errors():
    g = yr.new_kernel_graph()
    a = g.new_input((16, 4096), yr.float16)
    b = g.new_input((406, 4096), yr.float16)
    with pytest.raises(yr.InvalidArgumentError,
                       match=r"inner dimensions 4096 and 406 differ") as info:
        g.matmul(a, b)
    assert isinstance(info.value, ValueError) and info.value.status == "INVALID_ARGUMENT"
    with pytest.raises(TypeError, match="dtype must be"):
        g.new_input((2, 2), np.float32)
    for dims in (5, "x", "16", (2.0, 2), (2, None)):
        with pytest.raises(TypeError, match="dims must be a sequence of ints"):
            g.new_input(dims, yr.float32)
    with pytest.raises(TypeError, match="X must be a yirage.Tensor"):
        g.exp(np.zeros(3))
    other = yr.new_kernel_graph()
    with pytest.raises(yr.InvalidArgumentError, match="belongs to another graph"):
        other.exp(a)
    e = g.exp(a)
    g.mark_output(e)
    with pytest.raises(yr.InvalidArgumentError, match=r"input 0 has 1 dims; the graph expects 2"):
        g.run_reference([np.zeros(4, np.float16), np.zeros((406, 4096), np.float16)])
    with pytest.raises(TypeError, match="must be a numpy array or support __dlpack__"):
        g.run_reference([[1, 2], None])
    g.release()
    with pytest.raises(yr.InvalidArgumentError, match="released"):
        g.exp(a)
    with pytest.raises(yr.InvalidArgumentError, match="not a live yirage_tensor"):
        other.exp(a)  # its graph is gone
    with pytest.raises(yr.UnsupportedError, match="exp of a value that itself depends on exp"):
        h = yr.new_kernel_graph()
        h.mark_output(h.exp(h.exp(h.new_input((2,), yr.float32))))
        h.equivalent(h)


def test_paths_are_str_pathlike_or_bytes(tmp_path):
    g = yr.new_kernel_graph()
    g.mark_output(g.exp(g.new_input((2,), yr.float32)))
    g.save(tmp_path / "g.json")
    assert yr.load(bytes(tmp_path / "g.json")).num_operators == g.num_operators
    assert yr.load(str(tmp_path / "g.json")).num_operators == g.num_operators
    with pytest.raises(TypeError, match=r"load\(\): path must be a str or os.PathLike, not NoneType"):
        yr.load(None)
    with pytest.raises(ValueError, match="load\\(\\): path contains a NUL byte"):
        yr.load(str(tmp_path / "g.json") + "\0ignored")
    with pytest.raises(TypeError, match=r"save\(\): path must be"):
        g.save(3)
    with pytest.raises(TypeError, match=r"Context\(\): each of plugins must be a str or os.PathLike, not NoneType"):
        yr.Context(plugins=[None])
    with pytest.raises(TypeError, match="plugins must be a list of paths, not one path"):
        yr.Context(plugins="libyirage-backend-cpu.so")
    with pytest.raises(yr.InvalidArgumentError, match="is a directory, not a graph file"):
        yr.load(tmp_path)


def test_targets_and_cost_estimates():
    h100 = yr.target("h100")
    assert h100["compute_units"] == 132 and h100["kind"] == "gpu"
    assert h100["matrix_unit"] == (16, 8, 16)
    assert yr.target("cpu")["kind"] == "cpu"
    with pytest.raises(yr.NotFoundError, match="have: cpu, h100, h200, a100, mi300x"):
        yr.target("tpu")
    examples = pathlib.Path(os.environ.get("YIRAGE_EXAMPLES", "examples")) / "graphs"
    plain, fused = yr.load(examples / "lora.json"), yr.load(examples / "lora_fused.json")
    assert 0 < fused.estimate_cost("h100") < plain.estimate_cost("h100")
    with pytest.raises(yr.UnsupportedError, match="shared memory"):
        yr.load(examples / "qknorm_fused.json").estimate_cost("mi300x")


def test_versions():
    assert yr.version().count(".") == 2
    assert yr.abi_version() == (1, 11)


def test_mirage_sum_todimx_adds_the_slices_of_reduction_dimx():
    # Mirage's forloop_accum(x, "sum_todimx"): over the loop, and each row's last dim folded to
    # reduction_dimx by adding its slices: out[r, j] = sum of x[r, c] over c = j (mod 16).
    g = yr.new_kernel_graph()
    X = g.new_input((4, 256), yr.float32)
    tb = yr.new_threadblock_graph((2, 1, 1), (128, 1, 1), 4, 16)
    tX = tb.new_input(dtensor=X, input_map=(0, -1, -1), forloop_dim=1)
    folded = tb.forloop_accum(tX, "sum_todimx")
    assert folded.dims == (2, 16)
    tb.new_output(folded, output_map=(0, -1, -1))
    (O,) = g.customized([X], tb)
    g.mark_output(O)
    x = rand(4, 256)
    want = x.astype(np.float64).reshape(4, 16, 16).sum(axis=1)
    np.testing.assert_allclose(g.run_reference([x])[0], want, rtol=1e-5)
    np.testing.assert_allclose(g(inputs=[x])[0], want, rtol=1e-5, atol=1e-5)
    odd = yr.new_threadblock_graph((1, 1, 1), (128, 1, 1), 4, 48)
    with pytest.raises(yr.InvalidArgumentError, match=r"forloop_accum\(\): acc='sum_todimx' .* reduction_dimx \(48\)"):
        odd.forloop_accum(odd.new_input(dtensor=X, input_map=(-1, -1, -1), forloop_dim=1), "sum_todimx")


def test_mirage_accumulators_and_threadblock_arguments():
    # Mirage's meanings: forloop_accum(x) keeps x's shape, "sum" / "mean" / "rms" reduce the last
    # dim to 1 over the loop's tiles together; new_threadblock_graph's fourth positional
    # argument is reduction_dimx (shared_memory_limit is keyword-only).
    g = yr.new_kernel_graph()
    X = g.new_input((4, 256), yr.float32)
    tb = yr.new_threadblock_graph((1, 1, 1), (128, 1, 1), 4, 64)
    tX = tb.new_input(dtensor=X, input_map=(-1, -1, -1), forloop_dim=1)
    kept = tb.forloop_accum(tX)
    summed = tb.forloop_accum(tX, "sum")
    assert kept.dims == (4, 64) and summed.dims == (4, 1)
    assert tb.forloop_accum(tX, "reduce_sum").dims == (4, 1)  # yirage's older name
    assert tb.forloop_accum_max(tX).dims == (4, 64)
    assert tb.forloop_accum(tX, "sum_todimx").dims == (4, 64)  # reduction_dimx 64: nothing to fold
    with pytest.raises(ValueError, match="forloop_accum"):
        tb.forloop_accum(tX, "total")
    tb.new_output(summed, output_map=(-1, -1, -1))
    (O,) = g.customized([X], tb)
    g.mark_output(O)
    x = rand(4, 256)
    np.testing.assert_allclose(g.run_reference([x])[0], x.sum(axis=1, keepdims=True), rtol=1e-5)
    with pytest.raises(ValueError, match="reduction_dimx"):
        yr.new_threadblock_graph((1, 1, 1), (128, 1, 1), 4, 0)
    with pytest.raises(TypeError):
        yr.new_threadblock_graph((1, 1, 1), (128, 1, 1), 4, 64, 1024)  # shared_memory_limit=
    assert yr.new_threadblock_graph((1, 1, 1), shared_memory_limit=1024) is not None
