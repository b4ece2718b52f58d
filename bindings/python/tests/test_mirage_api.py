"""Mirage's Python API as yirage takes it (docs/python.md, "Mirage's API"): the calls a Mirage
program makes, with Mirage's argument order, defaults and meanings, on the CPU plugin."""
import os
import shutil

import numpy as np
import pytest

import yirage as mi


def rand(*dims):
    return np.random.default_rng(3).uniform(-1, 1, dims).astype(np.float16)


def rmsnorm_linear():
    g = mi.new_kernel_graph()
    X = g.new_input(dims=(8, 128), dtype=mi.float16)
    W = g.new_input(dims=(128, 96), dtype=mi.float16)
    O = g.matmul(g.rms_norm(X, normalized_shape=(128,)), W)
    g.mark_output(O)
    return g


def test_builder_calls_take_mirages_arguments():
    g = mi.new_kernel_graph()
    X = g.new_input((4, 8), (8, 1), mi.float16)  # Mirage's positional order: dims, strides, dtype
    Y = g.new_input((4, 8), mi.float16)  # yirage's older order still works
    assert X.num_dims == 2 and X.dim(0) == 4 and X.dim(1) == 8 and X.dtype == mi.float16
    with pytest.raises(mi.UnsupportedError, match=r"new_input\(\): Mirage's strides=\(16, 1\) .* gaps"):
        g.new_input((4, 8), (16, 1), mi.float16)
    with pytest.raises(mi.InvalidArgumentError, match=r"new_input\(\): strides=\(1,\) has 1 entries"):
        g.new_input((4, 8), (1,), mi.float16)
    Z = g.clamp(g.add(X, Y), min_val=-0.5, max_val=0.5)
    with pytest.raises(mi.UnsupportedError, match=r"mark_output\(\): Mirage's strides=\(4, 4\)"):
        g.mark_output(Z, (4, 4))
    assert len(g.outputs) == 0
    g.mark_output(Z, (8, 1))
    x, y = rand(4, 8), rand(4, 8)
    (got,) = g.run_reference([x, y])
    np.testing.assert_allclose(got, np.clip(x.astype(np.float64) + y, -0.5, 0.5), atol=2e-3)
    tb = mi.new_threadblock_graph((1, 1, 1), (128, 1, 1), 1, 64)
    tX = tb.new_input(X, (-1, -1, -1), -1, True)  # store_in_dmem: accepted, no effect
    tb.new_output(tb.forloop_accum(tX), (-1, -1, -1))
    (C,) = g.customized([X], tb)
    assert C.dims == (4, 8)


def test_strides_declare_the_layout_of_inputs_and_outputs():
    # Mirage's qwen µGraphs: W column-major (strides (1, k)), passed as a strided view; the
    # output declared column-major comes back in that layout. Values are the logical ones.
    g = mi.new_kernel_graph()
    X = g.new_input(dims=(4, 8), dtype=mi.float32)
    W = g.new_input(dims=(8, 6), strides=(1, 8), dtype=mi.float32)
    g.mark_output(g.matmul(X, W), strides=(1, 4))
    g.mark_output(g.exp(X))
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
    w = rng.uniform(-1, 1, (6, 8)).astype(np.float32).T  # (8, 6), strides (1, 8) elements
    want = x.astype(np.float64) @ w
    for kernel in (g, g.compile()):
        out, e = kernel(inputs=[x, w])
        assert out.strides == (4, 16) and e.flags.c_contiguous  # (1, 4) elements of 4 bytes
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(kernel(inputs=[x, np.ascontiguousarray(w)])[0], want, rtol=1e-5, atol=1e-6)
    given = np.empty((6, 4), np.float32).T
    assert g(inputs=[x, w], outputs=[given, np.empty((4, 8), np.float32)])[0] is given
    np.testing.assert_allclose(given, want, rtol=1e-5, atol=1e-6)


def test_calling_a_graph_runs_it_as_it_is():
    g = rmsnorm_linear()
    x, w = rand(8, 128), rand(128, 96)
    (want,) = g.run_reference([x, w])
    (got,) = g(inputs=[x, w])  # Mirage's graph(inputs=...): compiled for the default device
    assert np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want) < 5e-3
    assert g(inputs=[x, w], num_warp_groups=2, pipeline_stages=2)[0].shape == (8, 96)
    with pytest.raises(TypeError, match="unexpected keyword"):
        g(inputs=[x, w], warps=4)
    # The graph grew: compiled again, with the new output.
    g.mark_output(g.exp(g.inputs[0]))
    assert len(g(inputs=[x, w])) == 2


