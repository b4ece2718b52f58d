"""bench.py's bookkeeping, which CI can check without a GPU: the order of the columns turning from
round to round, and the report pooling processes' samples into its three tables. torch and
triton are stand-ins here (bench.py imports them at the top; nothing below touches them)."""
import json
import os
import subprocess
import sys
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def bench():
    saved = {name: sys.modules.get(name) for name in ("torch", "triton")}
    for name in saved:
        sys.modules[name] = types.ModuleType(name)
    sys.path.insert(0, HERE)
    try:
        import bench as module
        yield module
    finally:
        sys.path.remove(HERE)
        sys.modules.pop("bench", None)
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def test_each_column_takes_each_place_equally_often_in_eight_rounds(bench):
    orders = [bench.rotated(bench.COLUMNS, i) for i in range(8)]
    assert orders[0] == ["yirage", "eager", "compile", "cudagraphs"]
    assert orders[1] == ["eager", "compile", "cudagraphs", "yirage"]
    for column in bench.COLUMNS:
        places = [order.index(column) for order in orders]
        assert sorted(places) == [0, 0, 1, 1, 2, 2, 3, 3]


def measured(bench, first_place_extra, columns=None):
    """Eight rounds of ntrans at b = 8 where every column measures 5 µs (yirage), 60 (eager), 6
    (compile) or 4 (cudagraphs), plus `first_place_extra` in the rounds it is timed first; its
    bytes and FLOPs as bench.py records them."""
    columns = list(columns or bench.COLUMNS)
    base = {"yirage": 5.0, "eager": 60.0, "compile": 6.0, "cudagraphs": 4.0}
    orders = [bench.rotated(columns, i) for i in range(8)]
    do_bench = {c: [] for c in columns}
    for order in orders:
        for place, column in enumerate(order):
            do_bench[column].append([base[column] + (first_place_extra if place == 0 else 0.0)] * 5)
    return {"errors": {"yirage": [2e-4] * 8}, "orders": orders, "do_bench": do_bench,
            "stream": {c: [base[c] / 2] * 8 for c in columns}, "bytes": 4 * 64 * 4096 * 2, "flops": 0}


def run_of(rows, rates=None):
    run = {"device": "stand-in", "torch": "t", "triton": "t", "rounds": 8, "rows": rows}
    if rates:
        run["rates"] = rates
    return run


def table_line(text, table, row):
    """The line of `row` ("| ntrans | 8 |") in the report's `table`-th table (0-based)."""
    tables = [part for part in text.split("\n\n") if part.startswith("| bench |")]
    return next(line for line in tables[table].splitlines() if line.startswith(row))


def test_report_pools_processes_and_splits_by_place(bench, capsys):
    rates = {"copy": 2.0e12, "matmul": 500e12}
    runs = [run_of({"ntrans_b8": measured(bench, 0.9)}, rates),
            run_of({"ntrans_b8": measured(bench, 0.9), "gqa": {"failed": "compile failed: stand-in"}}, rates)]
    bench.report(runs)
    text = capsys.readouterr().out
    assert "2 processes × 8 rounds" in text
    assert "copy rate, 2.00 TB/s" in text
    # A quarter of each column's samples are 0.9 higher: the pooled median is the lower value.
    # The floor: 4 tensors of 64 × 4096 float16 over 2 TB/s, 1.05 µs.
    assert table_line(text, 0, "| ntrans | 8 |").startswith(
        "| ntrans | 8 | 5.0 | 60.0 | 6.0 | 4.0 | 1.0 | 6.0 | 12.00x | 1.20x | 0.80x |")
    assert "| gqa | 1 | (compile failed: stand-in)" in text
    assert table_line(text, 1, "| ntrans | 8 |").startswith("| ntrans | 8 | 2.5 | 30.0 | 3.0 | 2.0 |")
    assert table_line(text, 2, "| ntrans | 8 |") == \
        "| ntrans | 8 | 5.90 / 5.00 / 5.00 / 5.00 | 60.90 / 60.00 / 60.00 / 60.00 | " \
        "6.90 / 6.00 / 6.00 / 6.00 | 4.90 / 4.00 / 4.00 / 4.00 |"


def test_report_of_files_written_before_the_order_turned(bench, capsys):
    old = measured(bench, 0.0)
    del old["orders"]
    bench.report([run_of({"ntrans_b8": old})])
    assert table_line(capsys.readouterr().out, 2, "| ntrans | 8 |") == \
        "| ntrans | 8 | — / — / — / — | — / — / — / — | — / — / — / — | — / — / — / — |"


def test_report_of_files_without_the_cuda_graph_column_or_the_card(bench, capsys):
    old = measured(bench, 0.0, columns=("yirage", "eager", "compile"))
    del old["bytes"], old["flops"]
    bench.report([run_of({"ntrans_b8": old})])
    text = capsys.readouterr().out
    assert "Floors: an H100's" in text
    assert table_line(text, 0, "| ntrans | 8 |").startswith(
        "| ntrans | 8 | 5.0 | 60.0 | 6.0 | — | 0.7 | 5.7 | 12.00x | 1.20x | — |")


def test_report_from_the_command_line(bench, tmp_path):
    samples = tmp_path / "samples.1.json"
    samples.write_text(json.dumps(run_of({"ntrans_b8": measured(bench, 0.5)})))
    stand_ins = tmp_path / "stand_ins"
    for name in ("torch", "triton"):
        (stand_ins / name).mkdir(parents=True)
        (stand_ins / name / "__init__.py").write_text("")
    env = dict(os.environ, PYTHONPATH=str(stand_ins))
    script = os.path.join(HERE, "bench.py")
    done = subprocess.run([sys.executable, script, "--report", str(samples)], env=env,
                          capture_output=True, text=True, check=True)
    assert "| ntrans | 8 | 5.0 |" in done.stdout
    refused = subprocess.run([sys.executable, script, "--report"], env=env, capture_output=True, text=True)
    assert refused.returncode != 0 and "name at least one file" in refused.stderr
