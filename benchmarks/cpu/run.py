"""CPU benchmark (issues #5, #51): for the six benchmark graphs and three everyday ones
(benchmarks/cpu/graphs: an elementwise chain, a row softmax, a SwiGLU MLP), in float16 and
float32, time yirage's superoptimized kernel (`yirage superoptimize` on the CPU plugin, then
`yirage run`) and the unfused graph on the CPU plugin (same inputs, checked against the reference
executor), and numpy on OpenBLAS, all in one run: warm (inputs and weights left in the caches by
the run before) and cold (the caches flushed before each timed run), then again while other
processes keep cores busy (--load, the "loaded" columns). It prints the machine's measured memory
bandwidth and float32 matmul peak, each graph's bandwidth floor (bytes of its inputs and outputs
/ bandwidth), issue #51's goal per row (met or missed, by how much), the ratios and the load
average before and after.

usage: run.py YIRAGE_CLI GRAPH_DIR WORK_DIR [--budget S] [--only NAME] [--repeats N] [--load PROCS] [--opencl]
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
# Everyday graphs of this benchmark's own, in benchmarks/cpu/graphs (examples/graphs is what
# benchmarks/graphs/export_graphs writes).
EXTRA_GRAPHS = ["elementwise", "softmax", "swiglu_mlp"]
# Compute-bound at these sizes: their goal is 2x the time of their matmuls' FLOPs at the measured
# matmul peak; every other graph's is 1.5x its bandwidth floor.
ATTENTION = ("gqa", "qknorm")
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
    if name == "elementwise":
        x, y, z = inputs
        u = x * y + z
        return u / (1 + np.exp(-u))
    if name == "softmax":
        (x,) = inputs
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if name == "swiglu_mlp":
        x, wg, wu, wd = inputs
        g = x @ wg
        return (g / (1 + np.exp(-g)) * (x @ wu)) @ wd
    raise ValueError(name)


def attention_flops(shapes):
    """The multiply-adds of attention's two products (Q·K, then P·V), as FLOPs: q is [b, m, d]
    and k [b, d, n]."""
    (b, m, d), (_, _, n) = shapes[0], shapes[1]
    return 2 * (2 * b * m * n * d)


def matmul_peak():
    """numpy/OpenBLAS's float32 rate on a 2048 x 2048 x 2048 product, best of 5 (FLOP/s)."""
    rng = np.random.default_rng(1)
    n = 2048
    a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    a @ b
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best


def graph_inputs(path):
    """Input shapes of a yirage JSON graph file."""
    graph = json.load(open(path))
    return [op["sizes"] for op in graph["operators"] if op["kind"] == "Input"]


def time_numpy(name, shapes, dtype, repeats, flush=None):
    """numpy's median; with `flush` (a buffer), the buffer is written before each timed run,
    untimed, so that the run starts with the inputs out of the caches (as `yirage run --cold`)."""
    rng = np.random.default_rng(1)
    inputs = [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]
    out = numpy_graph(name, inputs)
    times = []
    for i in range(repeats):
        if flush is not None:
            flush.fill(i)
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