def test_superoptimize_takes_mirages_keywords():
    g = rmsnorm_linear()
    best = g.superoptimize(config="mlp", griddims=[(2, 1, 1)], franges=[1, 2], verbose=False,
                           warmup_iters=4, profile_iters=3, use_cached_graphs=False,
                           use_graph_dataset=False, save_codes=True, is_formal_verified=True,
                           previous_checkpoint=None, time_budget=10)
    assert best.device.backend == mi.default_device().backend
    assert best.search.candidates and best.search.stats["from_cache"] == 0
    # griddims=[(2, 1, 1)]: the only grid tried.
    grids = [i["description"] for _, i in best.search.candidates if "customized grid" in i["description"]]
    assert grids and all("customized grid 2x1x1" in d for d in grids), grids
    x, w = rand(8, 128), rand(128, 96)
    (want,) = g.run_reference([x, w])
    if best.device.is_host:
        (got,) = best(inputs=[x, w])
    else:  # a GPU: PyTorch tensors in and out
        torch = pytest.importorskip("torch")
        (got,) = best(inputs=[torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()], synchronize=True)
        got = got.cpu().numpy()
    assert np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want) < 5e-3
    for name in ("imaps", "omaps", "fmaps"):
        with pytest.raises(mi.UnsupportedError, match=f"superoptimize\\(\\): Mirage's {name}="):
            g.superoptimize(**{name: [(0, -1, -1)]})
    with pytest.raises(mi.UnsupportedError, match="blockdims"):
        g.superoptimize(blockdims=[(128, 1, 1)])
    with pytest.raises(mi.UnsupportedError, match="backend='triton'"):
        g.superoptimize(backend="triton")
    with pytest.raises(TypeError, match="unexpected keyword"):
        g.superoptimize(budget=3)


def test_module_calls_and_files(tmp_path):
    assert isinstance(mi.__version__, str) and mi.__version__ == mi.version()
    mi.set_gpu_device_id(0)
    with pytest.raises(ValueError, match="set_gpu_device_id"):
        mi.set_gpu_device_id(-1)
    g, same, other = rmsnorm_linear(), rmsnorm_linear(), mi.new_kernel_graph()
    other.mark_output(other.exp(other.new_input((8, 128), dtype=mi.float16)))
    assert g.get_owner_independent_hash() == same.get_owner_independent_hash()
    assert g.get_owner_independent_hash() != other.get_owner_independent_hash()
    path = tmp_path / "g.json"
    g.to_json(str(path))
    other.from_json(str(path))  # replaces `other`, as Mirage's does
    assert other.get_owner_independent_hash() == g.get_owner_independent_hash()
    assert other.num_operators == g.num_operators


def online_softmax(forloop_range):
    """softmax(Q·K)·V as Mirage's group_query_attention_customized writes it: tb.reduction_max's
    (max, diff) and forloop_accum_rescale(X, exp(diff)); also the rows' maximum."""
    g = mi.new_kernel_graph()
    Q = g.new_input((16, 8), dtype=mi.float32)
    K = g.new_input((8, 64), dtype=mi.float32)
    V = g.new_input((64, 8), dtype=mi.float32)
    tb = mi.new_threadblock_graph((2, 1, 1), (128, 1, 1), forloop_range, 64)
    bQ = tb.new_input(Q, (0, -1, -1), -1)
    bK = tb.new_input(K, (-1, -1, -1), 1)
    bV = tb.new_input(V, (-1, -1, -1), 0)
    bA = tb.matmul(bQ, bK)
    bAmax, bDiff = tb.reduction_max(bA, dim=1)
    bEAs = tb.exp(tb.sub(bA, bAmax))
    bEDiff = tb.exp(bDiff)
    bO1 = tb.forloop_accum_rescale(tb.matmul(bEAs, bV), bEDiff)
    bO2 = tb.forloop_accum_rescale(bEAs, bEDiff, "sum")
    tb.new_output(tb.div(bO1, bO2), (0, -1, -1))
    tb.new_output(tb.forloop_accum_max(bAmax), (0, -1, -1))
    O, M = g.customized([Q, K, V], tb)
    g.mark_output(O)
    g.mark_output(M)
    return g


