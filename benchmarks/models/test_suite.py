"""The real-model suite without a GPU: every graph of it is one yirage loads (the CLI's `show`
builds it through the same validating builders as the C API), its sizes are the configs', and
run.py's bookkeeping (the cost model's rank statistics, the search log's parsing) holds.
Environment: YIRAGE_CLI, the `yirage` command."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run  # noqa: E402
import suite  # noqa: E402


def test_the_suite_spans_six_families_24_graphs_both_dtypes_decode_and_prefill():
    graphs = suite.graphs()
    assert len(graphs) >= 24
    families = {g["model"].split("_")[0].rstrip("0123456789.") for g in graphs.values()}
    assert len(families) >= 6, families
    assert {g["dtype"] for g in graphs.values()} == {"f16", "bf16"}
    assert min(g["tokens"] for g in graphs.values()) == 1 and max(g["tokens"] for g in graphs.values()) >= 256
    caches = {g["piece"] for g in graphs.values() if g["piece"].startswith("attn_L")}
    assert caches == {"attn_L512", "attn_L4096", "attn_L32768"}


def test_sizes_are_the_configs_own():
    g = suite.graphs()["qwen2.5_7b.qkv.t1.bf16"]
    assert [s for s, _ in g["inputs"]] == [[1, 3584], [3584], [3584, (28 + 2 * 4) * 128]]
    g = suite.graphs()["gemma2_2b.attn_L4096.t1.bf16"]
    assert [s for s, _ in g["inputs"]] == [[4, 2, 256], [4, 256, 4096], [4, 4096, 256]]


def test_every_graph_loads(tmp_path):
    assert suite.main(["suite.py", "export", str(tmp_path)]) == 0
    names = sorted(os.listdir(tmp_path))
    assert len(names) == len(suite.graphs())
    for name in names:
        out = subprocess.run([os.environ["YIRAGE_CLI"], "show", str(tmp_path / name)], capture_output=True, text=True)
        assert out.returncode == 0, f"{name}: {out.stderr}"
        assert len(json.load(open(tmp_path / name))["operators"]) >= 4


def test_rank_statistics():
    assert run.ranks([3.0, 1.0, 2.0, 1.0]) == [4.0, 1.5, 3.0, 1.5]
    assert run.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert run.spearman([1, 2, 3, 4], [40, 30, 20, 10]) == -1.0
    assert run.spearman([1, 2], [1, 2]) is None


def test_search_log_keeps_correct_candidates_with_their_estimates(tmp_path):
    log = tmp_path / "g.search.txt"
    log.write_text("search: 1.0 s\n\n  #       estimate     measured  spread of the timed runs"
                   "          rel.error     result  description\n"
                   "  0        15.0 us      31.2 us  30.1 us to 70.0 us over 10 runs  2.4e-03       ok      "
                   "customized grid 16x1x1 loop 16\n"
                   "  1        98.4 us    not timed                                    inf           DROP    "
                   "customized grid 8x1x1 loop 2\n"
                   "        dropped: relative error inf\n"
                   "  2        1.20 ms      12.6 us  12.1 us to 13.0 us over 10 runs  2.4e-03       ok      "
                   "the input graph, unchanged\n\n"
                   "best: the input graph, unchanged, measured 12.6 us (12.1 us to 13.0 us over 10 runs)\n")
    rows, best = run.search_log(str(log))
    assert [r[2] for r in rows] == ["customized grid 16x1x1 loop 16", "the input graph, unchanged"]
    assert [r[:2] for r in rows] == [pytest.approx((15e-6, 31.2e-6)), pytest.approx((1.2e-3, 12.6e-6))]
    assert best == "the input graph, unchanged"
