"""Times yirage's kernels against PyTorch eager, torch.compile and torch.compile with
mode="reduce-overhead" (CUDA graphs) on the same CUDA tensors.

usage: bench.py LIBYIRAGE CUDA_PLUGIN BEST_GRAPH_DIR [ROW...]
       bench.py --report SAMPLES.json...

For each benchmark row (../shared/benchmarks/README.md: the six graphs at b = 1, and gqa, qknorm,
rmsnorm_linear and ntrans at b = 8 too; ROW names one, "gqa" or "gqa_b8", default all) it loads
the superoptimized graph BEST_GRAPH_DIR/<row>.yrg, compiles it for CUDA device 0 through the C
ABI (ctypes: any Python works, no binding to build), runs it on PyTorch's tensors without copies
(DLPack DLTensors over their memory, on PyTorch's current stream) into an output filled with NaN
first, checks its output against PyTorch in float32, and times all four with
triton.testing.do_bench (median, L2 flushed between calls). Prints three Markdown tables. Each
row's floor is its card's: the bytes (each input read once, the output written once) over the
copy rate measured at the start, or the matmul FLOPs over the float16 matmul rate measured then
(card_rates), whichever is larger; the goal is max(2 × floor, floor + 5 µs).

The four are timed in turn, in rounds (environment YIRAGE_BENCH_ROUNDS, default 8), and each
column is the median of all its rounds' do_bench samples together. One do_bench median of a 5
µs kernel moves by up to 0.8 µs from one call to the next (benchmarks/gpu/RESULTS.md,
twenty-eighth session: the same kernel's round medians spread 5.2–6.4 µs): while the CPU runs
ahead of the GPU, every other call after do_bench's flush measures 0.7–0.9 µs longer, whatever
it runs (experiments/event_resolution_probe.py, thirtieth session), so that a call's median falls
between its two levels and a median of round medians jumps by that step where the median of all
samples moves less (twenty-ninth session: two copies of one kernel in one process measured 5.89
and 6.53 µs by the first, 5.98 and 6.21 by the second). Timing the
columns in alternating rounds puts them under the same machine state, and the order turns from
round to round (yirage, eager, compile, cudagraphs; then eager, compile, cudagraphs, yirage; …):
what ran just before a do_bench moves its figure (thirtieth session: up to 1 µs on ntrans's
kernel), so no column always follows the same work, and a multiple of 4 rounds gives each column each place equally
often (the report's third table gives each column's figure by place). Each
round runs all three on copies of the inputs in new buffers, and yirage into a new output
(poisoned, then checked: the error column is the largest of the rounds'): where an output lies
in memory alone moved the same kernel's do_bench time by up to 0.5 µs (RESULTS.md, twenty-ninth
session), and no column's figure should rest on one placement. The table's last column gives
each column's lowest and highest round median.

Environment YIRAGE_BENCH_SAMPLES=FILE also writes every sample of the run to FILE (JSON), and
`bench.py --report FILE...` prints the tables of several such runs pooled (run.sh runs bench.py in
YIRAGE_BENCH_PROCESSES processes). In the thirtieth session's probes on H100s (RESULTS.md),
yirage's ntrans kernel at b = 8 measured at a median of 5.1–5.3 µs in some processes and 5.9–6.5
in others, and Inductor's kernel mostly at 5.5–5.9, in two processes at 6.1–6.2; part of that
was the work before each do_bench, but one process's figure is still one draw.

A second table gives each column's cost in a stream, after another kernel: CUDA events around the
same L2 flush (a 256 MB zero_) and the call together, less the flush alone, the median of
STREAM_CALLS calls, in the same alternating rounds. do_bench's span starts after the flush, so it
leaves out most of what a kernel launched as a programmatic dependent (yirage's on sm_90) gains by
having its blocks resident while the kernel before it ends: on ntrans, CUPTI saw the dependent
launch finish 1.75 µs earlier than a plain one, do_bench 0.2 µs (RESULTS.md, twenty-eighth
session). This measure counts what a stream of kernels sees. A call whose CPU time exceeds the
flush's GPU time (about 85 µs on an H100) shows it here.
"""

import ctypes as C
import json
import os
import statistics
import sys

import torch
import triton


def rms_norm(x):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True)).to(x.dtype)