def test_reduction_max_and_rescale_take_mirages_running_maximum():
    rng = np.random.default_rng(7)
    q, k, v = (rng.uniform(-2, 2, dims).astype(np.float32) for dims in ((16, 8), (8, 64), (64, 8)))
    a = q.astype(np.float64) @ k
    e = np.exp(a - a.max(1, keepdims=True))
    for forloop_range in (4, 1):  # in the loop: translated; one iteration: nothing to follow
        out, m = online_softmax(forloop_range).run_reference([q, k, v])
        np.testing.assert_allclose(out, (e / e.sum(1, keepdims=True)) @ v, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(m[:, 0], a.max(1), rtol=1e-6)


def test_running_maximum_uses_that_differ_from_mirage_are_refused():
    g = mi.new_kernel_graph()
    S = g.new_input((16, 64), dtype=mi.float32)
    tb = mi.new_threadblock_graph((1, 1, 1), (128, 1, 1), 4, 64)
    bS = tb.new_input(S, (-1, -1, -1), 1)
    bMax, bDiff = tb.reduction_max(bS, 1)
    bE = tb.exp(tb.sub(bS, bMax))
    # The difference of running maxima has no tile: only exp(diff), only as B of the rescale.
    with pytest.raises(mi.UnsupportedError, match=r"reduction_max\(\)'s diff .*forloop_accum_rescale"):
        tb.add(bS, bDiff)
    with pytest.raises(mi.UnsupportedError, match=r"reduction_max\(\)'s exp\(diff\)"):
        tb.new_output(tb.exp(bDiff), (-1, -1, -1))
    with pytest.raises(mi.UnsupportedError, match=r"forloop_accum_rescale\(\): Mirage's B must be exp\(diff\)"):
        tb.forloop_accum_rescale(bE, bMax)
    with pytest.raises(ValueError, match="acc must be None or 'sum'"):
        tb.forloop_accum_rescale(bE, tb.exp(bDiff), "mean")
    # In the loop, Mirage's maximum is over the iterations so far, yirage's this iteration's.
    with pytest.raises(mi.UnsupportedError, match=r"forloop_accum\(acc=None\): X depends on tb.reduction_max"):
        tb.forloop_accum(bE)
    with pytest.raises(mi.UnsupportedError, match=r"new_output\(\): stensor depends"):
        tb.new_output(bMax, (-1, -1, -1), 1)
    with pytest.raises(mi.UnsupportedError, match="A must be linear in exp"):
        tb.forloop_accum_rescale(tb.exp(bE), tb.exp(bDiff))  # exp(exp(S - max)): not linear
    with pytest.raises(mi.UnsupportedError, match="A must be linear in exp"):
        tb.forloop_accum_rescale(bS, tb.exp(bDiff))  # independent of the maximum
    other_max, other_diff = tb.reduction_max(tb.square(bS), 1)
    with pytest.raises(mi.UnsupportedError, match="A must be linear in exp"):
        tb.forloop_accum_rescale(bE, tb.exp(other_diff))  # another maximum's factor
    # What agrees: the rescale of exp(S - max) and of sums of it, and the maximum's own maximum.
    assert tb.forloop_accum_rescale(tb.mul_scalar(bE, 2.0), tb.exp(bDiff), "sum").dims == (16, 1)
    assert tb.forloop_accum_max(bMax).dims == (16, 1)
    with pytest.raises(mi.UnsupportedError, match="of this graph"):
        mi.new_threadblock_graph((1, 1, 1), (128, 1, 1), 4, 64).forloop_accum_rescale(bE, tb.exp(bDiff))


def test_threadblock_rms_norm_and_maps_of_one_block_as_mirage():
    g = mi.new_kernel_graph()
    X = g.new_input((4, 2, 64), dtype=mi.float32)
    # Axis y has one block: Mirage ignores its map entry (1 here), as yirage now does.
    tb = mi.new_threadblock_graph((4, 1, 1), (128, 1, 1), 1, 64)
    bX = tb.new_input(X, (0, 1, -1), -1)
    bN = tb.rms_norm(bX)  # Mirage's one-argument form: over the last dim, no eps
    tb.new_output(tb.forloop_accum(bN), (0, 2, -1))
    (O,) = g.customized([X], tb)
    g.mark_output(O)
    x = np.random.default_rng(2).uniform(-1, 1, (4, 2, 64)).astype(np.float32)
    (got,) = g.run_reference([x])
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got, x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True)), rtol=1e-5)


