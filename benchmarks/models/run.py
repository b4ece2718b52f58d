"""The real-model suite on a CUDA device: yirage's chosen kernel, the unfused graph compiled by
yirage, PyTorch eager and torch.compile on the same inputs, timed with bench.py's harness
(benchmarks/gpu/bench.py: do_bench with L2 flushes, turning rounds, poisoned outputs checked
against PyTorch in float32); and the cost model's ranking against the searches' measurements.

usage: run.py bench LIBYIRAGE CUDA_PLUGIN OUT [GRAPH...]   times the graphs OUT/<graph>.yrg
                                                          (search results) and OUT/graphs/<graph>.json
                                                          (the unfused graphs); writes OUT/samples.<pid>.json
       run.py report OUT                                  the tables, from OUT/samples*.json and
                                                          the searches' logs OUT/<graph>.search.txt

Environment: YIRAGE_BENCH_ROUNDS (turning rounds per graph, default 3); YIRAGE_BENCH_CUDA_GRAPHS=1
also times torch.compile(mode="reduce-overhead") (PyTorch's CUDA graphs; a column of its own,
"compile_ro", reported in a table of its own).
"""

import math
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "gpu"))

import suite  # noqa: E402

COLUMNS = ("yirage", "unfused", "eager", "compile")
# Datasheet peaks for the floor: (memory bytes/s, dense 16-bit matrix FLOP/s).
PEAKS = {"H100": (3.35e12, 989e12), "H200": (4.8e12, 989e12)}


def bench(library, plugin, out, wanted):
    import json

    import torch
    import bench as harness

    graphs = suite.graphs()
    unknown = set(wanted) - set(graphs)
    if unknown:
        sys.exit(f"run.py: no graph named {', '.join(sorted(unknown))} in the suite")
    rounds = int(os.environ.get("YIRAGE_BENCH_ROUNDS", "3"))
    y = harness.Yirage(library, plugin)
    torch.manual_seed(0)
    flush = harness.l2_flush_buffer()
    ops = suite.TorchOps()
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16}
    run = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rounds": rounds, "rows": {}}
    for name, g in graphs.items():
        if wanted and name not in wanted:
            continue
        inputs = [torch.empty(s, device="cuda", dtype=dtypes[g["dtype"]]).uniform_(-scale, scale)
                  for s, scale in g["inputs"]]
        expected = g["reference"](ops, *[t.float() for t in inputs])

        def eager(*args, reference=g["reference"]):
            return reference(ops, *args)

        kernels = {}
        try:
            for column, path in (("yirage", os.path.join(out, name + ".yrg")),
                                 ("unfused", os.path.join(out, "graphs", name + ".json"))):
                kernels[column] = y.compile(path)
        except RuntimeError as e:
            run["rows"][name] = {"failed": f"{column}: {e}"}
            print(f"{name}: {column} failed: {e}", flush=True)
            continue
        # A fresh compilation per graph: dynamo keys its cache on the function's code, shared by
        # every graph here, and past its recompile limit (8) it would silently run eager.
        torch._dynamo.reset()
        compiled = torch.compile(eager)
        compiled(*inputs)
        fns = {"eager": eager, "compile": compiled}
        if os.environ.get("YIRAGE_BENCH_CUDA_GRAPHS") == "1":
            torch._dynamo.reset()
            graphed = torch.compile(eager, mode="reduce-overhead")
            for _ in range(3):  # recorded at the first calls, replayed after
                graphed(*inputs)
            fns["compile_ro"] = graphed
        measured = harness.measure(y, flush, inputs, expected, kernels, fns, rounds)
        for kernel in kernels.values():
            y.lib.yirage_kernel_release(kernel)
        run["rows"][name] = measured
        medians = {c: statistics.median(t for r in samples for t in r) for c, samples in measured["do_bench"].items()}
        print(f"{name}: " + ", ".join(f"{c} {t:.1f}" for c, t in medians.items()) + " µs", flush=True)
        del inputs, expected
        torch.cuda.empty_cache()
        with open(os.path.join(out, f"samples.{os.getpid()}.json"), "w") as f:  # after each graph: a
            json.dump(run, f)  # run cut short keeps what it measured


def seconds_of(text):
    """'12.3 us' -> 1.23e-5; '-', 'not timed' -> None."""
    m = re.match(r"([0-9.]+) (us|ms|s)$", text.strip())
    return float(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)] if m else None