def gqa(q, k, v):
    e = torch.exp(q @ k)
    return (e / e.sum(2, keepdim=True)) @ v


def attention_shapes(b):
    return [(2 * b, 256, 64), (2 * b, 64, 4096), (2 * b, 4096, 64)]


# name: (input shapes for batch b, the function, the batches it runs at, its matmul FLOPs at b,
# {b: floor in µs on an H100 from ../shared/benchmarks/README.md}). A run's floors are its own
# card's (floor_us); the H100 figures stand in for files written before runs measured their card.
BENCHMARKS = {
    "gqa": (attention_shapes, gqa, (1, 8), lambda b: 4 * 2 * b * 256 * 64 * 4096, {1: 0.8, 8: 6.0}),
    "qknorm": (attention_shapes, lambda q, k, v: gqa(rms_norm(q), k, v), (1, 8),
               lambda b: 4 * 2 * b * 256 * 64 * 4096, {1: 0.8, 8: 6.0}),
    "rmsnorm_linear": (lambda b: [(2 * b, 4096), (4096, 6144)], lambda x, w: rms_norm(x) @ w, (1, 8),
                       lambda b: 2 * 2 * b * 4096 * 6144, {1: 16.7, 8: 16.8}),
    "lora": (lambda b: [(16, 256), (256, 4096), (256, 16), (16, 4096)],
             lambda x, w, a, b: x @ w + (x @ a) @ b, (1,),
             lambda b: 2 * 16 * 256 * 4096 + 2 * 16 * 256 * 16 + 2 * 16 * 16 * 4096, {1: 0.8}),
    "gated_mlp": (lambda b: [(8, 4096), (4096, 4096), (4096, 4096)],
                  lambda x, w1, w2: torch.nn.functional.silu(x @ w1) * (x @ w2), (1,),
                  lambda b: 2 * 2 * 8 * 4096 * 4096, {1: 22.3}),
    "ntrans": (lambda b: [(8 * b, 4096)] * 3, lambda h, x, a: rms_norm(x + a * (rms_norm(h) - x)), (1, 8),
               lambda b: 0, {1: 0.1, 8: 0.7}),
}
# The rows in table order: (row name, graph name, b); a row's graph files are <row>.json / .yrg.
STREAM_CALLS = 100
# torch.compile's default mode and mode="reduce-overhead" (its calls replay a CUDA graph).
COLUMNS = ("yirage", "eager", "compile", "cudagraphs")
ROWS = [(name, name, 1) for name in BENCHMARKS] + \
       [(name + "_b8", name, 8) for name, (_, _, batches, _, _) in BENCHMARKS.items() if 8 in batches]


def card_rates():
    """This card's memory and float16 matmul rates as the floors take them: {"copy": bytes/s of a
    1 GiB copy (read and write counted), "matmul": FLOP/s of an 8192³ product}."""
    src = torch.empty(1 << 29, dtype=torch.float16, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = triton.testing.do_bench(lambda: dst.copy_(src))
    a = torch.randn(8192, 8192, dtype=torch.float16, device="cuda")
    matmul_ms = triton.testing.do_bench(lambda: a @ a)
    return {"copy": 2 * src.numel() * 2 / (copy_ms * 1e-3), "matmul": 2 * 8192 ** 3 / (matmul_ms * 1e-3)}


def floor_us(measured_row, rates, name, b):
    """A row's floor on the run's card: its bytes (each input read once, the output written once)
    over the copy rate or its FLOPs over the matmul rate, whichever is larger; the H100's figure
    for a file without the card's rates."""
    if rates is None or "bytes" not in measured_row:
        return BENCHMARKS[name][4][b]
    return max(measured_row["bytes"] / rates["copy"], measured_row["flops"] / rates["matmul"]) * 1e6


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32),
                ("dtype", DLDataType), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class ContextOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("plugin_paths", C.POINTER(C.c_char_p)),
                ("num_plugin_paths", C.c_size_t), ("search_default_paths", C.c_int32),
                ("cache_dir", C.c_char_p)]