def yirage_run(cli, graph, reference, repeats, backend="cpu", cold=False):
    """`yirage run`'s median (compiled from the warm kernel cache, checked, timed), or None;
    cold: `--cold`, the device's last-level cache flushed before each timed run."""
    out = subprocess.run([cli, "run", graph, "--reference", reference, "--repeats", str(repeats),
                          "--backend", backend] + (["--cold"] if cold else []), capture_output=True, text=True)
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
    """The CPU plugin's measured bandwidth (bytes/s), its cache size as it reports it ("L2": the
    host's last-level cache, what `yirage run --cold` flushes) and `yirage devices`' text."""
    out = subprocess.run([cli, "devices"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"at ([0-9.]+) GB/s", out)
    l2 = re.search(r"L2 ([0-9]+) KiB", out)
    return float(m.group(1)) * 1e9, int(l2.group(1)) * 1024, out


def tuned_coretype():
    """The OpenBLAS kernel for this host's ISA, to force where OpenBLAS 0.3.21's DYNAMIC_ARCH
    does not know the processor and falls back to Prescott's SSE3 kernel; None without AVX2."""
    flags = next((line.split() for line in open("/proc/cpuinfo") if line.startswith("flags")), [])
    return "SkylakeX" if "avx512f" in flags else "Haswell" if "avx2" in flags else None


def in_process(env, task):
    """A `worker` task in a Python process of its own: OpenBLAS reads OPENBLAS_CORETYPE once,
    when it loads."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", json.dumps(task)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def worker(task):
    if task["what"] == "peak":
        rate = matmul_peak()
        return {"peak": rate, "core": openblas_core()}
    shapes, flush = task["shapes"], np.empty(task["flush"] // 4, np.float32)
    return [time_numpy(task["name"], shapes, np.float32, 10)[0],
            time_numpy(task["name"], shapes, np.float32, 10, flush)[0]]


def goal(r, limit, kind, tuned):
    """Issue #51's goal for a row: yirage at least as fast as numpy f32 (as it runs, and with
    OpenBLAS's kernel for the ISA forced), and within `limit` (the bound's allowance), warm and
    cold; "met", or what missed and by how much (yirage / allowed)."""
    checks = [("numpy f32 warm", r["yirage idle"], r["np32 idle"]),
              ("numpy f32 cold", r["yirage cold"], r["np32 cold"])]
    if tuned:
        checks += [(f"numpy {tuned} warm", r["yirage idle"], r["np32t idle"]),
                   (f"numpy {tuned} cold", r["yirage cold"], r["np32t cold"])]
    checks += [(kind + " warm", r["yirage idle"], limit),
               (kind + " cold", r["yirage cold"], limit)]
    if any(y is None for _, y, _ in checks):
        return "not measured"
    missed = [f"{what} {y / allowed:.2f}x" for what, y, allowed in checks if y > allowed]
    return "met" if not missed else "missed: " + ", ".join(missed)


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
    bw, llc, devices = bandwidth(args.cli)
    print(devices.strip())
    np.ones(1) @ np.ones(1)
    print(f"numpy {np.__version__}, BLAS: "
          f"{os.path.realpath('/etc/alternatives/libblas.so.3-x86_64-linux-gnu')}, "
          f"OpenBLAS core {openblas_core()}")
    print(f"load average before: {' '.join(loadavg())}")
    print(f"memory bandwidth (measured by the CPU plugin, single-thread copy): {bw / 1e9:.1f} GB/s")
    # numpy as it runs (the numpy columns), and with OpenBLAS's kernel for the ISA forced in a
    # process of its own (the "tuned" columns); the machine's peak is the faster of the two.
    tuned = tuned_coretype()
    tuned_env = dict(os.environ, OPENBLAS_CORETYPE=tuned) if tuned else None
    peak = matmul_peak()
    print(f"float32 matmul (numpy/OpenBLAS {openblas_core().split()[0]}, 2048 x 2048 x 2048, best of 5): "
          f"{peak / 1e9:.1f} GFLOP/s")
    if tuned:
        t = in_process(tuned_env, {"what": "peak"})
        print(f"float32 matmul (numpy/OpenBLAS, OPENBLAS_CORETYPE={tuned}: {t['core']}): {t['peak'] / 1e9:.1f} GFLOP/s")
        peak = max(peak, t["peak"])
    print(f"float32 matmul peak of this machine (the faster): {peak / 1e9:.1f} GFLOP/s")
    # numpy's cold runs: twice the cache that `yirage run --cold` flushes, written before each.
    flush = np.empty(2 * llc // 4, np.float32)
    print(f"cold: yirage flushes {llc >> 20} MiB (the plugin's cache size) before each timed run, "
          f"numpy writes {flush.nbytes >> 20} MiB\n")
    rows = []
    graphs = [(n, args.graph_dir) for n in GRAPHS] + [(n, os.path.join(HERE, "graphs")) for n in EXTRA_GRAPHS]
    for name, graph_dir in graphs:
        if args.only and name != args.only:
            continue
        for dtype, np_dtype, fb in [("float16", np.float16, "Float16"),
                                    ("float32", np.float32, "Float32")]:
            src = os.path.join(graph_dir, name + ".json")
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
            # Cold: the caches flushed before each timed run (idle only).
            r["unfused cold"] = yirage_run(args.cli, graph, graph, args.repeats, cold=True)
            r["yirage cold"] = yirage_run(args.cli, best, graph, args.repeats, cold=True) if desc else None
            r["np32 cold"] = time_numpy(name, shapes, np.float32, 10, flush)[0]
            if tuned:
                r["np32t idle"], r["np32t cold"] = in_process(
                    tuned_env, {"what": "graph", "name": name, "shapes": shapes, "flush": flush.nbytes})
            r["np same"] = r["np32 idle"] if dtype == "float32" else time_numpy(name, shapes, np.float16, 3)[0]
            itemsize = np.dtype(np_dtype).itemsize
            moved = sum(int(np.prod(s)) for s in shapes) * itemsize + out_bytes32 // 4 * itemsize
            r["floor"] = moved / bw
            if name in ATTENTION:
                r["limit"], kind = 2 * attention_flops(shapes) / peak, "2x peak"
            else:
                r["limit"], kind = 1.5 * r["floor"], "1.5x floor"
            r["goal"] = goal(r, r["limit"], kind, tuned)
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
                                                  if k not in ("name", "dtype", "desc", "rank", "opencl desc", "goal"))
                  + f"; goal {r['goal']}", flush=True)
    print(f"\nload average after: {' '.join(loadavg())}")
    ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
    print(f"\nms, medians. warm: inputs and weights stay in the host's caches between runs; cold: the caches "
          f"flushed before each timed run. limit: the goal's bound, 1.5x the floor, or for {' and '.join(ATTENTION)} "
          f"2x their matmuls' FLOPs at {peak / 1e9:.1f} GFLOP/s. numpy {tuned}: numpy f32 with "
          f"OPENBLAS_CORETYPE={tuned}. goal: yirage at most numpy f32 (both) and the limit, "
          "warm and cold; a miss says yirage / what was allowed."
          + (f" loaded: {args.load} other process(es) busy (a shell loop each) while the same runs are timed."
             if args.load else "") + "\n")
    loaded = ["numpy f32 loaded", "unfused loaded", "yirage loaded", "yirage loaded / idle",
              "numpy f32 loaded / yirage loaded"] if args.load else []
    tuned_cols = [f"numpy {tuned}", f"numpy {tuned} cold"] if tuned else []
    header = ["graph", "dtype", "numpy f32", "numpy f32 cold"] + tuned_cols + ["numpy same dtype", "unfused on cpu plugin",
              "unfused cold", "yirage", "yirage cold", "floor", "limit", "numpy f32 / yirage",
              "numpy f32 / yirage, cold", "unfused / yirage", "yirage cold / floor", "goal"] + loaded
    print("| " + " | ".join(header) + " |")
    print("|---" * len(header) + "|")
    for r in rows:
        y, yc, yl = r["yirage idle"], r["yirage cold"], r.get("yirage loaded")
        cells = [r["name"], r["dtype"], fmt(r["np32 idle"]), fmt(r["np32 cold"])]
        if tuned:
            cells += [fmt(r["np32t idle"]), fmt(r["np32t cold"])]
        cells += [fmt(r["np same"]),
                 fmt(r["unfused idle"]), fmt(r["unfused cold"]), fmt(y), fmt(yc), fmt(r["floor"]),
                 fmt(r["limit"]), ratio(r["np32 idle"], y), ratio(r["np32 cold"], yc),
                 ratio(r["unfused idle"], y), ratio(yc, r["floor"]), r["goal"]]
        if args.load:
            cells += [fmt(r.get("np32 loaded")), fmt(r.get("unfused loaded")), fmt(yl), ratio(yl, y),
                      ratio(r.get("np32 loaded"), yl)]
        print("| " + " | ".join(cells) + " |")
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
    if sys.argv[1:2] == ["--worker"]:
        print(json.dumps(worker(json.loads(sys.argv[2]))))
        sys.exit(0)
    sys.exit(main())
