"""Searches in shards from Python (yirage.SearchPlan, docs/python.md "Searches in shards"): the
RMSNorm + linear benchmark graph searched for the built-in "h100" target (no device, nothing
measured) in shards whose partial results travel as bytes, merged, and compared with the
one-process search candidate by candidate; foreign and malformed partial results; a real pool of
worker processes that rebuild the plan themselves; a merged search compiled on the CPU plugin;
and examples/python/sharded_search.py, which does the same as a Ray or Dask user would."""
import concurrent.futures
import multiprocessing
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

import yirage as yr

# The plan's options; every process that plans with them gets the same units.
OPTIONS = {"min_units": 12, "target": "h100", "threads": 2, "time_budget": 300}


def rmsnorm_linear(rows=2, hidden=4096, cols=6144):
    """The rmsnorm_linear benchmark graph (examples/graphs/rmsnorm_linear.json)."""
    g = yr.new_kernel_graph()
    X = g.new_input(dims=(rows, hidden), dtype=yr.float16)
    W = g.new_input(dims=(hidden, cols), dtype=yr.float16)
    g.mark_output(g.matmul(g.rms_norm(X, normalized_shape=(hidden,)), W))
    return g


def run_shard(graph_bytes, options, units):
    """A worker: rebuilds the graph and the plan, runs its units, returns the partial result."""
    plan = yr.SearchPlan(yr.from_bytes(graph_bytes), **options)
    return plan.run_units(units)


def answer(report):
    """A search's answer, comparable across processes: each candidate's bytes, estimate and
    description, best first."""
    return [(g.to_bytes(), info["estimated_seconds"], info["description"]) for g, info in report.candidates]


@pytest.fixture(scope="module")
def whole():
    """The one-process search's answer."""
    report = rmsnorm_linear().search(target="h100", threads=2, time_budget=300)
    assert not report.timed_out and report.candidates
    return answer(report)


def test_shards_merge_into_the_one_process_answer(whole):
    g = rmsnorm_linear()
    options = dict(OPTIONS)
    min_units = options.pop("min_units")
    runner, gatherer = yr.SearchPlan(g, min_units, **options), yr.SearchPlan(g, min_units, **options)
    n = runner.num_units
    assert n >= 2 and len(runner) == n
    assert len(runner.id) == 32 and int(runner.id, 16) >= 0 and runner.id == gatherer.id
    partials = [runner.run_units(range(s, n, 3)) for s in range(3)]
    assert all(isinstance(p, bytes) for p in partials)

    # Before every unit is in, the merge is incomplete.
    assert gatherer.add_partial(partials[0]) >= 1
    assert gatherer.unit_done(0) and not gatherer.unit_done(1)
    assert gatherer.missing_units() == [u for u in range(n) if u % 3 != 0]
    assert gatherer.merge().timed_out

    added = [gatherer.add_partial(p) for p in partials]
    assert added[0] == 0 and all(a >= 1 for a in added[1:])  # a unit added twice counts once
    assert sum(added) + len(range(0, n, 3)) == n and gatherer.missing_units() == []
    merged = gatherer.merge()
    assert not merged.timed_out
    assert answer(merged) == whole


def test_foreign_and_malformed_partials_are_refused():
    g = rmsnorm_linear()
    plan = yr.SearchPlan(g, **OPTIONS)
    partial = plan.run_units([0, 1])
    other = yr.SearchPlan(rmsnorm_linear(cols=4096), **OPTIONS)
    assert other.id != plan.id
    with pytest.raises(yr.InvalidArgumentError, match="another plan"):
        other.add_partial(partial)
    with pytest.raises(yr.CorruptDataError):
        plan.add_partial(partial[: len(partial) // 2])
    with pytest.raises(yr.CorruptDataError):
        plan.add_partial(b"YRSC")
    assert plan.missing_units() == list(range(plan.num_units))  # unchanged
    assert other.missing_units() == list(range(other.num_units))
    assert plan.add_partial(bytearray(partial)) == 2  # any bytes-like object

    with pytest.raises(yr.InvalidArgumentError, match="of a plan of"):
        plan.run_units([plan.num_units])
    with pytest.raises(yr.InvalidArgumentError):
        plan.run_units([-1])
    with pytest.raises(yr.InvalidArgumentError, match="of a plan of"):
        plan.unit_done(plan.num_units)
    with pytest.raises(yr.InvalidArgumentError, match="min_units"):
        yr.SearchPlan(g, 0, target="h100")
    with pytest.raises(yr.NotFoundError):
        yr.SearchPlan(g, 4, target="no such target")
    with pytest.raises(TypeError, match="not pickled"):
        pickle.dumps(plan)
    plan.release()
    with pytest.raises(yr.InvalidArgumentError, match="released"):
        plan.num_units


def test_a_timed_out_run_returns_the_units_that_finished():
    g = rmsnorm_linear()
    hurried = yr.SearchPlan(g, **dict(OPTIONS, time_budget=0.05))  # planning takes well under it
    partial = hurried.run_units(range(hurried.num_units))  # does not raise
    gatherer = yr.SearchPlan(g, **OPTIONS)
    assert gatherer.id == hurried.id  # the budget does not change the units
    finished = gatherer.add_partial(partial)
    assert finished == gatherer.num_units - len(gatherer.missing_units())


def test_worker_processes_rebuild_the_plan(whole):
    graph_bytes = rmsnorm_linear().to_bytes()
    gatherer = yr.SearchPlan(yr.from_bytes(graph_bytes), **OPTIONS)
    n = gatherer.num_units
    shards = [list(range(0, n, 2)), list(range(1, n, 2))]
    # spawn: fresh interpreters, as Ray or Dask workers are (and no fork of a threaded process).
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        partials = list(pool.map(run_shard, [graph_bytes] * 2, [OPTIONS] * 2, shards))
    assert sum(gatherer.add_partial(p) for p in partials) == n
    assert answer(gatherer.merge()) == whole


def test_a_merged_search_compiles_like_superoptimize():
    g = rmsnorm_linear(8, 128, 96)
    plan = yr.SearchPlan(g, 4, backend="cpu", threads=2, time_budget=60)
    plan.add_partial(plan.run_units(range(plan.num_units)))
    kernel = plan.kernel()
    assert isinstance(kernel, yr.Kernel) and kernel.search.candidates and not kernel.search.timed_out
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (8, 128)).astype(np.float16)
    w = rng.uniform(-1, 1, (128, 96)).astype(np.float16)
    (want,) = g.run_reference([x, w])
    (got,) = kernel(inputs=[x, w])
    error = np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want.astype(np.float64))
    assert error < 5e-3


def test_the_example_runs():
    example = pathlib.Path(os.environ.get("YIRAGE_EXAMPLES", "examples")) / "python" / "sharded_search.py"
    run = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "same answer: True" in run.stdout