class Yirage:
    def __init__(self, library, plugin):
        self.lib = C.CDLL(library)
        self.lib.yirage_last_error_message.restype = C.c_char_p
        paths = (C.c_char_p * 1)(plugin.encode())
        options = ContextOptions(C.sizeof(ContextOptions), paths, 1, 0, None)
        self.context = C.c_void_p()
        self.check(self.lib.yirage_context_create(C.byref(options), C.byref(self.context)))
        self.device = C.c_void_p()
        self.check(self.lib.yirage_context_get_device(self.context, b"cuda", 0, C.byref(self.device)))

    def check(self, status):
        if status != 0:
            raise RuntimeError(self.lib.yirage_last_error_message().decode())

    def compile(self, path):
        graph, kernel = C.c_void_p(), C.c_void_p()
        self.check(self.lib.yirage_graph_load(path.encode(), C.byref(graph)))
        self.check(self.lib.yirage_compile(graph, self.device, None, C.byref(kernel)))
        self.lib.yirage_graph_release(graph)
        return kernel


def yirage_call(y, kernel, inputs, out, keep):
    """A call of yirage's kernel on PyTorch tensors `inputs` into `out`, without copies (DLTensors
    over their memory) on PyTorch's current stream."""
    ins = (C.POINTER(DLTensor) * len(inputs))(*[C.pointer(dltensor(t, keep)) for t in inputs])
    outs = (C.POINTER(DLTensor) * 1)(C.pointer(dltensor(out, keep)))
    stream = C.c_void_p(torch.cuda.current_stream().cuda_stream)
    return lambda: y.check(y.lib.yirage_kernel_run(kernel, ins, len(inputs), outs, 1, stream))


def dlpack_type(dtype):
    """DLPack's (type code, bits) of a PyTorch dtype yirage takes: kDLFloat 2, kDLBfloat 4."""
    return {torch.float16: (2, 16), torch.bfloat16: (4, 16), torch.float32: (2, 32)}[dtype]


def dltensor(t, keep):
    shape = (C.c_int64 * t.dim())(*t.shape)
    keep.append(shape)
    code, bits = dlpack_type(t.dtype)
    return DLTensor(t.data_ptr(), DLDevice(2, t.device.index or 0), t.dim(), DLDataType(code, bits, 1),
                    shape, None, 0)


def ratio(a, b):
    return f"{a / b:.2f}x" if b > 0 else "n/a"


def l2_flush_buffer():
    """What do_bench zeroes before each call to flush L2 (256 MB); after_flush's `flush`."""
    return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device="cuda")


def after_flush(flush, fn):
    """The median µs of CUDA events around flush.zero_() and fn() (None: the flush alone)."""
    spans = []
    for _ in range(STREAM_CALLS):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        flush.zero_()
        if fn is not None:
            fn()
        end.record()
        spans.append((begin, end))
    torch.cuda.synchronize()
    return statistics.median(b.elapsed_time(e) * 1e3 for b, e in spans)


def rotated(columns, i):
    """`columns` starting from its i-th (mod its length): round i's order of timing."""
    i %= len(columns)
    return list(columns[i:] + columns[:i])


def measure(y, flush, inputs, expected, kernels, fns, round_count):
    """Times yirage's `kernels` ({column: compiled kernel}) and the PyTorch functions `fns`
    ({column: fn}) on `inputs`, in turning rounds: {"errors": {column: [each round's error of a
    yirage kernel]}, "orders": [each round's order of columns], "do_bench": {column: [each
    round's samples]}, "stream": {column: [each round's cost]}}."""
    columns = list(kernels) + list(fns)
    keep = []  # every round's buffers and DLTensors: each round's lie where no earlier one's do
    measured = {"errors": {c: [] for c in kernels}, "orders": [], "do_bench": {c: [] for c in columns},
                "stream": {c: [] for c in columns}}
    for _ in range(round_count):
        placed = [t.clone() for t in inputs]
        keep += placed
        calls, outs = {}, {}
        for column, kernel in kernels.items():
            out = torch.full(expected.shape, float("nan"), device="cuda", dtype=inputs[0].dtype)
            keep.append(out)
            outs[column] = out
            calls[column] = yirage_call(y, kernel, placed, out, keep)
            calls[column]()
            torch.cuda.synchronize()
            measured["errors"][column].append(((out.float() - expected).norm() / expected.norm()).item())
        for column, fn in fns.items():
            calls[column] = lambda p=placed, fn=fn: fn(*p)
        order = rotated(columns, len(measured["orders"]))
        measured["orders"].append(order)
        for column in order:
            samples = triton.testing.do_bench(calls[column], return_mode="all")
            measured["do_bench"][column].append([t * 1e3 for t in samples])
        # The timed calls replayed a recording of yirage's kernels where it made one (the same
        # buffers, call after call): their last results are checked too.
        for column, out in outs.items():
            out.fill_(float("nan"))
            calls[column]()
            torch.cuda.synchronize()
            error = ((out.float() - expected).norm() / expected.norm()).item()
            if not error <= measured["errors"][column][-1]:  # larger, or NaN: unwritten
                measured["errors"][column][-1] = error
        flush_alone = after_flush(flush, None)
        for column in order:
            measured["stream"][column].append(after_flush(flush, calls[column]) - flush_alone)
    return measured


