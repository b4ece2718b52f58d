"""CPU benchmark (issue #5): for the six benchmark graphs, in float16 and float32, time
yirage's superoptimized kernel and the unfused graph on the CPU plugin (both through
`yirage bench`, same inputs, checked against the reference executor), and numpy on OpenBLAS,
all in one run; print the machine's measured memory bandwidth, the bandwidth floor of each
graph (bytes of its inputs and outputs / bandwidth) and the ratios.

usage: run.py YIRAGE_CLI GRAPH_DIR WORK_DIR [--budget S] [--only NAME]
Run it through run.sh, which builds first and sets YIRAGE_BACKEND_PATH.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

GRAPHS = ["gqa", "qknorm", "rmsnorm_linear", "lora", "gated_mlp", "ntrans"]


def rms_norm(x):
    x32 = x.astype(np.float32)
    return (x32 / np.sqrt((x32 * x32).mean(axis=-1, keepdims=True))).astype(x.dtype)


def attention(q, k, v, normalize):
    if normalize:
        q = rms_norm(q)
    e = np.exp(q @ k)
    return (e / e.sum(axis=2, keepdims=True)) @ v


def numpy_graph(name, inputs):
    if name == "gqa":
        return attention(*inputs, normalize=False)
    if name == "qknorm":
        return attention(*inputs, normalize=True)
    if name == "rmsnorm_linear":
        x, w = inputs
        return rms_norm(x) @ w
    if name == "lora":
        x, w, a, b = inputs
        return x @ w + (x @ a) @ b
    if name == "gated_mlp":
        x, w1, w2 = inputs
        h1 = x @ w1
        return h1 / (1 + np.exp(-h1)) * (x @ w2)
    if name == "ntrans":
        h, x, alpha = inputs
        return rms_norm(x + alpha * (rms_norm(h) - x))
    raise ValueError(name)


def graph_inputs(path):
    """Input shapes of a yirage JSON graph file."""
    graph = json.load(open(path))
    return [op["sizes"] for op in graph["operators"] if op["kind"] == "Input"]


def time_numpy(name, shapes, dtype, repeats):
    rng = np.random.default_rng(1)
    inputs = [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]
    out = numpy_graph(name, inputs)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        numpy_graph(name, inputs)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2], out.nbytes


def yirage_bench(cli, graph, budget, cache):
    out = subprocess.run([cli, "bench", graph, "--budget", str(budget), "--repeats", "20",
                          "--top-k", "4", "--quiet", "--cache", cache],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None, None, out.stdout + out.stderr

    def median(label):
        m = re.search(label + r"\s+([0-9.]+) (us|ms|s)", out.stdout)
        if not m:
            return None
        return float(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]

    best = re.search(r"best: (.*), measured", out.stdout)
    return median("original"), median("superoptimized"), best.group(1) if best else ""


def bandwidth(cli):
    out = subprocess.run([cli, "devices"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"at ([0-9.]+) GB/s", out)
    return float(m.group(1)) * 1e9, out


def fmt(seconds):
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:.3f}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cli")
    p.add_argument("graph_dir")
    p.add_argument("work")
    p.add_argument("--budget", type=float, default=30)
    p.add_argument("--only")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    bw, devices = bandwidth(args.cli)
    print(devices.strip())
    print(f"numpy {np.__version__}, BLAS: "
          f"{os.path.realpath('/etc/alternatives/libblas.so.3-x86_64-linux-gnu')}")
    print(f"memory bandwidth (measured by the CPU plugin, single-thread copy): {bw / 1e9:.1f} GB/s\n")
    rows = []
    for name in GRAPHS:
        if args.only and name != args.only:
            continue
        for dtype, np_dtype, fb in [("float16", np.float16, "Float16"),
                                    ("float32", np.float32, "Float32")]:
            src = os.path.join(args.graph_dir, name + ".json")
            graph = os.path.join(args.work, f"{name}_{dtype}.json")
            open(graph, "w").write(open(src).read().replace('"Float16"', f'"{fb}"'))
            shapes = graph_inputs(graph)
            unfused, best, desc = yirage_bench(args.cli, graph, args.budget,
                                               os.path.join(args.work, "cache"))
            np32, out_bytes32 = time_numpy(name, shapes, np.float32, 10)
            np_same = np32 if dtype == "float32" else time_numpy(name, shapes, np.float16, 3)[0]
            itemsize = np.dtype(np_dtype).itemsize
            moved = sum(int(np.prod(s)) for s in shapes) * itemsize + out_bytes32 // 4 * itemsize
            floor = moved / bw
            rows.append((name, dtype, np32, np_same, unfused, best, floor, desc))
            print(f"{name} {dtype}: numpy32 {fmt(np32)} ms, numpy {dtype} {fmt(np_same)} ms, "
                  f"unfused {fmt(unfused)} ms, yirage {fmt(best)} ms, floor {fmt(floor)} ms"
                  + ("" if best else f"\n  yirage failed: {desc}"), flush=True)
    print("\n| graph | dtype | numpy f32 (ms) | numpy same dtype (ms) | unfused on cpu plugin (ms) "
          "| yirage (ms) | floor (ms) | numpy f32 / yirage | unfused / yirage | yirage / floor |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, dtype, np32, np_same, unfused, best, floor, desc in rows:
        ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
        print(f"| {name} | {dtype} | {fmt(np32)} | {fmt(np_same)} | {fmt(unfused)} | {fmt(best)} "
              f"| {fmt(floor)} | {ratio(np32, best)} | {ratio(unfused, best)} | {ratio(best, floor)} |")
    print("\nyirage's kernels:")
    for name, dtype, *_, desc in rows:
        print(f"  {name} {dtype}: {desc}")


if __name__ == "__main__":
    sys.exit(main())
