"""Programs of several operators on the CPU plugin: each chain of kernels timed apart (one
program a kernel, the pool's threads back to the pool between them) and marked to run as one
program (one parallel region, docs/backends/cpu.md), on the same inputs, in alternating rounds.

usage (in `meson devenv -C build -w .`, which puts the yirage CLI on PATH; or with YIRAGE_CLI
naming it and YIRAGE_BACKEND_PATH the CPU plugin's folder):
    python3 benchmarks/cpu/regions.py [--repeats N] [--rounds N] [--threads N]

--threads sets YIRAGE_CPU_THREADS for the runs (default: the plugin's own count). Prints a
markdown table, µs (the median of each round's median; `yirage run` checks every run against
the reference executor). The graphs are written as graph files here, so nothing but the CLI is
needed.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

# (name, kernels, floats per tensor)
CHAINS = [(f"elementwise x{n}", n, size) for n in (2, 4, 8) for size in (4096, 65536, 1048576)]


def elementwise_chain(kernels, floats, grouped):
    """The graph file of y = x [64, floats / 64] float32, then `kernels` kernels by turns
    y = -y, y = exp(y), y = y · x; `grouped`: each kernel but the last marked to run with the next."""
    ops = [{"kind": "Input", "sizes": [64, floats // 64], "dtype": "Float32"}]
    steps = [{"kind": "MulScalar", "scalar": -1.0}, {"kind": "Exp"}, {"kind": "Mul"}]
    for k in range(kernels):
        op = dict(steps[k % 3])
        op["inputs"] = [len(ops) - 1] + ([0] if op["kind"] == "Mul" else [])
        if grouped and k + 1 < kernels:
            op["launch_with_next"] = True
        ops.append(op)
    return {"operators": ops, "outputs": [len(ops) - 1]}


def median_us(path, repeats, env):
    out = subprocess.run([os.environ.get("YIRAGE_CLI", "yirage"), "run", path, "--repeats", str(repeats)], capture_output=True, text=True,
                         env=env)
    found = re.search(r"correct \(.*\); median\s+([\d.]+) (us|ms)", out.stdout + out.stderr)
    if not found:
        sys.exit(f"regions.py: yirage run {path}: {(out.stdout + out.stderr).strip()}")
    return float(found.group(1)) * (1000 if found.group(2) == "ms" else 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    env = dict(os.environ)
    if args.threads:
        env["YIRAGE_CPU_THREADS"] = str(args.threads)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"threads: {args.threads or 'the plugin default'}; {args.rounds} rounds of {args.repeats} runs each\n")
    print("| chain | MB a tensor | apart | one region | region / apart |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for name, kernels, floats in CHAINS:
            apart = os.path.join(work, "apart.json")
            grouped = os.path.join(work, "grouped.json")
            for path, marks in ((apart, False), (grouped, True)):
                with open(path, "w") as f:
                    json.dump(elementwise_chain(kernels, floats, marks), f)
            times = {apart: [], grouped: []}
            for _ in range(args.rounds):
                for path in (apart, grouped):
                    times[path].append(median_us(path, args.repeats, env))
            a, g = statistics.median(times[apart]), statistics.median(times[grouped])
            print(f"| {name} | {floats * 4 / 1e6:.3g} | {a:.1f} | {g:.1f} | {g / a:.2f} |")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