def measure_row(y, flush, name, b, path, round_count):
    """One row in this process: measure()'s figures for yirage, eager, compile and cudagraphs, with
    its bytes and FLOPs (floor_us), or {"failed": why}."""
    shapes, fn, _, flops, _ = BENCHMARKS[name]
    if not os.path.exists(path):
        return {"failed": f"no superoptimized graph: {path}"}
    inputs = [torch.empty(s, device="cuda", dtype=torch.float16).uniform_(-1, 1) for s in shapes(b)]
    expected = fn(*[t.float() for t in inputs])
    try:
        kernel = y.compile(path)
    except RuntimeError as e:
        return {"failed": f"compile failed: {e}"}
    compiled = torch.compile(fn)
    compiled(*inputs)
    graphed = torch.compile(fn, mode="reduce-overhead")
    for _ in range(3):  # recorded at the second or third call
        graphed(*inputs)
    measured = measure(y, flush, inputs, expected, {"yirage": kernel},
                       {"eager": fn, "compile": compiled, "cudagraphs": graphed}, round_count)
    y.lib.yirage_kernel_release(kernel)
    measured["bytes"] = sum(t.numel() * t.element_size() for t in inputs) + expected.numel() * inputs[0].element_size()
    measured["flops"] = flops(b)
    return measured


def place_medians(measured, column):
    """"1st / 2nd / 3rd": the median of all do_bench samples `column` took in each place of its
    rounds' orders, over the processes' measurements of one row ("—" for a place it never took,
    as in files written before the order turned)."""
    places = [[] for _ in COLUMNS]
    for m in measured:
        for r, order in enumerate(m.get("orders", [])):
            places[order.index(column)] += m["do_bench"][column][r]
    return " / ".join(f"{statistics.median(p):.2f}" if p else "—" for p in places)


