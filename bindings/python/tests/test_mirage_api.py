"""Mirage's Python API as yirage takes it (docs/python.md, "Mirage's API"): the calls a Mirage
program makes, with Mirage's argument order, defaults and meanings, on the CPU plugin."""
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
    with pytest.raises(mi.UnsupportedError, match=r"new_input\(\): Mirage's strides=\(1, 4\)"):
        g.new_input((4, 8), (1, 4), mi.float16)
    Z = g.clamp(g.add(X, Y), min_val=-0.5, max_val=0.5)
    with pytest.raises(mi.UnsupportedError, match=r"mark_output\(\): Mirage's strides"):
        g.mark_output(Z, (1, 4))
    g.mark_output(Z, (8, 1))
    x, y = rand(4, 8), rand(4, 8)
    (got,) = g.run_reference([x, y])
    np.testing.assert_allclose(got, np.clip(x.astype(np.float64) + y, -0.5, 0.5), atol=2e-3)
    tb = mi.new_threadblock_graph((1, 1, 1), (128, 1, 1), 1, 64)
    tX = tb.new_input(X, (-1, -1, -1), -1, True)  # store_in_dmem: accepted, no effect
    tb.new_output(tb.forloop_accum(tX), (-1, -1, -1))
    (C,) = g.customized([X], tb)
    assert C.dims == (4, 8)


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
