"""CPU benchmark (issues #5, #51): for the six benchmark graphs, in float16 and float32, time
yirage's superoptimized kernel (`yirage superoptimize` on the CPU plugin, then `yirage run`) and
the unfused graph on the CPU plugin (same inputs, checked against the reference executor), and
numpy on OpenBLAS, all in one run: first on the machine as it is, then again while other
processes keep cores busy (--load, the "loaded" columns); print the machine's measured memory
bandwidth, the bandwidth floor of each graph (bytes of its inputs and outputs / bandwidth), the
ratios and the load average before and after.

usage: run.py YIRAGE_CLI GRAPH_DIR WORK_DIR [--budget S] [--only NAME] [--repeats N] [--load PROCS]
Run it through run.sh, which builds first and sets YIRAGE_BACKEND_PATH.
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

GRAPHS = ["gqa", "qknorm", "rmsnorm_linear", "lora", "gated_mlp", "ntrans"]
HERE = os.path.dirname(os.path.abspath(__file__))


def models_suite():
    """benchmarks/models/run.py: its reader of a search's log and its rank statistics."""
    spec = importlib.util.spec_from_file_location("models_run", os.path.join(HERE, "..", "models", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def seconds_of(value, unit):
    return float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def superoptimize(cli, graph, best, budget, cache, backend="cpu"):
    """Searches on the backend's device (candidates profiled there) and saves the best graph;
    returns its description and the search's report, or None and the output when it failed."""
    # --remeasure: a cached answer's candidates are profiled again, on the machine as it is now,
    # and their estimates stand beside the measurements.
    out = subprocess.run([cli, "superoptimize", graph, "-o", best, "--budget", str(budget), "--repeats", "20",
                          "--top-k", "4", "--quiet", "--cache", cache, "--remeasure", "--backend", backend],
                         capture_output=True, text=True)
    m = re.search(r"^best: (.*), (measured|not measured)", out.stdout, re.M)
    if out.returncode != 0 or not m:
        return None, out.stdout + out.stderr
    return m.group(1), out.stdout


def yirage_run(cli, graph, reference, repeats, backend="cpu"):
    """`yirage run`'s median (compiled from the warm kernel cache, checked, timed), or None."""
    out = subprocess.run([cli, "run", graph, "--reference", reference, "--repeats", str(repeats),
                          "--backend", backend], capture_output=True, text=True)
    m = re.search(r"median\s+([0-9.]+) (us|ms|s)", out.stdout)
    return seconds_of(*m.groups()) if out.returncode == 0 and m else None


class Load:
    """Other processes keeping `procs` cores busy (a shell loop each), for the "loaded" columns."""

    def __init__(self, procs):
        self.procs = procs
        self.children = []

    def __enter__(self):
        self.children = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(self.procs)]
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        for c in self.children:
            c.kill()
            c.wait()


def openblas_core():
    """The OpenBLAS kernel numpy runs (its core name and config), read from the loaded library."""
    import ctypes
    for line in open("/proc/self/maps"):
        if "openblas" in line.lower() and ".so" in line:
            path = line.split()[-1]
            try:
                lib = ctypes.CDLL(path)
                lib.openblas_get_corename.restype = ctypes.c_char_p
                lib.openblas_get_config.restype = ctypes.c_char_p
                return f"{lib.openblas_get_corename().decode()} ({lib.openblas_get_config().decode().strip()})"
            except (OSError, AttributeError):
                continue
    return "unknown"


def loadavg():
    return open("/proc/loadavg").read().split()[:3]


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
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--load", type=int, default=1,
                   help="busy processes for the loaded columns (0: no loaded columns)")
    p.add_argument("--opencl", action="store_true",
                   help="also search and time each graph on the OpenCL plugin's first device (PoCL)")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    models = models_suite()
    bw, devices = bandwidth(args.cli)
    print(devices.strip())
    np.ones(1) @ np.ones(1)
    print(f"numpy {np.__version__}, BLAS: "
          f"{os.path.realpath('/etc/alternatives/libblas.so.3-x86_64-linux-gnu')}, "
          f"OpenBLAS core {openblas_core()}")
    print(f"memory bandwidth (measured by the CPU plugin, single-thread copy): {bw / 1e9:.1f} GB/s")
    print(f"load average before: {' '.join(loadavg())}\n")
    rows = []
    for name in GRAPHS:
        if args.only and name != args.only:
            continue
        for dtype, np_dtype, fb in [("float16", np.float16, "Float16"),
                                    ("float32", np.float32, "Float32")]:
            src = os.path.join(args.graph_dir, name + ".json")
            graph = os.path.join(args.work, f"{name}_{dtype}.json")
            best = os.path.join(args.work, f"{name}_{dtype}.best.yrg")
            open(graph, "w").write(open(src).read().replace('"Float16"', f'"{fb}"'))
            shapes = graph_inputs(graph)
            desc, log = superoptimize(args.cli, graph, best, args.budget, os.path.join(args.work, "cache"))
            r = {"name": name, "dtype": dtype, "desc": desc or "search failed: " + log.strip()[-300:]}
            # The cost model's ranking against the measurements of the candidates profiled.
            log_path = os.path.join(args.work, f"{name}_{dtype}.search.txt")
            open(log_path, "w").write(log)
            profiled, _ = models.search_log(log_path)
            r["rank"] = (models.spearman([p[0] for p in profiled], [p[1] for p in profiled]), len(profiled))
            # Idle, then with the load: the unfused graph, yirage's best, numpy.
            for column, procs in [("idle", 0)] + ([("loaded", args.load)] if args.load else []):
                with Load(procs):
                    r["unfused " + column] = yirage_run(args.cli, graph, graph, args.repeats)
                    r["yirage " + column] = yirage_run(args.cli, best, graph, args.repeats) if desc else None
                    r["np32 " + column], out_bytes32 = time_numpy(name, shapes, np.float32, 10)
            r["np same"] = r["np32 idle"] if dtype == "float32" else time_numpy(name, shapes, np.float16, 3)[0]
            itemsize = np.dtype(np_dtype).itemsize
            moved = sum(int(np.prod(s)) for s in shapes) * itemsize + out_bytes32 // 4 * itemsize
            r["floor"] = moved / bw
            if args.opencl:
                # The same graph searched and timed through the OpenCL plugin (idle only).
                ocl_best = os.path.join(args.work, f"{name}_{dtype}.opencl.best.yrg")
                ocl_desc, ocl_log = superoptimize(args.cli, graph, ocl_best, args.budget,
                                                  os.path.join(args.work, "cache"), "opencl")
                r["opencl desc"] = ocl_desc or "search failed: " + ocl_log.strip()[-300:]
                open(os.path.join(args.work, f"{name}_{dtype}.opencl.search.txt"), "w").write(ocl_log)
                r["opencl unfused idle"] = yirage_run(args.cli, graph, graph, args.repeats, "opencl")
                r["opencl idle"] = yirage_run(args.cli, ocl_best, graph, args.repeats, "opencl") if ocl_desc else None
            rows.append(r)
            print(f"{name} {dtype}: " + ", ".join(f"{k} {fmt(v)} ms" for k, v in r.items()
                                                  if k not in ("name", "dtype", "desc", "rank", "opencl desc")), flush=True)
    print(f"\nload average after: {' '.join(loadavg())}")
    ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
    print("\nms, medians; warm caches (inputs and weights stay in the host's cache between runs). loaded: "
          f"{args.load} other process(es) busy (a shell loop each) while the same runs are timed.\n")
    print("| graph | dtype | numpy f32 | numpy same dtype | unfused on cpu plugin | yirage | floor "
          "| numpy f32 / yirage | unfused / yirage | yirage / floor "
          "| numpy f32 loaded | unfused loaded | yirage loaded | yirage loaded / idle | numpy f32 loaded / yirage loaded |")
    print("|---" * 15 + "|")
    for r in rows:
        y, yl = r["yirage idle"], r.get("yirage loaded")
        print(f"| {r['name']} | {r['dtype']} | {fmt(r['np32 idle'])} | {fmt(r['np same'])} | {fmt(r['unfused idle'])} "
              f"| {fmt(y)} | {fmt(r['floor'])} | {ratio(r['np32 idle'], y)} | {ratio(r['unfused idle'], y)} "
              f"| {ratio(y, r['floor'])} | {fmt(r.get('np32 loaded'))} | {fmt(r.get('unfused loaded'))} | {fmt(yl)} "
              f"| {ratio(yl, y)} | {ratio(r.get('np32 loaded'), yl)} |")
    if args.opencl:
        print("\nThe OpenCL plugin on the same CPU (PoCL), idle; ms, medians:\n")
        print("| graph | dtype | cpu plugin: yirage | opencl: unfused | opencl: yirage | opencl / cpu plugin |")
        print("|---" * 6 + "|")
        for r in rows:
            print(f"| {r['name']} | {r['dtype']} | {fmt(r['yirage idle'])} | {fmt(r['opencl unfused idle'])} "
                  f"| {fmt(r['opencl idle'])} | {ratio(r['opencl idle'], r['yirage idle'])} |")
    print("\nyirage's kernels:")
    for r in rows:
        print(f"  {r['name']} {r['dtype']}: {r['desc']}")
        if args.opencl:
            print(f"  {r['name']} {r['dtype']} on opencl: {r['opencl desc']}")
    # Spearman's rank correlation of the cost model's estimates and the measured medians over each
    # search's profiled candidates (the input graph included; issue #51's goal: 0.7 or more).
    print("\ncost model: rank correlation (Spearman) of estimate and measurement over the profiled candidates")
    rhos = []
    for r in rows:
        rho, n = r["rank"]
        if rho is not None:
            rhos.append(rho)
        print(f"  {r['name']} {r['dtype']}: " + (f"{rho:+.2f}" if rho is not None else "-") + f" over {n}")
    if rhos:
        print(f"  mean {sum(rhos) / len(rhos):+.2f} over {len(rhos)} searches")


if __name__ == "__main__":
    sys.exit(main())
