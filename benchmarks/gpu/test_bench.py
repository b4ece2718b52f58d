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


def test_each_column_takes_each_place_equally_often_in_six_rounds(bench):
    orders = [bench.rotated(bench.COLUMNS, i) for i in range(6)]
    assert orders[0] == ["yirage", "eager", "compile"]
    assert orders[1] == ["eager", "compile", "yirage"]
    for column in bench.COLUMNS:
        places = [order.index(column) for order in orders]
        assert sorted(places) == [0, 0, 1, 1, 2, 2]


def measured(bench, first_place_extra):
    """Six rounds of ntrans at b = 8 where every column measures 5 µs (yirage), 60 (eager) or 6
    (compile), plus `first_place_extra` in the rounds it is timed first."""
    base = {"yirage": 5.0, "eager": 60.0, "compile": 6.0}
    orders = [bench.rotated(bench.COLUMNS, i) for i in range(6)]
    do_bench = {c: [] for c in bench.COLUMNS}
    for order in orders:
        for place, column in enumerate(order):
            do_bench[column].append([base[column] + (first_place_extra if place == 0 else 0.0)] * 5)
    return {"errors": {"yirage": [2e-4] * 6}, "orders": orders, "do_bench": do_bench,
            "stream": {c: [base[c] / 2] * 6 for c in bench.COLUMNS}}


def run_of(rows):
    return {"device": "stand-in", "torch": "t", "triton": "t", "rounds": 6, "rows": rows}


def table_line(text, table, row):
    """The line of `row` ("| ntrans | 8 |") in the report's `table`-th table (0-based)."""
    tables = [part for part in text.split("\n\n") if part.startswith("| bench |")]
    return next(line for line in tables[table].splitlines() if line.startswith(row))


def test_report_pools_processes_and_splits_by_place(bench, capsys):
    runs = [run_of({"ntrans_b8": measured(bench, 0.9)}),
            run_of({"ntrans_b8": measured(bench, 0.9), "gqa": {"failed": "compile failed: stand-in"}})]
    bench.report(runs)
    text = capsys.readouterr().out
    assert "2 processes × 6 rounds" in text
    # A third of each column's samples are 0.9 higher: the pooled median is the lower value.
    assert table_line(text, 0, "| ntrans | 8 |").startswith("| ntrans | 8 | 5.0 | 60.0 | 6.0 | 0.7 | 5.7 |")
    assert "| gqa | 1 | (compile failed: stand-in)" in text
    assert table_line(text, 1, "| ntrans | 8 |").startswith("| ntrans | 8 | 2.5 | 30.0 | 3.0 |")
    assert table_line(text, 2, "| ntrans | 8 |") == \
        "| ntrans | 8 | 5.90 / 5.00 / 5.00 | 60.90 / 60.00 / 60.00 | 6.90 / 6.00 / 6.00 |"


def test_report_of_files_written_before_the_order_turned(bench, capsys):
    old = measured(bench, 0.0)
    del old["orders"]
    bench.report([run_of({"ntrans_b8": old})])
    assert table_line(capsys.readouterr().out, 2, "| ntrans | 8 |") == \
        "| ntrans | 8 | — / — / — | — / — / — | — / — / — |"


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
