"""Random graphs (random_graphs.py) superoptimized on the CPU backend and run: each output within
its dtype's tolerance of the float64 reference. A few seeds here; longer sweeps by hand
(docs/reliability.md, "Graphs no one wrote by hand")."""

import pytest

import random_graphs


@pytest.mark.parametrize("seed", [0, 2])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_random_graph_superoptimized_matches_the_reference(seed, dtype):
    errors, description, graph, own = random_graphs.check(seed, dtype, "cpu", budget=2.0)
    assert errors and all(e <= random_graphs.DTYPES[dtype][2] for e in errors), (description, graph.ops)
    assert own is None


# Seed 284's float16 graph subtracts nearly equal values, then takes exp: storing its tensors in
# float16 alone moves its output by about 2%, past float16's tolerance, so any backend's unfused
# kernels miss it. The kernel's own check (docs/backends.md) allows twice that and passes it.
def test_a_graph_float16_storage_moves_passes_its_own_check():
    errors, description, graph, own = random_graphs.check(284, "float16", "cpu", budget=2.0)
    assert max(errors) > random_graphs.DTYPES["float16"][2], (errors, description)
    assert own is not None and own["correct"], (own, description, graph.ops)


# `write`'s files (for the CLI on any backend): one graph a seed, the same in every dtype.
def test_a_seed_is_one_graph_in_every_dtype(tmp_path):
    shapes = set()
    for dtype in random_graphs.DTYPES:
        graph = random_graphs.RandomGraph(5, dtype)
        path = tmp_path / f"{dtype}.yrg"
        graph.graph.save(str(path))
        loaded = random_graphs.yr.load(str(path))
        assert loaded.num_operators == graph.graph.num_operators
        assert all(t.dtype.name == dtype for t in loaded.inputs)
        shapes.add((tuple(graph.input_dims), tuple(graph.ops)))
    assert len(shapes) == 1
