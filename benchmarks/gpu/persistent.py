"""Chains of µGraphs on the CUDA plugin: each chain timed as separate kernels (one program an
operator; the host replays their launches as a CUDA graph recording) and marked to run as one
program (one persistent kernel, docs/backends/cuda.md "One launch for several operators"), on the
same inputs, in alternating rounds.

The chains are a decoder's MLP-like pieces at decode: Y = rms_norm(X)·W1, Z = Y·W2 (W1, W2
[h, h]), silu(Z) ⊙ B, in float16, written here as graph files of three µGraphs (the forms the
search finds for each piece), so nothing but the CLI and the plugin is needed.

usage: python3 benchmarks/gpu/persistent.py --cli BUNDLE/bin/yirage --plugin BUNDLE/libyirage-backend-cuda.so
           [--repeats N] [--rounds N] [--copy-rate BYTES_PER_S] [--launch SECONDS]

Prints a markdown table, µs: the median of each round's median of `yirage run --cold` (device
time from a cold L2; every run checked against the reference executor). The floor is the chain's
bytes (inputs read once, outputs written once) over the copy rate (measured with PyTorch where it
is installed, else --copy-rate); the goal (#54) is 1.3 × (floor + one launch).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

CHAINS = [(rows, hidden, cols) for cols in (32, 64) for hidden in (1024, 4096) for rows in (1, 8)]


def iterator(sizes, grid_map, forloop_dim):
    return {"kind": "InputIterator", "sizes": sizes, "grid_map": grid_map, "forloop_dim": forloop_dim,
            "dtype": "Float16"}


def ugraph(inputs, grid, forloop, ops):
    return {"kind": "Customized", "inputs": inputs,
            "block_graph": {"grid": [grid, 1, 1], "block_threads": 128, "forloop_range": forloop, "operators": ops}}


def chain(rows, hidden, cols, grouped):
    """The graph file of the chain; `grouped`: each µGraph but the last marked to run with the next."""
    tiles = hidden // 64
    x = [rows, hidden]
    w = [hidden, hidden]
    ops = [{"kind": "Input", "sizes": size, "dtype": "Float16"} for size in (x, w, w, x)]
    # Y = (X·W1) / rms(X): blocks of `cols` columns (32: 64 bytes of 16-bit weights, as the search
    # keeps weight products, which run their own code; 64: the general body), the loop over
    # 64-wide tiles of the hidden dim.
    ops.append(ugraph([0, 1], hidden // cols, tiles, [
        iterator(x, [-1, -1, -1], 1), iterator(w, [1, -1, -1], 0),
        {"kind": "Matmul", "inputs": [0, 1]}, {"kind": "AccumSum", "inputs": [2]},
        {"kind": "AccumReduceRms", "inputs": [0]}, {"kind": "Div", "inputs": [3, 4]},
        {"kind": "OutputSaver", "inputs": [5], "sizes": x, "grid_map": [1, -1, -1]}]))
    # Z = Y·W2, the same blocks and loop.
    ops.append(ugraph([4, 2], hidden // cols, tiles, [
        iterator(x, [-1, -1, -1], 1), iterator(w, [1, -1, -1], 0),
        {"kind": "Matmul", "inputs": [0, 1]}, {"kind": "AccumSum", "inputs": [2]},
        {"kind": "OutputSaver", "inputs": [3], "sizes": x, "grid_map": [1, -1, -1]}]))
    # silu(Z) ⊙ B in blocks of 256 columns.
    ops.append(ugraph([5, 3], hidden // 256, 1, [
        iterator(x, [1, -1, -1], -1), iterator(x, [1, -1, -1], -1),
        {"kind": "Silu", "inputs": [0]}, {"kind": "Mul", "inputs": [2, 1]},
        {"kind": "OutputSaver", "inputs": [3], "sizes": x, "grid_map": [1, -1, -1]}]))
    if grouped:
        ops[4]["launch_with_next"] = True
        ops[5]["launch_with_next"] = True
    return {"operators": ops, "outputs": [6]}


def median_us(cli, plugin, path, repeats):
    out = subprocess.run([cli, "run", path, "--backend", "cuda", "--plugin", plugin, "--cold", "--repeats",
                          str(repeats)], capture_output=True, text=True)
    found = re.search(r"correct \(.*\); median\s+([\d.]+) (us|ms)", out.stdout + out.stderr)
    if not found:
        sys.exit(f"persistent.py: yirage run {path}: {(out.stdout + out.stderr).strip()}")
    return float(found.group(1)) * (1000 if found.group(2) == "ms" else 1)


def copy_rate(fallback):
    """Bytes/s of a 1 GiB device copy (read and write counted), as benchmarks/gpu/bench.py measures it."""
    try:
        import torch
        import triton.testing
    except ImportError:
        return fallback, "given"
    src = torch.empty(1 << 29, dtype=torch.float16, device="cuda")
    dst = torch.empty_like(src)
    ms = triton.testing.do_bench(lambda: dst.copy_(src))
    return 2 * src.numel() * 2 / (ms * 1e-3), "measured"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--copy-rate", type=float, default=4.25e12, help="bytes/s where PyTorch is not installed")
    parser.add_argument("--launch", type=float, default=2e-6, help="one launch's overhead, s (targets/*.json)")
    args = parser.parse_args()
    rate, how = copy_rate(args.copy_rate)
    print(f"copy rate {rate / 1e12:.2f} TB/s ({how}); one launch {args.launch * 1e6:.1f} µs; "
          f"{args.rounds} rounds of {args.repeats} runs each, `yirage run --cold`\n")
    print("| chain (float16) | floor | 3 kernels, recorded | one persistent kernel | one / three | goal 1.3 × (floor + launch) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for rows, hidden, cols in CHAINS:
            paths = {}
            for grouped in (False, True):
                paths[grouped] = os.path.join(work, f"chain_{rows}_{hidden}_{cols}_{int(grouped)}.json")
                with open(paths[grouped], "w") as f:
                    json.dump(chain(rows, hidden, cols, grouped), f)
            times = {False: [], True: []}
            for _ in range(args.rounds):
                for grouped in (False, True):
                    times[grouped].append(median_us(args.cli, args.plugin, paths[grouped], args.repeats))
            apart, one = statistics.median(times[False]), statistics.median(times[True])
            floor = (2 * hidden * hidden + 3 * rows * hidden) * 2 / rate * 1e6
            goal = 1.3 * (floor + args.launch * 1e6)
            print(f"| {rows} × {hidden}, W {hidden}² ×2, blocks of {cols} | {floor:.1f} | {apart:.1f} | {one:.1f} | {one / apart:.2f} | "
                  f"{goal:.1f} {'met' if one <= goal else 'missed'} |")


if __name__ == "__main__":
    main()