def search_log(path):
    """The search's profiled candidates [(estimate s, measured s, description)] (correct ones
    only) and its best graph's description, from `yirage superoptimize`'s output."""
    rows, best = [], None
    if not os.path.exists(path):
        return rows, best
    for line in open(path):
        # estimate, measured, the runs' spread (words), rel.error, result, description
        m = re.match(r"\s*\d+\s+(-|not estimated|[0-9.]+ (?:us|ms|s))\s+(-|not timed|[0-9.]+ (?:us|ms|s))\s.*?"
                     r"\s(ok|DROP)\s+(.*)", line)
        if m and m.group(3) == "ok":
            rows.append((seconds_of(m.group(1)), seconds_of(m.group(2)), m.group(4).strip()))
        m = re.match(r"best: (.*), measured", line)
        if m:
            best = m.group(1)
    return rows, best


def ranks(values):
    """Average ranks (1-based) of `values`, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs, ys):
    """Spearman's rank correlation; None for fewer than 3 pairs or a constant side."""
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx, syy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def cost_model_table(out, names):
    """Per graph: the Spearman correlation of estimate and measurement over the profiled
    candidates (the input graph included), and the estimate's rank of the measured best."""
    lines, correlations, in_top8 = [], [], []
    for name in names:
        rows, _ = search_log(os.path.join(out, name + ".search.txt"))
        rows = [r for r in rows if r[0] is not None and r[1] is not None]
        if not rows:
            continue
        rho = spearman([r[0] for r in rows], [r[1] for r in rows])
        best = min(range(len(rows)), key=lambda i: rows[i][1])
        rank_of_best = int(ranks([r[0] for r in rows])[best])
        if rho is not None:
            correlations.append(rho)
        in_top8.append(rank_of_best <= 8)
        worst = max(r[1] / rows[best][1] for r in rows)
        first = min(range(len(rows)), key=lambda i: rows[i][0])  # the estimate's pick
        lines.append(f"| {name} | {len(rows)} | {'-' if rho is None else f'{rho:.2f}'} | {rank_of_best} | "
                     f"{rows[first][1] / rows[best][1]:.2f}x | {worst:.1f}x |")
    return lines, correlations, in_top8


def floor_seconds(g, device):
    """The fewest bytes (inputs read once, the output written once, 16-bit) over the datasheet
    bandwidth, or the matmuls' FLOPs over the dense 16-bit peak, whichever is larger; None for a
    device without figures here."""
    peaks = next((v for k, v in PEAKS.items() if k in device), None)
    if peaks is None:
        return None
    bandwidth, flops = peaks
    shapes, matmul_flops = [], 0  # every tensor's shape, in the graph's numbering
    for op in g["json"]["operators"]:
        if op["kind"] == "Input":
            shapes.append(op["sizes"])
        elif op["kind"] == "Matmul":
            a, b = (shapes[i] for i in op["inputs"])
            matmul_flops += 2 * math.prod(a) * b[-1]
            shapes.append(a[:-1] + b[-1:])
        elif op["kind"] == "Reduction":
            s = list(shapes[op["inputs"][0]])
            s[op["dim"]] = 1
            shapes.append(s)
        elif op["kind"] == "Reshape":
            shapes.append(op["sizes"])
        elif op["kind"] == "Split":  # one tensor per part
            for size in op["sizes"]:
                s = list(shapes[op["inputs"][0]])
                s[op["dim"]] = size
                shapes.append(s)
        else:
            shapes.append(max((shapes[i] for i in op["inputs"]), key=math.prod))
    elements = sum(math.prod(s) for s, _ in g["inputs"]) + math.prod(shapes[g["json"]["outputs"][0]])
    return max(elements * 2 / bandwidth, matmul_flops / flops)


def graphed_table(runs, names):
    """yirage beside torch.compile(mode="reduce-overhead") for the graphs timed with it."""
    rows = []
    for name in names:
        measured = [r["rows"][name] for r in runs if name in r["rows"] and "compile_ro" in r["rows"][name].get("do_bench", {})]
        if measured:
            t = {c: statistics.median(x for m in measured for r in m["do_bench"][c] for x in r)
                 for c in ("yirage", "compile_ro")}
            rows.append(f"| {name} | {t['yirage']:.1f} | {t['compile_ro']:.1f} | {t['compile_ro'] / t['yirage']:.2f}x |")
    if rows:
        print('\ntorch.compile with mode="reduce-overhead" (PyTorch\'s CUDA graphs), µs:\n')
        print("| graph | yirage | torch.compile (CUDA graphs) | vs it |\n|---|---|---|---|")
        print("\n".join(rows))


