"""Backends, devices, the superoptimizer and compiled kernels from Python, on the CPU plugin
(found through YIRAGE_BACKEND_PATH, which meson test sets)."""
import numpy as np
import pytest

import yirage as yr


def small_graph():
    g = yr.new_kernel_graph()
    X = g.new_input(dims=(8, 128), dtype=yr.float16)
    W = g.new_input(dims=(128, 96), dtype=yr.float16)
    g.mark_output(g.matmul(g.rms_norm(X, normalized_shape=(128,)), W))
    return g


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (8, 128)).astype(np.float16),
            rng.uniform(-1, 1, (128, 96)).astype(np.float16)]


def relative_error(got, want):
    want = want.astype(np.float64)
    return np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want)


def test_backends_and_devices():
    names = [b["name"] for b in yr.get_available_backends()]
    assert "cpu" in names
    (cpu,) = yr.devices("cpu")
    assert cpu.backend == "cpu" and cpu.is_host and cpu.name
    t = cpu.info["target"]
    assert t["kind"] == "cpu" and t["compute_units"] >= 1 and t["memory_bandwidth"] > 0
    assert "loop_iteration_seconds" in t
    assert cpu.info["dtypes"] & (1 << yr.float32.value)
    with pytest.raises(yr.NotFoundError, match="no backend named 'nope'"):
        yr.default_context().device("nope")
    with pytest.raises(yr.NotFoundError):
        yr.default_context().device("cpu", 7)
    with pytest.raises(TypeError):
        yr.default_context().device(3)


def test_compile_and_call_checks_against_the_reference():
    g = small_graph()
    k = g.compile(backend="cpu")
    x, w = inputs()
    (out,) = k(inputs=[x, w])
    (want,) = g.run_reference([x, w])
    assert out.dtype == np.float16 and out.shape == (8, 96)
    assert relative_error(out, want) < 5e-3
    # Read-only arrays are accepted (copied for DLPack), and outputs may be given.
    x.flags.writeable = False
    given = np.zeros((8, 96), dtype=np.float16)
    (same,) = k([x, w], outputs=[given])
    assert same is given and relative_error(given, want) < 5e-3
    # A host kernel is done when the call returns, stream and synchronize= or not.
    for options in ({"stream": 0}, {"synchronize": True}):
        given[:] = np.nan
        k([x, w], outputs=[given], **options)
        assert relative_error(given, want) < 5e-3, options
    k.synchronize()


def test_measure_checks_and_times():
    k = small_graph().compile(backend="cpu")
    m = k.measure(repeats=3)
    assert m["correct"] and m["error"] == "" and m["relative_error"] < 5e-3
    assert 0 < m["min_seconds"] <= m["median_seconds"]
    flushed = k.measure(repeats=3, flush_bytes=1 << 20)  # a cache flush before each timed run
    assert flushed["correct"] and flushed["median_seconds"] > 0
    with pytest.raises(yr.InvalidArgumentError, match="flush_bytes"):
        k.measure(flush_bytes=1 << 41)
    with pytest.raises(yr.InvalidArgumentError, match="repeats"):
        k.measure(repeats=0)


def test_describe_says_how_a_run_launches():
    plan = small_graph().compile(backend="cpu").describe()
    assert "a run on cpu device 0:\n  launch 1: operator " in plan, plan


def test_superoptimize_and_run_a_small_graph():
    g = small_graph()
    calls = []
    k = g.superoptimize(backend="cpu", time_budget=20, top_k=2, cache_dir=False,
                        progress=lambda *a: calls.append(a))
    report = k.search
    assert calls and all(len(c) == 3 for c in calls)
    assert report.stats["states"] > 0 and report.stats["seconds"] > 0
    assert report.stats["unbuildable"] == 0  # the CPU backend builds every candidate
    assert report.candidates and report.profiled
    # The kept candidates are measured and correct; the input graph was measured too.
    assert any(r["description"] == "the input graph, unchanged" for r in report.profiled)
    assert all(r["relative_error"] < 5e-3 for r in report.profiled if r["kept"])
    best_graph, info = report.candidates[0]
    assert info["measured_seconds"] > 0
    assert info["measured_samples"] >= 1 and \
        info["measured_min_seconds"] <= info["measured_seconds"] <= info["measured_max_seconds"]
    # The report as text: each measurement with its runs' spread, why a candidate has none, and
    # no -1 sentinel anywhere.
    text = str(report)
    assert " over " in text and " runs" in text
    assert "-1" not in text.replace("e-1", "")
    for _, c in report.candidates:
        assert (c["measured_seconds"] < 0) == bool(c["not_measured"])
        if c["measured_seconds"] < 0:
            assert f"not measured ({c['not_measured']})" in text
    x, w = inputs(1)
    (out,) = k(inputs=[x, w])
    (want,) = g.run_reference([x, w])
    assert relative_error(out, want) < 5e-3
    assert best_graph.equivalent(g).equivalent