def report(runs):
    """The three tables from one or more processes' measurements, pooled: each do_bench figure is
    the median of all samples of all rounds of all processes, each in-stream figure the median of
    all their rounds' costs; the ranges are over the rounds. A column a file lacks (written before
    the column was) shows as "—"."""
    first = runs[0]
    print(f"device: {first['device']}, torch {first['torch']}, triton {first['triton']}\n")
    processes, round_count = len(runs), first["rounds"]
    print(f"{processes} process{'es' if processes > 1 else ''} × {round_count} round{'s' if round_count > 1 else ''}; "
          f"each time is the median of all their do_bench samples\n")
    rates = None
    if all("rates" in run for run in runs):
        rates = {k: statistics.median(run["rates"][k] for run in runs) for k in ("copy", "matmul")}
        print(f"Floors on this card: the bytes over its measured copy rate, {rates['copy'] / 1e12:.2f} TB/s, or the "
              f"FLOPs over its float16 matmul rate, {rates['matmul'] / 1e12:.0f} TFLOP/s, whichever is larger; the "
              f"goal max(2 × floor, floor + 5 µs)\n")
    else:
        print("Floors: an H100's (../shared/benchmarks/README.md; these files do not have their card's rates)\n")
    print("| bench | b | yirage (µs) | PyTorch eager (µs) | torch.compile (µs) | torch.compile reduce-overhead (µs) | "
          "floor (µs) | goal (µs) | vs eager | vs compile | vs reduce-overhead | rel. error vs fp32 | "
          "rounds' range: yirage / eager / compile / reduce-overhead |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    in_stream, by_place = [], []  # the second and third tables' lines
    for row, name, b in ROWS:
        measured = [run["rows"][row] for run in runs if row in run["rows"]]
        if not measured:
            continue
        failed = [m["failed"] for m in measured if "failed" in m]
        if failed:
            print(f"| {name} | {b} | ({failed[0]}) |||||||||||")
            continue
        present = [c for c in COLUMNS if all(c in m["do_bench"] for m in measured)]
        rounds = {c: [r for m in measured for r in m["do_bench"][c]] for c in present}
        costs = {c: [r for m in measured for r in m["stream"][c]] for c in present}
        t = {c: statistics.median(x for r in rounds[c] for x in r) for c in present}
        s = {c: statistics.median(costs[c]) for c in present}

        def cell(figures, c, form="{:.1f}"):
            return form.format(figures[c]) if c in figures else "—"

        def versus(figures, c):
            return ratio(figures[c], figures["yirage"]) if c in figures else "—"

        in_stream.append(f"| {name} | {b} | " + " | ".join(cell(s, c) for c in COLUMNS) + " | " +
                         " | ".join(versus(s, c) for c in COLUMNS[1:]) + " | " +
                         " / ".join(f"{min(costs[c]):.1f}–{max(costs[c]):.1f}" if c in costs else "—"
                                    for c in COLUMNS) + " |")
        by_place.append(f"| {name} | {b} | " +
                        " | ".join(place_medians(measured, c) if c in present else "—" for c in COLUMNS) + " |")
        spread = " / ".join(f"{min(statistics.median(r) for r in rounds[c]):.1f}–"
                            f"{max(statistics.median(r) for r in rounds[c]):.1f}" if c in rounds else "—"
                            for c in COLUMNS)
        floor = floor_us(measured[0], rates, name, b)
        goal = max(2 * floor, floor + 5)
        error = max(e for m in measured for e in m["errors"]["yirage"])
        print(f"| {name} | {b} | " + " | ".join(cell(t, c) for c in COLUMNS) + f" | {floor:.1f} | {goal:.1f} | " +
              " | ".join(versus(t, c) for c in COLUMNS[1:]) + f" | {error:.2e} | {spread} |")
    print(f"\nIn a stream, after another kernel: the flush and the call less the flush alone, "
          f"µs (median of {STREAM_CALLS} calls a round, median of the rounds)\n")
    print("| bench | b | yirage | PyTorch eager | torch.compile | reduce-overhead | vs eager | vs compile | "
          "vs reduce-overhead | rounds' range: yirage / eager / compile / reduce-overhead |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(in_stream))
    print("\ndo_bench by the column's place in its round's order (µs, the median of all samples a "
          "column took in that place: what ran just before moves a figure)\n")
    print("| bench | b | yirage: 1st / 2nd / 3rd / 4th | PyTorch eager | torch.compile | reduce-overhead |")
    print("|---|---|---|---|---|---|")
    print("\n".join(by_place))


def main():
    if sys.argv[1:2] == ["--report"]:
        runs = []
        for path in sys.argv[2:]:
            with open(path) as f:
                runs.append(json.load(f))
        if not runs:
            sys.exit("bench.py --report: name at least one file that YIRAGE_BENCH_SAMPLES wrote")
        report(runs)
        return
    round_count = os.environ.get("YIRAGE_BENCH_ROUNDS", "8")
    if not round_count.isdigit() or int(round_count) < 1:
        sys.exit(f"bench.py: YIRAGE_BENCH_ROUNDS must be a whole number of at least 1, not {round_count!r}")
    round_count = int(round_count)
    if len(sys.argv) < 4:
        sys.exit(__doc__.split("\n\n")[1])
    library, plugin, best_dir = sys.argv[1:4]
    wanted = sys.argv[4:]
    unknown = set(wanted) - {row for row, _, _ in ROWS}
    if unknown:
        sys.exit(f"bench.py: no benchmark row named {', '.join(sorted(unknown))}")
    y = Yirage(library, plugin)
    torch.manual_seed(0)
    run = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
           "rounds": round_count, "rates": card_rates(), "rows": {}}
    flush = l2_flush_buffer()
    for row, name, b in ROWS:
        if not wanted or row in wanted:
            path = os.path.join(best_dir, row + ".yrg")
            run["rows"][row] = measure_row(y, flush, name, b, path, round_count)
    if os.environ.get("YIRAGE_BENCH_SAMPLES"):
        with open(os.environ["YIRAGE_BENCH_SAMPLES"], "w") as f:
            json.dump(run, f)
    report([run])


if __name__ == "__main__":
    main()