def report(out):
    import json

    graphs = suite.graphs()
    runs = []
    for f in sorted(os.listdir(out)):
        if f.startswith("samples") and f.endswith(".json"):
            runs.append(json.load(open(os.path.join(out, f))))
    if not runs:
        sys.exit(f"run.py report: no samples*.json in {out}")
    device = runs[0]["device"]
    print(f"device: {device}, torch {runs[0]['torch']}; {len(runs)} process(es) × {runs[0]['rounds']} rounds; "
          "each time is the median of all do_bench samples (µs)\n")
    print("| graph | yirage | unfused (yirage) | eager | torch.compile | floor | vs compile | vs unfused | "
          "rel. error | rounds' range: yirage / unfused | yirage's choice |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    speedups, misses, slower_than_unfused, names = [], [], [], []
    for name, g in graphs.items():
        measured = [r["rows"][name] for r in runs if name in r["rows"]]
        if not measured:
            continue
        names.append(name)
        failed = [m["failed"] for m in measured if "failed" in m]
        if failed:
            print(f"| {name} | ({failed[0]}) ||||||||||")
            misses.append((name, failed[0]))
            continue
        t = {c: statistics.median(x for m in measured for r in m["do_bench"][c] for x in r) for c in COLUMNS}
        spread = {c: [statistics.median(r) for m in measured for r in m["do_bench"][c]] for c in COLUMNS}
        error = max(e for m in measured for e in m["errors"]["yirage"])
        floor = floor_seconds(g, device)
        _, best = search_log(os.path.join(out, name + ".search.txt"))
        speedups.append(t["compile"] / t["yirage"])
        if t["yirage"] > t["compile"]:
            misses.append((name, f"{t['yirage']:.1f} µs against torch.compile's {t['compile']:.1f}"))
        # Slower than the unfused graph beyond noise: every round of yirage's above every one of
        # the unfused graph's. Where the search kept the input graph both columns time the same
        # kernels, and a gap between them is the harness's noise.
        if best != "the input graph, unchanged" and min(spread["yirage"]) > max(spread["unfused"]):
            slower_than_unfused.append(name)
        ranges = " / ".join(f"{min(spread[c]):.1f}–{max(spread[c]):.1f}" for c in ("yirage", "unfused"))
        print(f"| {name} | {t['yirage']:.1f} | {t['unfused']:.1f} | {t['eager']:.1f} | {t['compile']:.1f} | "
              f"{'-' if floor is None else f'{floor * 1e6:.1f}'} | {t['compile'] / t['yirage']:.2f}x | "
              f"{t['unfused'] / t['yirage']:.2f}x | {error:.1e} | {ranges} | {best or '-'} |")
    graphed_table(runs, names)
    timed = len(speedups)
    at_least = sum(s >= 1 for s in speedups)
    geomean = math.exp(statistics.mean(math.log(s) for s in speedups)) if speedups else float("nan")
    print(f"\n**{at_least} of {timed}** graphs at least as fast as torch.compile "
          f"({100 * at_least / max(timed, 1):.0f}%); geometric-mean speed-up over torch.compile "
          f"**{geomean:.2f}x**; slower than the unfused graph beyond noise (of the graphs yirage changed): "
          f"{', '.join(slower_than_unfused) or 'none'}.\n")
    if misses:
        print("Behind torch.compile or failed:\n")
        for name, why in misses:
            print(f"- {name}: {why}")
        print()
    lines, correlations, in_top8 = cost_model_table(out, names)
    print("The cost model against the searches' measurements (each search's profiled candidates "
          "and the input graph):\n")
    print("| graph | profiled | Spearman ρ | estimate's rank of the measured best | estimate's first / best "
          "(measured) | slowest / best |")
    print("|---|---|---|---|---|---|")
    print("\n".join(lines))
    if correlations:
        print(f"\nmean ρ over {len(correlations)} graphs: **{statistics.mean(correlations):.2f}** "
              f"(median {statistics.median(correlations):.2f}); measured best among the estimate's top 8: "
              f"**{sum(in_top8)} of {len(in_top8)}** graphs")


def main(argv):
    if len(argv) >= 5 and argv[1] == "bench":
        bench(argv[2], argv[3], argv[4], argv[5:])
        return 0
    if len(argv) == 3 and argv[1] == "report":
        report(argv[2])
        return 0
    sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
