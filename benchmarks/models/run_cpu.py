"""The real-model suite on the CPU backend: for each graph of the suite whose inputs fit a size
limit, `yirage bench` (superoptimize on the CPU plugin, then time the unfused graph and the result
on the same inputs, both checked against the reference executor) beside numpy computing the same
reference in float32 (its OpenBLAS path).

usage: run_cpu.py YIRAGE_CLI WORK_DIR [--budget S] [--max-mb MB] [--only NAME]
Run it through run_cpu.sh, which builds first and sets YIRAGE_BACKEND_PATH.
"""
import argparse
import importlib.util
import json
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import suite  # noqa: E402


def cpu_benchmark():
    """benchmarks/cpu/run.py, loaded by its path: this folder has a run.py of its own."""
    spec = importlib.util.spec_from_file_location("cpu_run", os.path.join(HERE, "..", "cpu", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_numpy(g, repeats=5):
    rng = np.random.default_rng(1)
    inputs = [rng.uniform(-scale, scale, s).astype(np.float32) for s, scale in g["inputs"]]
    ops = suite.NumpyOps()
    g["reference"](ops, *inputs)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        g["reference"](ops, *inputs)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.2f}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cli")
    p.add_argument("work")
    p.add_argument("--budget", type=float, default=10)
    p.add_argument("--max-mb", type=float, default=16, help="skip graphs whose inputs exceed this (MB)")
    p.add_argument("--only")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cpu = cpu_benchmark()
    rows = []
    for name, g in suite.graphs().items():
        size = sum(math.prod(s) for s, _ in g["inputs"]) * 2
        if (args.only and name != args.only) or size > args.max_mb * 1e6:
            continue
        path = os.path.join(args.work, name + ".json")
        with open(path, "w") as f:
            json.dump(g["json"], f)
        unfused, best, desc = cpu.yirage_bench(args.cli, path, args.budget, os.path.join(args.work, "cache"))
        np32 = time_numpy(g)
        rows.append((name, np32, unfused, best, desc))
        print(f"{name}: numpy f32 {ms(np32)} ms, unfused {ms(unfused)} ms, yirage {ms(best)} ms"
              + ("" if best else f"\n  yirage failed: {desc}"), flush=True)
    # `yirage bench` gives no time for a graph whose check failed: "wrong" (its output, e.g. a
    # float16 overflow on the CLI's own inputs, uniform in (-1, 1)); "failed": the bench itself
    # failed (its message is printed above).
    print("\n| graph | numpy f32 (ms) | unfused on the cpu plugin (ms) | yirage (ms) | numpy / yirage | "
          "unfused / yirage |")
    print("|---|---|---|---|---|---|")
    for name, np32, unfused, best, _ in rows:
        ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"  # noqa: E731
        failed = "wrong" if best is not None else "failed"  # the bench ran and its check failed, or it did not run
        shown = lambda t: failed if t is None else ms(t)  # noqa: E731
        print(f"| {name} | {ms(np32)} | {shown(unfused)} | {shown(best)} | {ratio(np32, best)} | "
              f"{ratio(unfused, best)} |")


if __name__ == "__main__":
    sys.exit(main())
