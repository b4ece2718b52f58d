"""ntrans against a Triton kernel like torch.compile's, timed as bench.py times (do_bench,
median, L2 flushed), in one process with the rounds alternating, so that the machine's state is
the same for all. Candidates: yirage's kernel from each graph file given (e.g. the chosen µGraph
at 256, 512 and 1024 threads per block); `triton_wN`, a Triton kernel written as Inductor writes
ntrans (one program per row, the row in registers, persistent reduction) at N warps;
torch.compile's own call; an 8-element add_ (one launch of almost nothing).

For each it prints the median of each round's median, the range of the round medians, and how
the samples of all rounds spread (the 10th, 50th and 90th percentiles and the mean), since CUDA
events resolve about 0.5 µs. Not part of the build; benchmarks/gpu/RESULTS.md has the numbers.

usage: python3 ntrans_triton_probe.py LIB PLUGIN ROWS ROUNDS GRAPH...   (ROWS 8 for b = 1, 64 for b = 8)
"""
import ctypes as C
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bench  # noqa: E402

COLS = 4096


@triton.jit
def ntrans_rows(h_ptr, x_ptr, a_ptr, o_ptr, N: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * N + tl.arange(0, N)
    h = tl.load(h_ptr + offsets).to(tl.float32)
    x = tl.load(x_ptr + offsets).to(tl.float32)
    a = tl.load(a_ptr + offsets).to(tl.float32)
    hn = (h * tl.rsqrt(tl.sum(h * h, 0) / N)).to(tl.float16).to(tl.float32)
    y = (x + a * (hn - x)).to(tl.float16).to(tl.float32)
    o = y * tl.rsqrt(tl.sum(y * y, 0) / N)
    tl.store(o_ptr + offsets, o.to(tl.float16))


def main():
    lib, plugin, rows, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    graphs = sys.argv[5:]
    torch.manual_seed(0)
    ins = [torch.empty(rows, COLS, device="cuda", dtype=torch.float16).uniform_(-1, 1) for _ in range(3)]
    expected = bench.BENCHMARKS["ntrans"][1](*[t.float() for t in ins])
    y = bench.Yirage(lib, plugin)
    keep = []
    stream = C.c_void_p(torch.cuda.current_stream().cuda_stream)
    cin = (C.POINTER(bench.DLTensor) * 3)(*[C.pointer(bench.dltensor(t, keep)) for t in ins])
    candidates = {}
    outputs = {}
    for path in graphs:
        out = torch.full((rows, COLS), float("nan"), device="cuda", dtype=torch.float16)
        cout = (C.POINTER(bench.DLTensor) * 1)(C.pointer(bench.dltensor(out, keep)))
        kernel = y.compile(path)
        candidates[os.path.basename(path)] = (lambda k=kernel, o=cout: y.check(
            y.lib.yirage_kernel_run(k, cin, 3, o, 1, stream)))
        outputs[os.path.basename(path)] = out
    for warps in (4, 8, 16):
        out = torch.full((rows, COLS), float("nan"), device="cuda", dtype=torch.float16)
        candidates[f"triton_w{warps}"] = (lambda w=warps, o=out: ntrans_rows[(rows,)](
            *ins, o, N=COLS, num_warps=w))
        outputs[f"triton_w{warps}"] = out
    compiled = torch.compile(bench.BENCHMARKS["ntrans"][1])
    candidates["torch.compile"] = lambda: compiled(*ins)
    tiny = torch.zeros(8, device="cuda")
    candidates["add_ (8 elements)"] = lambda: tiny.add_(1)
    for fn in candidates.values():
        fn()
    torch.cuda.synchronize()
    for name, out in outputs.items():
        error = ((out.float() - expected).norm() / expected.norm()).item()
        print(f"{name}: relative error {error:.2e}")
        assert error < 1e-2, name

    medians = {name: [] for name in candidates}
    samples = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, fn in candidates.items():
            times = [t * 1e3 for t in triton.testing.do_bench(fn, return_mode="all")]
            medians[name].append(statistics.median(times))
            samples[name] += times
    print(f"\nntrans, {rows} rows, {rounds} rounds, µs (torch {torch.__version__}, triton {triton.__version__})\n")
    print("| kernel | median of round medians | round medians | p10 / p50 / p90 of all samples | mean |")
    print("|---|---|---|---|---|")
    for name in candidates:
        m, s = medians[name], sorted(samples[name])
        q = lambda f: s[int(f * (len(s) - 1))]  # noqa: E731
        print(f"| {name} | {statistics.median(m):.2f} | {min(m):.2f}–{max(m):.2f} | "
              f"{q(0.1):.2f} / {q(0.5):.2f} / {q(0.9):.2f} | {statistics.mean(s):.2f} |")


if __name__ == "__main__":
    main()