def test_searches_are_cached_and_answered_at_once(tmp_path, monkeypatch):
    g = small_graph()
    first = g.superoptimize(backend="cpu", time_budget=20, top_k=2, cache_dir=tmp_path)
    assert not first.search.stats["from_cache"] and first.search.profiled
    # The same request: the cached winner, nothing searched or measured, the same graph.
    for _ in range(3):
        hit = g.superoptimize(backend="cpu", time_budget=20, top_k=2, cache_dir=tmp_path)
        assert hit.search.stats["from_cache"] and not hit.search.profiled
        assert hit.search.candidates[0][0].to_bytes() == first.search.candidates[0][0].to_bytes()
        assert hit.search.candidates[0][1]["measured_seconds"] == \
            first.search.candidates[0][1]["measured_seconds"]
    again = g.superoptimize(backend="cpu", time_budget=20, top_k=2, cache_dir=tmp_path,
                            remeasure=True)
    assert again.search.profiled
    x, w = inputs(2)
    (want,) = g.run_reference([x, w])
    assert relative_error(hit([x, w])[0], want) < 5e-3
    # The default folder: $YIRAGE_SEARCH_CACHE, else $XDG_CACHE_HOME/yirage/search; "off": none.
    monkeypatch.setenv("YIRAGE_SEARCH_CACHE", str(tmp_path / "chosen"))
    assert yr.search_cache_dir() == str(tmp_path / "chosen")
    g.superoptimize(backend="cpu", time_budget=20, top_k=2)
    assert any((tmp_path / "chosen").glob("*.yrsc"))
    assert g.superoptimize(backend="cpu", time_budget=20, top_k=2).search.stats["from_cache"]
    monkeypatch.setenv("YIRAGE_SEARCH_CACHE", "off")
    assert yr.search_cache_dir() is None
    assert not g.superoptimize(backend="cpu", time_budget=20, top_k=2).search.stats["from_cache"]
    monkeypatch.delenv("YIRAGE_SEARCH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert yr.search_cache_dir() == str(tmp_path / "xdg" / "yirage" / "search")


def test_kernel_errors():
    g = small_graph()
    k = g.compile(backend="cpu")
    x, w = inputs()
    with pytest.raises(yr.InvalidArgumentError):
        k([x])  # one input short
    with pytest.raises(yr.InvalidArgumentError):
        k([w, x])  # shapes swapped
    with pytest.raises(yr.InvalidArgumentError):
        k([x.astype(np.float32), w])  # wrong dtype
    with pytest.raises(TypeError, match="input 1 must be a numpy array"):
        k([x, "w"])
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        k(3)
    with pytest.raises(TypeError, match="output 0 must support __dlpack__"):
        k([x, w], outputs=[[0.0]])
    with pytest.raises(TypeError, match="progress must be callable"):
        g.superoptimize(backend="cpu", time_budget=1, progress=3)
    g.release()
    with pytest.raises(yr.InvalidArgumentError):
        g.compile(backend="cpu")
    # A kernel keeps its own copy of the graph: it still runs after the graph is released.
    (out,) = k([x, w])
    assert out.shape == (8, 96)


def test_superoptimize_says_why_nothing_was_correct():
    # exp(4096·x) overflows float16 (its largest is 65504) even for x near 1/64, the narrowest
    # inputs the check tries: the graph itself cannot match the float64 reference on any
    # backend, and a search too short to verify a candidate has nothing else to offer. The
    # error says so rather than only "no correct candidate".
    g = yr.new_kernel_graph()
    x = g.new_input(dims=(4, 64), dtype=yr.float16)
    g.mark_output(g.exp(g.mul_scalar(x, 4096.0)))
    with pytest.raises(yr.NotFoundError, match=r"the input graph, unchanged: .*overflows float16"):
        g.superoptimize(backend="cpu", time_budget=0.001)


def test_objects_collected_at_interpreter_exit_are_released_quietly(tmp_path):
    # A module imported before yirage and alive until the interpreter clears module globals (as a
    # framework's registry is) holds yirage objects: they are collected after Python cleared the
    # SWIG proxy module's globals, and their release must not go through it (#57).
    import subprocess
    import sys
    (tmp_path / "holder.py").write_text("objects = []\n")
    (tmp_path / "main.py").write_text(
        "import sys\n"
        "import holder\n"
        "import numpy as np\n"
        "import yirage as yr\n"
        "sys.holder = holder\n"
        "context = yr.Context()\n"
        "cpu = context.device('cpu')\n"
        "g = yr.new_kernel_graph()\n"
        "g.mark_output(g.exp(g.new_input(dims=(4, 8), dtype=yr.float32)))\n"
        "tb = yr.new_threadblock_graph(grid_dim=(1, 1, 1), block_dim=(128, 1, 1), forloop_range=1)\n"
        "holder.objects += [context, g, tb, g.compile(device=cpu),\n"
        "                   cpu.tensor(np.ones((4, 8), np.float32))]\n"
        "print('done')\n")
    run = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and run.stdout == "done\n", run.stderr
    assert run.stderr == ""