def test_mirages_module_helpers():
    assert mi.bypass_compile_errors() is None and mi.bypass_compile_errors(False) is None
    with pytest.raises(TypeError, match="bypass_compile_errors"):
        mi.bypass_compile_errors("yes")
    with pytest.raises(mi.UnsupportedError, match=r"generate_cuda_program\(\)"):
        mi.generate_cuda_program(rmsnorm_linear(), target_cc=90, input_strides=[(128, 1), (96, 1)])

    class TorchLikeDtype:  # what str() of torch.bfloat16 is
        def __str__(self):
            return "torch.bfloat16"
    assert mi.convert_torch_type_to_dtype(TorchLikeDtype()) is mi.bfloat16
    with pytest.raises(mi.UnsupportedError, match="convert_torch_type_to_dtype"):
        mi.convert_torch_type_to_dtype("torch.int8")
    try:
        import torch
    except ImportError:
        with pytest.raises(ImportError):
            mi.convert_dtype_to_torch_type(mi.float16)
    else:
        assert mi.convert_dtype_to_torch_type(mi.bfloat16) is torch.bfloat16
        assert mi.convert_torch_type_to_dtype(torch.float16) is mi.float16
    with pytest.raises(TypeError, match="dtype"):
        mi.convert_dtype_to_torch_type("float16")


def test_bfloat16_device_tensors_in_and_out_of_a_cpu_kernel():
    # numpy has no bfloat16: DeviceTensors on the CPU carry it, and a kernel called on them
    # returns DeviceTensors (Mirage's demo_rms_norm runs so without PyTorch).
    g = mi.new_kernel_graph()
    X = g.new_input((2, 8), dtype=mi.bfloat16)
    g.mark_output(g.mul_scalar(X, 2.0))
    cpu = mi.devices("cpu")[0]
    bits = np.array([[0x3F80, 0x4000, 0xBF80, 0x3E80] * 2] * 2, dtype=np.uint16)  # 1, 2, -1, 0.25
    (out,) = g(inputs=[cpu.empty((2, 8), mi.bfloat16).copy_from(bits)])
    assert isinstance(out, mi.DeviceTensor) and out.dtype is mi.bfloat16
    got = out.copy_to(np.zeros((2, 8), np.uint16))
    assert np.array_equal(got, bits + 0x80)  # each value doubled: the exponent one higher
    with pytest.raises(mi.InvalidArgumentError):
        out.copy_to(np.zeros((2, 4), np.uint16))


def test_compile_takes_mirages_keywords():
    g = rmsnorm_linear()
    x, w = rand(8, 128), rand(128, 96)
    k = g.compile(inputs=[x, w], target_cc=90, num_warp_groups=2, pipeline_stages=2)
    assert k.device.backend == "cpu"  # where the numpy inputs are
    (want,) = g.run_reference([x, w])
    (got,) = k([x, w])
    assert np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want) < 5e-3
    with pytest.raises(mi.UnsupportedError, match=r"compile\(\): Mirage's async_=True"):
        g.compile(async_=True, inputs=[x, w])
    with pytest.raises(TypeError, match="unexpected keyword"):
        g.compile(warps=4)


def test_visualize_draws_the_graph_and_its_mugraphs(tmp_path, monkeypatch, capsys):
    # Mirage's graph.visualize(name): name.dot and name.png, each announced.
    g = rmsnorm_linear()
    dot = g.to_dot()
    assert dot.startswith("digraph") and "rms_norm" in dot
    examples = os.path.abspath(os.environ.get("YIRAGE_EXAMPLES", "examples"))
    fused = mi.load(os.path.join(examples, "graphs", "rmsnorm_linear_fused.json"))
    text = fused.to_dot()
    assert "subgraph cluster_" in text and "imap" in text and "omap" in text
    monkeypatch.chdir(tmp_path)
    if shutil.which("dot") is None:  # CI installs graphviz; say so where it is missing
        with pytest.raises(mi.UnsupportedError, match="Graphviz's `dot`"):
            fused.visualize("fused")
        assert (tmp_path / "fused.dot").read_text() == text
        pytest.skip("Graphviz's dot is not installed: the PNG was not drawn")
    fused.visualize("fused")
    assert (tmp_path / "fused.dot").read_text() == text
    assert (tmp_path / "fused.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Graph saved as fused.png" in capsys.readouterr().out
