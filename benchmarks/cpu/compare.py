"""The CPU benchmark of two builds side by side, on one machine in one run: each of the six
benchmark graphs, unfused and as its hand-fused µGraph (examples/graphs), in float16 and float32,
is run by each build's CLI on its CPU plugin (`yirage run --repeats 30`: compiled, checked against
the reference executor, timed), the builds alternating in every round; the table gives each
build's median over the rounds' medians and their ratio. The same graphs on both sides: what
differs is the code the plugins generate.

With --load PROCS, that many other processes keep cores busy (a shell loop each) all the while.
With --before-env NAME=VALUE, the before side runs with that setting (one build against itself
with a feature off, e.g. YIRAGE_CPU_LIBXSMM=0).

usage: compare.py BEFORE_BUILD AFTER_BUILD WORK_DIR [--rounds N] [--load PROCS] [--only GRAPH]
                  [--before-env NAME=VALUE]
  a build folder holds tools/yirage/yirage and backends/cpu/libyirage-backend-cpu.so
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

GRAPHS = ["gqa", "qknorm", "rmsnorm_linear", "lora", "gated_mlp", "ntrans"]
HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH_DIR = os.path.join(HERE, "..", "..", "examples", "graphs")


def run(build, graph, cache, extra_env):
    env = dict(os.environ, YIRAGE_BACKEND_PATH=os.path.join(build, "backends", "cpu"), YIRAGE_CACHE_DIR=cache)
    env.update(extra_env)
    out = subprocess.run([os.path.join(build, "tools", "yirage", "yirage"), "run", graph, "--backend", "cpu",
                          "--repeats", "30"], capture_output=True, text=True, env=env)
    m = re.search(r"median\s+([0-9.]+) (us|ms|s)", out.stdout)
    if out.returncode != 0 or not m:
        # A graph whose own float16 tensors overflow (gqa and qknorm unfused) is wrong on any
        # backend: reported as such on both sides.
        return "overflows float16" if "overflows float16" in out.stdout + out.stderr else f"failed: {out.stdout}{out.stderr}"
    return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]


def rounds(args, graphs, times):
    for r in range(args.rounds):
        for g in graphs:
            # Each build its own kernel cache, warmed by the first round; the order turns each round.
            for side in (("before", "after") if r % 2 == 0 else ("after", "before")):
                build = args.before if side == "before" else args.after
                extra_env = dict([args.before_env.split("=", 1)]) if side == "before" and args.before_env else {}
                times[(g, side)].append(run(build, g[2], os.path.join(args.work, "cache-" + side), extra_env))
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("work")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--load", type=int, default=0)
    p.add_argument("--only")
    p.add_argument("--before-env")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    graphs = []
    for name in GRAPHS:
        if args.only and name != args.only:
            continue
        for form in ["", "_fused"]:
            for dtype in ["Float16", "Float32"]:
                path = os.path.join(args.work, f"{name}{form}_{dtype.lower()}.json")
                text = open(os.path.join(GRAPH_DIR, name + form + ".json")).read()
                open(path, "w").write(text.replace('"Float16"', f'"{dtype}"'))
                graphs.append((name + (" fused" if form else ""), dtype.lower(), path))
    times = {(g, side): [] for g in graphs for side in ("before", "after")}
    load = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(args.load)]
    try:
        rounds(args, graphs, times)
    finally:
        for c in load:
            c.kill()
            c.wait()
    print(f"{args.rounds} rounds, each `yirage run --repeats 30`; ms, the median of the rounds' medians"
          + (f"; {args.load} other process(es) busy all the while" if args.load else "") + "\n")
    print("| graph | dtype | before (ms) | after (ms) | after / before | rounds: before / after |")
    print("|---|---|---|---|---|---|")
    for g in graphs:
        failed = [t for s in ("before", "after") for t in times[(g, s)] if isinstance(t, str)]
        if failed:
            print(f"| {g[0]} | {g[1]} | ({failed[0][:80]}) | | | |")
            continue
        b, a = (statistics.median(times[(g, s)]) for s in ("before", "after"))
        spread = " / ".join(f"{min(times[(g, s)]):.3f}–{max(times[(g, s)]):.3f}" for s in ("before", "after"))
        print(f"| {g[0]} | {g[1]} | {b:.3f} | {a:.3f} | {a / b:.2f} | {spread} |")


if __name__ == "__main__":
    sys.exit(main())
